"""Autograd graphs kept alive by tensors the user holds, and the memory they keep.

A tensor computed with grad enabled from tensors that require grad (a loss, an
activation) holds its ``grad_fn``, and through it every node of its graph and
every tensor those nodes saved for backward: a 4-byte loss kept in a list keeps
its iteration's activations alive until ``backward()`` frees them (or forever,
in an evaluation loop that never calls it).

Saved tensors are never *unpacked*: unpacking runs saved-tensor hooks, which
may copy memory back to the GPU (``save_on_cpu``) or re-run the forward pass
(non-reentrant checkpointing). PyTorch's ``SavedTensor`` (a node's
``_raw_saved_*`` attribute) shows what it stores through ``data`` and its hook
through ``unpack_hook``, without calling either: the stored tensor itself when
there is no hook, else whatever the pack hook returned (a CPU copy, a
checkpoint's handle). Only tensors found there are counted. With a torch that
lacks ``SavedTensor.data``, only the graph's size in nodes is known, and
``bytes`` is None.

Nothing here imports torch, and nothing is kept after a walk, which returns
only numbers and storage keys, so no user object stays alive because of it.
"""

from __future__ import annotations

import weakref
from typing import Any

from ..sampling.safe_reads import container_items
from ..sampling.torch_reads import TorchReads, current
from .storages import Storages, tensor_storage

# How many grad_fn roots are kept per holder while it is sized, and how many
# autograd nodes are looked at per holder, so that a huge graph cannot stall the kernel.
MAX_GRAPH_ROOTS = 1000
MAX_GRAPH_NODES = 20_000
SAVED_PREFIX = "_raw_saved_"

# Maps a node's type to the names of its saved-tensor attributes, because ``dir`` costs
# microseconds per node. The keys are weak because a custom autograd Function's node class
# is the user's, and the user may redefine it.
_saved_attributes: weakref.WeakKeyDictionary[type, tuple[str, ...]] = weakref.WeakKeyDictionary()


def graph_root(t: Any, torch: TorchReads | None = None) -> Any:
    """Return the ``grad_fn`` of a tensor that keeps an autograd graph alive, else None.

    Parameters, which are leaves, have no ``grad_fn``. The attributes are read
    by TensorBase's getters with torch function handling off, so that a
    subclass's ``__torch_function__`` never runs. A caller that is already
    inside ``torch.off()`` passes its ``torch``.
    """
    if torch is None:
        torch = current()
        if torch is None:
            return None
        with torch.off():
            return graph_root(t, torch)
    try:
        if torch.get(t, "requires_grad"):
            return torch.get(t, "grad_fn")
    except Exception:
        pass
    return None


class GraphWalk:
    """What the graphs reachable from some roots amount to."""

    __slots__ = ("tensors", "nodes", "truncated", "storages", "readable", "packed_by_hooks")

    def __init__(self, tensors: int):
        # The number of held tensors that keep a graph alive.
        self.tensors = tensors
        # The number of distinct autograd nodes reached.
        self.nodes = 0
        # True when the walk stopped at MAX_GRAPH_NODES.
        self.truncated = False
        # The storages that the graph's saved tensors, and its leaves' AccumulateGrad, refer to.
        self.storages: Storages = {}
        # Whether this torch shows saved tensors without unpacking them.
        self.readable = True
        # The saved tensors that a hook packed; they are counted as what the pack hook returned.
        self.packed_by_hooks = 0

    def summary(self, only_graph: Storages) -> dict[str, Any]:
        """Return the protocol's ``graph_holding``; ``only_graph`` holds the storages that nothing else named holds."""
        return {
            "tensors": self.tensors,
            "graph_nodes": self.nodes,
            "truncated": self.truncated,
            "bytes": sum(only_graph.values()) if self.readable else None,
            "packed_by_hooks": self.packed_by_hooks,
        }


def walk_graphs(roots: list[Any], tensors: int) -> GraphWalk:
    """Walk the distinct nodes reachable from ``roots`` through ``next_functions``.

    The walk is bounded by :data:`MAX_GRAPH_NODES`. It clears ``roots``, the
    caller's list, so that no node outlives the walk.
    """
    walk = GraphWalk(tensors)
    todo = list(roots)
    roots.clear()
    seen: set = set()
    # Every node walked stays referenced until the walk ends. A node's Python object
    # lives only while something refers to it (PyTorch 2.11 makes one per
    # ``next_functions`` read and frees it afterwards), and a freed node's id goes to
    # the next node made, which ``seen`` would then skip together with its whole
    # subgraph. This was observed on an H100, where a 4-iteration loss history was
    # walked as 5 of its 32 nodes and its activations went uncounted.
    walked: list[Any] = []
    node: Any = None
    try:
        while todo:
            node = todo.pop()
            if node is None or id(node) in seen:
                continue
            if len(seen) >= MAX_GRAPH_NODES:
                walk.truncated = True
                break
            seen.add(id(node))
            walked.append(node)
            _saved_storages(node, walk)
            try:
                todo.extend(n for n, _ in node.next_functions)
            except Exception:
                pass
    finally:
        todo.clear()
        walked.clear()
        node = None
    walk.nodes = len(seen)
    return walk


def _saved_storages(node: Any, walk: GraphWalk) -> None:
    """Add the storages that ``node`` keeps alive to ``walk``, never unpacking them (see the module docstring)."""
    kind = type(node)
    names = _saved_attributes.get(kind)
    if names is None:
        try:
            names = tuple(a for a in dir(node) if a.startswith(SAVED_PREFIX))
        except Exception:
            names = ()
        try:
            _saved_attributes[kind] = names
        except TypeError:
            # A type without weak references cannot be cached, so it is looked up again next time.
            pass
    try:
        # An AccumulateGrad node refers to the leaf, a parameter, that the graph accumulates into.
        leaf = getattr(node, "variable", None)
        if leaf is not None:
            tensor_storage(leaf, walk.storages)
    except Exception:
        pass
    for name in names:
        try:
            saved = getattr(node, name)
        except Exception:
            continue  # The saved tensor was freed by backward(), or it cannot be read.
        for one in saved if isinstance(saved, (list, tuple)) else (saved,):
            _saved_tensor(one, walk)


def _saved_tensor(saved: Any, walk: GraphWalk) -> None:
    try:
        hook = saved.unpack_hook
        data = saved.data
    except AttributeError:
        walk.readable = False  # This torch is older than SavedTensor.data.
        return
    except Exception:
        return  # The saved tensor was freed by backward(), so it holds nothing.
    if hook is not None:
        walk.packed_by_hooks += 1
    if data is None:
        return
    # What a pack hook returned may be the user's object, so it is read by its type with
    # the builtins' own code; hasattr() or iterating would run its __getattr__ or __iter__.
    values = container_items(data, 64) if issubclass(type(data), (list, tuple)) else (data,)
    for value in values:
        tensor_storage(value, walk.storages)  # Anything but a tensor adds nothing.


def only_in_graph(walk: GraphWalk, held: set) -> Storages:
    """Return the storages of ``walk`` that are not in ``held``, the storages that names hold directly."""
    return {key: n for key, n in walk.storages.items() if key not in held}
