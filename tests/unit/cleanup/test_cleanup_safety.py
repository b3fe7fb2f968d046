"""Cleanup against the objects and namespaces users really have: objects that
raise when looked at, names a %run script shares, buffers made again at the
same address, and memory whose size is not its element count."""

from __future__ import annotations

import types
import weakref
from typing import Any

import pytest
from cleanup_harness import FakeShell, Figures

from jupyterlab_vram_helper.cleanup.cleanup import Cleanup
from jupyterlab_vram_helper.cleanup.holders import Classes, Found, Sizer

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
pytestmark = pytest.mark.usefixtures("real_torch")


def size(obj: Any) -> Found:
    found = Found()
    Sizer(Classes()).walk(obj, found, 2, objects=True)
    return found


def entry(result: Any, name: str) -> Any:
    [found] = [e for e in result["entries"] if e["name"] == name]
    return found


class LazyProxy:
    """A lazy proxy (as in lazy-loading libraries): asking its class raises until loaded."""

    __slots__ = ("target", "__weakref__")

    def __init__(self, target: Any) -> None:
        self.target = target

    def __getattribute__(self, name: str) -> Any:
        if name == "__class__":
            raise RuntimeError("not loaded yet")
        return object.__getattribute__(self, name)


class RaisingHashMeta(type):
    def __hash__(cls) -> int:
        raise RuntimeError("no hash for you")


# --- objects that raise when looked at ------------------------------------------------


def test_a_proxy_that_raises_on_class_lookup_does_not_turn_a_done_delete_into_an_error(
    cleanup: Cleanup, shell: FakeShell
) -> None:
    big = np.zeros(100_000)
    shell.user_ns["big"] = big
    shell.user_ns["holder"] = LazyProxy(big)  # keeps big alive after the delete
    probe = weakref.ref(shell.user_ns["holder"])
    del big
    result = cleanup.inspect()
    out = cleanup.delete(result["listing_id"], ["big"], [], [])
    assert out["deleted"] == ["big"] and "big" not in shell.user_ns
    [alive] = out["still_alive"]
    assert alive["name"] == "big" and "still referenced" in alive["reason"]
    assert probe() is not None  # the proxy itself is untouched


