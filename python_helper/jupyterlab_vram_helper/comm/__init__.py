"""The helper's side of the talk with the frontend: the comm, its requests, and the messages sent off the main thread.

The helper's one way in and out of the kernel is the ``jupyterlab-vram`` comm
(docs/protocol.md). This subpackage registers its target and answers
requests (channel.py), introduces the helper (hello.py), keeps text the
kernel's messages cannot carry from dropping a whole message
(unsendable_text.py), and sends per-cell records from a thread of its own so
that the cell hooks stay cheap (background_sender.py). The wire format itself
(protocol.py) sits in the package root, because every other part builds
messages too. Nothing is imported here: the bootstrap pays for a module only
when something uses it.
"""
