"""What user objects and odd strings can do to the helper in a real kernel: a
``SystemExit`` raised by an object's method while the helper reads it, and
names or request ids holding lone surrogates, which the kernel's packer cannot
encode. The kernel stays up, the user's output gets nothing of ours, and every
request gets its answer."""

from __future__ import annotations

import pytest
from comm_fuzz import ascii_json_packer
from kernel_harness import live_helper_kernel

pytestmark = pytest.mark.kernel

# An object whose size cannot be read: its __sizeof__ exits, as a careless
# library's might. Armed after its creation, so that the cell itself runs.
EXITING = """
class Exiting(bytearray):
    armed = False
    def __sizeof__(self):
        if Exiting.armed:
            raise SystemExit(7)
        return 10**6
eb = Exiting(100_000)
Exiting.armed = True
"""


def test_an_exit_from_a_user_objects_method_leaves_the_kernel_alive(bootstrap: str) -> None:
    with live_helper_kernel(bootstrap, {"interval_s": 1.0}) as (kernel, comm_id):
        assert kernel.execute(EXITING)["status"] == "ok"
        answer = kernel.request(comm_id, {"type": "inspect", "request_id": "exit-inspect"}, timeout=60)
        assert answer["type"] == "reply" or answer["code"] == "internal", answer
        assert kernel.km.is_alive()
        # The out-of-memory diagnosis after a cell sizes the namespace too.
        failed = kernel.execute("raise MemoryError('Unable to allocate 8.00 GiB for an array')", timeout=60)
        assert failed["status"] == "error" and failed["ename"] == "MemoryError"
        assert kernel.execute("1 + 1", timeout=30)["status"] == "ok"
        assert kernel.km.is_alive()
        kernel.pump(0.5)
        # The user's output: the cell's own MemoryError and 1 + 1, nothing of the helper's.
        outputs = kernel.output_messages()
        assert [(m["msg_type"], m["content"].get("ename")) for m in outputs] == [
            ("error", "MemoryError"),
            ("execute_result", None),
        ], outputs
        assert not any("jupyterlab_vram_helper" in str(m["content"]) for m in outputs)


def test_lone_surrogates_in_names_and_request_ids_still_get_replies(bootstrap: str) -> None:
    with live_helper_kernel(bootstrap, {"interval_s": 1.0}) as (kernel, comm_id):
        # JSON escapes, as a browser sends a string with a lone surrogate
        # (the harness's own packer would refuse to send it at all).
        kernel.kc.session.pack = ascii_json_packer
        assert kernel.execute("globals()['\\ud800'] = bytearray(4 << 20); kept = bytearray(1 << 20)")["status"] == "ok"
        listing = kernel.request(comm_id, {"type": "inspect", "request_id": "surrogate-inspect"}, timeout=60)
        assert listing["type"] == "reply", listing
        names = [entry["name"] for entry in listing["result"]["entries"]]
        assert "\ufffd" in names and "kept" in names
        # The name as shown names nothing: refused, and nothing else goes.
        answer = kernel.request(
            comm_id,
            {
                "type": "delete",
                "request_id": "surrogate-delete",
                "listing_id": listing["result"]["listing_id"],
                "names": ["\ufffd", "\ud800x"],
                "hidden": [],
                "free": [],
            },
            timeout=60,
        )
        assert answer["type"] == "reply", answer
        assert answer["result"]["deleted"] == []
        assert sorted(r["name"] for r in answer["result"]["refused"]) == ["\ufffd", "\ufffdx"]
        assert kernel.eval("sorted(k for k in globals() if k in ('\\ud800', 'kept'))") == ["kept", "\ud800"]
        # A request id no packer can send back as it is: answered under its replacement.
        kernel.send_comm(comm_id, {"type": "ping", "request_id": "\udfff"})
        kernel.wait_for(comm_id, lambda d: d.get("type") == "reply" and d.get("request_id") == "\ufffd", timeout=30)
        assert kernel.km.is_alive()
        assert kernel.output_messages() == []