def test_a_proxy_in_the_output_cache_leaves_inspect_working(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns["x"] = torch.ones(1000)
    shell.displayhook.show(1, LazyProxy(shell.user_ns["x"]))
    result = cleanup.inspect()
    assert entry(result, "x")["total_bytes"] == 4000


def test_a_class_whose_metaclass_cannot_hash_is_skipped_and_the_rest_listed(cleanup: Cleanup, shell: FakeShell) -> None:
    Odd = RaisingHashMeta("Odd", (), {})
    shell.user_ns["odd"] = Odd()
    shell.user_ns["big"] = np.zeros(100_000)
    result = cleanup.inspect()
    assert [e["name"] for e in result["entries"]] == ["big"]


# --- names that are not the user's to lose ------------------------------------------


def test_deleting_a_name_leaves_the_other_names_of_a_run_script(cleanup: Cleanup, shell: FakeShell) -> None:
    """%run keeps the script's module (IPython's _main_mod_cache) for its functions' globals."""
    script: Any = types.ModuleType("__main__")  # the script's names are set below
    script.model = script.backbone = np.zeros(100_000)
    exec("def train():\n    return backbone.sum()", script.__dict__)  # noqa: S102 -- the script's own function
    shell._main_mod_cache = {"script.py": script}  # type: ignore[attr-defined]  # IPython's, not the fake's
    shell.user_ns.update(model=script.model, backbone=script.backbone, train=script.train)
    result = cleanup.inspect()
    out = cleanup.delete(result["listing_id"], ["model"], [], [])
    assert out["deleted"] == ["model"]
    assert "model" not in shell.user_ns and "model" not in script.__dict__
    assert script.backbone is shell.user_ns["backbone"]  # not confirmed: kept
    assert shell.user_ns["train"]() == 0.0
    [alive] = out["still_alive"]
    assert "backbone" in alive["reason"]


def test_a_bytearray_made_again_by_a_later_cell_is_not_deleted(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns["buf"] = bytearray(1 << 20)
    result = cleanup.inspect()
    listed_id = id(shell.user_ns["buf"])
    # A cell runs "buf = bytearray(...)" again; CPython often hands it the old address.
    shell.execution_count += 1
    out = cleanup.delete(result["listing_id"], ["buf"], [], [])
    assert id(shell.user_ns["buf"]) == listed_id  # the same address still...
    assert out["deleted"] == [] and out["refused"] == [{"name": "buf", "reason": "rebound since the listing"}]


def test_a_bytearray_is_deleted_while_no_cell_has_run(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns["buf"] = bytearray(1 << 20)
    result = cleanup.inspect()
    out = cleanup.delete(result["listing_id"], ["buf"], [], [])
    assert out["deleted"] == ["buf"]


def test_a_list_of_tensors_is_still_deleted_after_a_cell_ran(cleanup: Cleanup, shell: FakeShell) -> None:
    """Its live leaves tell it apart: the execution count does not matter there."""
    shell.user_ns["batch"] = [torch.ones(1000)]
    result = cleanup.inspect()
    shell.execution_count += 1
    out = cleanup.delete(result["listing_id"], ["batch"], [], [])
    assert out["deleted"] == ["batch"]


# --- sizes that are not element counts ------------------------------------------------


def test_a_sliding_window_view_counts_its_array_not_its_virtual_size() -> None:
    x = np.zeros(100_000)
    windows = np.lib.stride_tricks.sliding_window_view(x, 1000)
    assert windows.nbytes > 700 * x.nbytes  # what NumPy says of the view
    assert size(windows).storages == size(x).storages == {next(iter(size(x).storages)): x.nbytes}
    strided = np.lib.stride_tricks.as_strided(x, shape=(100_000, 100), strides=(8, 8))
    assert size(strided).storages == size(x).storages


def test_an_array_over_bytes_shares_the_bytes_storage() -> None:
    raw = bytes(1 << 20)
    image = np.frombuffer(raw, np.uint8)
    assert size(image).storages == size(raw).storages
    assert size([raw, image]).total == size(raw).total


# torch says, at the first sparse CSR tensor of a process, that the support is in beta.
@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state:UserWarning")
def test_sparse_tensors_count_what_they_store() -> None:
    indices = torch.tensor([[0, 1], [1, 0]])
    values = torch.tensor([1.0, 2.0])
    # check_invariants given: torch warns where it is left to its default.
    coo = torch.sparse_coo_tensor(indices, values, (100_000, 100_000), check_invariants=True)
    assert size(coo).total == 2 * 2 * 8 + 2 * 4  # indices and values, not 40 GB dense
    csr = coo.to_sparse_csr()
    expected = sum(p.untyped_storage().nbytes() for p in (csr.crow_indices(), csr.col_indices(), csr.values()))
    assert size(csr).total == expected
    assert size(csr).total < 1 << 20


def test_a_loss_does_not_claim_the_parameters_only_its_optimizer_holds(cleanup: Cleanup, shell: FakeShell) -> None:
    def build() -> Any:
        net = torch.nn.Linear(1000, 1000)
        return net, torch.optim.SGD(net.parameters(), lr=0.1)

    net, opt = build()
    forward = net.forward
    shell.user_ns.update(opt=opt, forward=forward, loss=forward(torch.randn(1, 1000)).sum())
    del net, forward
    result = cleanup.inspect()
    loss = entry(result, "loss")
    weight_bytes = 1000 * 1000 * 4
    # The graph saved the input (4 KB); the weight is the optimizer's parameter, not the loss's alone.
    assert loss["total_bytes"] < weight_bytes


# --- where users keep tensors -----------------------------------------------------------


def test_a_deque_history_and_slotted_objects_are_listed(cleanup: Cleanup, shell: FakeShell) -> None:
    import collections
    import dataclasses

    @dataclasses.dataclass(slots=True)
    class TrainState:
        weights: Any
        _unset: Any = None

    class Private:
        __slots__ = ("__buffer",)

        def __init__(self) -> None:
            self.__buffer = torch.ones(250)

    shell.user_ns.update(
        history=collections.deque([torch.ones(1000) for _ in range(3)], maxlen=100),
        state=TrainState(torch.ones(500)),
        private=Private(),
    )
    result = cleanup.inspect()
    assert entry(result, "history")["total_bytes"] == 12_000
    assert entry(result, "history")["kind"] == "container"
    assert entry(result, "state")["total_bytes"] == 2_000
    assert entry(result, "private")["total_bytes"] == 1_000


# --- bytes, which take no weakref ---------------------------------------------------------


def test_deleted_bytes_that_something_else_holds_are_not_promised(cleanup: Cleanup, shell: FakeShell) -> None:
    def closure_over(value: Any) -> Any:
        return lambda: value

    raw = bytes(1 << 20)
    keep = closure_over(raw)  # a closure holds it
    shell.user_ns.update(raw=raw, blob=bytearray(1 << 20), image=np.frombuffer(bytes(1 << 20), np.uint8))
    shell.user_ns["image_bytes"] = shell.user_ns["image"].base
    result = cleanup.inspect()
    out = cleanup.delete(result["listing_id"], ["raw", "blob", "image_bytes"], [], [])
    assert out["deleted"] == ["raw", "blob", "image_bytes"]
    alive = {a["name"]: a["reason"] for a in out["still_alive"]}
    assert set(alive) == {"raw", "image_bytes"}  # blob was held by its name alone
    assert "closure" in alive["raw"], alive
    assert "KeptUntilChecked" not in " ".join(alive.values())
    del raw
    assert keep() is not None


def test_deleted_bytes_are_let_go_before_the_reply() -> None:
    """What the probe kept is released: nothing of the deleted object outlives the request."""
    freed: list = []

    class Blob(bytearray):
        __slots__ = ()  # no weakref, as bytearray itself

        def __del__(self) -> None:
            freed.append(len(self))

    shell = FakeShell()
    cleanup = Cleanup(source=None, shell=lambda: shell, read_figures=Figures())
    shell.user_ns["blob"] = Blob(1 << 20)
    result = cleanup.inspect()
    out = cleanup.delete(result["listing_id"], ["blob"], [], [])
    assert out["deleted"] == ["blob"] and out["still_alive"] == []
    assert freed == [1 << 20]


def test_hidden_holders_are_not_cleared_once_a_cell_ran_since_the_listing(cleanup: Cleanup, shell: FakeShell) -> None:
    """Out[] and the last traceback then hold what later cells put there, not what was confirmed."""
    shell.user_ns["x"] = torch.ones(1000)
    shell.displayhook.show(1, shell.user_ns["x"])
    result = cleanup.inspect()
    shell.execution_count += 1
    shell.displayhook.show(2, torch.ones(10))  # a later cell's output
    out = cleanup.delete(result["listing_id"], [], ["output_cache"], [])
    assert out["cleared"] == []
    assert out["refused"] == [{"name": "output_cache", "reason": "cells ran since the listing", "hidden": True}]
    assert 2 in shell.user_ns["_oh"]
