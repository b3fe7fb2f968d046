"""One-click cleanup, which answers the ``inspect``, ``delete`` and ``free_memory`` requests.

cleanup.py answers the requests; the rest finds what holds memory in the
user's namespace without running the user's code: tensors, modules,
optimizers and containers of them (holders.py, holder_summaries.py), the
storages they share (storages.py), the autograd graphs they keep
(autograd_graph.py), the references IPython keeps that the user never named
(hidden_references.py), and, for a delete, the names listed before
(listings.py), their removal (namespace_surgery.py) and what still holds an
object after it (referrers.py). The runtime loads this subpackage at the
first request, not at the bootstrap; nothing is imported by this file.
"""
