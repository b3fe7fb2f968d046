"""The memory an autograd graph keeps alive, read from real (CPU) torch graphs without unpacking them."""

from __future__ import annotations

import weakref
from typing import Any

import pytest
from fakes import known

from jupyterlab_vram_helper.cleanup import autograd_graph
from jupyterlab_vram_helper.cleanup.holders import Classes, Found, Sizer

torch: Any = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("real_torch")
nn = torch.nn

F32 = 4


def walk(held: Any) -> autograd_graph.GraphWalk:
    found = Found()
    Sizer(Classes()).walk(held, found, 2)
    return autograd_graph.walk_graphs(found.graph_roots, found.graph_tensors)


def direct_storages(*objects: Any) -> set:
    found = Found()
    for obj in objects:
        Sizer(Classes()).walk(obj, found, 2)
    return set(found.storages)


def test_a_loss_history_keeps_every_iterations_activations() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1))
    losses = []
    for _ in range(5):
        x = torch.randn(512, 64)
        loss = model(x).pow(2).mean()
        losses.append(loss)
    graph = walk(losses)
    assert graph.readable and graph.tensors == 5 and graph.packed_by_hooks == 0
    only = autograd_graph.only_in_graph(graph, direct_storages(model, x))
    # Saved per iteration: the ReLU's output (512x256), the model's output for
    # pow (512x1) and the input for the first addmm (512x64), except the last
    # input, which the name `x` holds. The weights are the model's.
    expected = 5 * (512 * 256 + 512) * F32 + 4 * 512 * 64 * F32
    assert sum(only.values()) == expected
    summary = graph.summary(only)
    assert summary == {
        "tensors": 5,
        "graph_nodes": graph.nodes,
        "truncated": False,
        "bytes": expected,
        "packed_by_hooks": 0,
    }


def test_after_backward_the_graph_holds_nodes_but_no_saved_tensors() -> None:
    model = nn.Linear(32, 32)
    loss = model(torch.randn(128, 32)).relu().sum()
    loss.backward()  # frees what the graph saved
    graph = walk(loss)
    assert graph.nodes >= 3
    assert sum(autograd_graph.only_in_graph(graph, direct_storages(model)).values()) == 0


def test_a_custom_functions_saved_tensors_count() -> None:
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            kept = a * 3
            ctx.save_for_backward(kept)
            return a * 2

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2

    leaf = torch.randn(1000, requires_grad=True)
    out = Double.apply(leaf)
    only = autograd_graph.only_in_graph(walk(out), direct_storages(leaf))
    assert sum(only.values()) == 1000 * F32


def test_hooks_are_never_called_and_what_they_packed_counts() -> None:
    calls: list[str] = []

    def pack(t: Any) -> Any:
        calls.append("pack")
        return ("packed", t.clone())

    def unpack(packed: Any) -> Any:
        calls.append("unpack")
        return packed[1]

    leaf = torch.randn(256, 256, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = (leaf * leaf).sum()
    packs = calls.count("pack")
    graph = walk(out)
    assert calls.count("unpack") == 0 and calls.count("pack") == packs
    assert graph.packed_by_hooks == packs >= 1
    # each pack made a copy of the 256x256 input: the graph keeps those copies
    only = autograd_graph.only_in_graph(graph, direct_storages(leaf))
    assert sum(only.values()) == packs * 256 * 256 * F32


def test_a_checkpointed_forward_is_not_run_again() -> None:
    from torch.utils.checkpoint import checkpoint

    runs: list[int] = []

    def block(a: Any) -> Any:
        runs.append(1)
        return (a * a).relu()

    leaf = torch.randn(64, 64, requires_grad=True)
    out = checkpoint(block, leaf, use_reentrant=False).sum()
    assert len(runs) == 1
    graph = walk(out)
    assert len(runs) == 1  # unpacking would have recomputed the block
    assert graph.packed_by_hooks >= 1


def test_a_torch_without_saved_tensor_data_gives_no_bytes() -> None:
    class OldSavedTensor:  # torch before SavedTensor.data: only unpacking would tell
        pass

    class Node:
        next_functions = ()
        _raw_saved_self = OldSavedTensor()

    graph = autograd_graph.walk_graphs([Node()], 1)
    assert graph.nodes == 1 and graph.readable is False
    assert graph.summary({})["bytes"] is None


def test_the_walk_keeps_no_node_and_stops_at_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(autograd_graph, "MAX_GRAPH_NODES", 10)
    x = torch.randn(4, requires_grad=True)
    y = x
    for _ in range(50):
        y = y * 1.5
    roots = [y.grad_fn]
    graph = autograd_graph.walk_graphs(roots, 1)
    assert roots == [] and graph.nodes == 10 and graph.truncated


def test_nodes_whose_python_objects_come_and_go_stay_alive_until_the_walk_ends() -> None:
    """PyTorch 2.11 makes a node's Python object when ``next_functions`` is read
    and frees it when nothing refers to it; the next one made can take its
    memory, so its ``id``, and a walk that had let it go would skip that node
    as seen (on an H100: 5 of a loss history's 32 nodes walked). So every
    node walked stays referenced until the walk ends, and no longer."""

    class Saved:
        unpack_hook = None

        def __init__(self, tensor: Any):
            self.data = tensor

    class CppNode:  # what outlives the Python objects: the graph itself
        def __init__(self, saved: Any, parent: Any):
            self.saved, self.parent = saved, parent
            self.python_object: Any = None  # a weak reference, as PyTorch keeps

    made: list[Any] = []  # weak references to every Python object made
    freed_mid_walk: list[int] = []

    class Node:
        def __init__(self, cpp: CppNode):
            self.cpp = cpp
            self._raw_saved_self = Saved(cpp.saved)

        @property
        def next_functions(self) -> tuple:
            freed_mid_walk.extend(k for k, ref in enumerate(made) if ref() is None)
            parent = self.cpp.parent
            return () if parent is None else ((python_object(parent), 0),)

    def python_object(cpp: CppNode) -> Node:
        existing = cpp.python_object() if cpp.python_object is not None else None
        if existing is None:
            existing = Node(cpp)
            cpp.python_object = weakref.ref(existing)
            made.append(cpp.python_object)
        return existing

    chains, length = 4, 6
    tensors = [torch.ones(16 * (k + 1)) for k in range(chains * length)]
    cpp_roots: list[CppNode] = []
    for c in range(chains):
        cpp: CppNode | None = None
        for k in range(length):
            cpp = CppNode(tensors[c * length + k], cpp)
        cpp_roots.append(known(cpp))
    graph = autograd_graph.walk_graphs([python_object(cpp) for cpp in cpp_roots], chains)
    assert freed_mid_walk == []
    assert graph.nodes == chains * length
    assert sum(graph.storages.values()) == sum(t.untyped_storage().nbytes() for t in tensors)
    assert len(made) == chains * length and all(ref() is None for ref in made)  # none kept after
