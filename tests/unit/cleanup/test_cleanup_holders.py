"""Cleanup: memory the listing must not miss or promise twice, and deletes
that partly fail: user objects in the hidden holders, hidden holders holding
the same objects, an optimizer holding a model's parameters, large namespaces."""

from __future__ import annotations

import sys
import weakref
from typing import Any

import pytest
from cleanup_harness import FakeShell, Figures

from jupyterlab_vram_helper.cleanup.cleanup import Cleanup

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
pytestmark = pytest.mark.usefixtures("real_torch", "sys_last_restored")


def hidden(result: dict[str, Any], holder: str) -> dict[str, Any]:
    [found] = [h for h in result["hidden"] if h["holder"] == holder]
    return found


def entry(result: dict[str, Any], name: str) -> dict[str, Any]:
    [found] = [e for e in result["entries"] if e["name"] == name]
    return found


class Pipeline:
    def __init__(self) -> None:
        self.unet = torch.ones(1000)


# --- user objects in the hidden holders ---------------------------------------------------


def test_a_user_object_in_the_output_cache_is_listed_with_its_tensors(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.displayhook.show(2, Pipeline())  # `Pipeline().to("cuda")` echoed, then another cell ran
    shell.displayhook.show(3, 2)
    cache = hidden(cleanup.inspect(), "output_cache")
    assert cache["total_bytes"] == 4000 and "Out[2]" in cache["summary"]


def test_a_user_object_in_a_failed_functions_locals_is_listed(cleanup: Cleanup, shell: FakeShell) -> None:
    def step() -> None:
        batch = Pipeline()  # noqa: F841 -- what the traceback keeps
        raise RuntimeError("CUDA out of memory")

    try:
        step()
    except RuntimeError as exc:
        sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, exc.__traceback__
        shell.last_execution_result.error_in_exec = exc
    tb = hidden(cleanup.inspect(), "last_traceback")
    assert tb["total_bytes"] == 4000 and "step(): batch" in tb["summary"]


# --- hidden holders holding the same object -------------------------------------------------


def test_the_output_cache_says_what_the_last_result_holds_too(cleanup: Cleanup, shell: FakeShell) -> None:
    t = torch.ones(1000)
    shell.displayhook.show(1, t)  # `torch.ones(...)` echoed: Out[1], _ and the last result
    shell.last_execution_result.result = t
    del t
    result = cleanup.inspect()
    cache = hidden(result, "output_cache")
    assert cache["held_also_by"] == [{"holder": "last_execution_result", "bytes_by_device": {"cpu": 4000}}]
    assert "also held by the result of the last cell" in cache["summary"]
    last = hidden(result, "last_execution_result")
    assert last["held_also_by"] == [{"holder": "output_cache", "bytes_by_device": {"cpu": 4000}}]
    assert hidden(result, "output_cache")["named_bytes_by_device"] == {}


def test_what_a_name_holds_is_not_counted_again_as_another_hidden_holders(cleanup: Cleanup, shell: FakeShell) -> None:
    t = torch.ones(1000)
    shell.user_ns["t"] = t
    shell.displayhook.show(1, t)
    shell.last_execution_result.result = t
    del t
    cache = hidden(cleanup.inspect(), "output_cache")
    assert cache["named_bytes_by_device"] == {"cpu": 4000} and cache["held_also_by"] == []


# --- a delete that fails after names were removed -------------------------------------------


def _failing_empty_cache(fake_torch: Any, failing: set) -> list[Any]:
    import contextlib

    calls: list[Any] = []
    current: list[Any] = [None]

    @contextlib.contextmanager
    def device(i: Any) -> Any:
        current[0] = i
        yield

    def empty_cache() -> None:
        calls.append(current[0])
        if current[0] in failing:
            raise RuntimeError("CUDA error: device-side assert triggered\nCUDA kernel errors might be ...")

    fake_torch.cuda.device = device
    fake_torch.cuda.empty_cache = empty_cache
    fake_torch.initialized = True
    return calls


def test_empty_cache_tries_every_device_and_says_which_failed(fake_torch: Any) -> None:
    from fakes import set_allocator

    from jupyterlab_vram_helper.cleanup.cleanup import empty_cuda_cache

    calls = _failing_empty_cache(fake_torch, {0})
    set_allocator(fake_torch, 0, 10, 100)
    set_allocator(fake_torch, 1, 10, 100)
    failures: list[dict[str, Any]] = []
    outcome = empty_cuda_cache(failures)
    assert calls == [0, 1]  # GPU 1's cache is returned whatever GPU 0 says
    assert outcome == "failed: GPU 0: RuntimeError: CUDA error: device-side assert triggered"
    assert failures == [
        {"step": "empty_cache", "target": "GPU 0", "error": "RuntimeError: CUDA error: device-side assert triggered"}
    ]


def test_a_delete_whose_empty_cache_fails_still_says_what_it_deleted(fake_torch: Any) -> None:
    from fakes import set_allocator

    _failing_empty_cache(fake_torch, {0})
    set_allocator(fake_torch, 0, 1 << 30, 2 << 30)
    shell = FakeShell()
    cleanup = Cleanup(source=None, shell=lambda: shell, read_figures=Figures())
    shell.user_ns["big"] = bytearray(1 << 20)
    shell.displayhook.show(1, bytearray(1 << 20))
    listing = cleanup.inspect()["listing_id"]
    out = cleanup.delete(listing, ["big"], ["output_cache"], ["gc", "empty_cache"])
    assert "big" not in shell.user_ns
    assert out["deleted"] == ["big"] and out["cleared"] == ["output_cache"]
    assert out["failures"] == [
        {"step": "empty_cache", "target": "GPU 0", "error": "RuntimeError: CUDA error: device-side assert triggered"}
    ]
    assert out["after"] is not None


def test_free_memory_says_empty_cache_failed_instead_of_raising(fake_torch: Any) -> None:
    from fakes import set_allocator

    _failing_empty_cache(fake_torch, {0})
    set_allocator(fake_torch, 0, 1 << 30, 2 << 30)
    cleanup = Cleanup(source=None, shell=lambda: FakeShell(), read_figures=Figures())
    out = cleanup.free_memory(["gc", "empty_cache"])
    assert out["actions_run"] == ["gc", "empty_cache"] and out["gc_collected"] is not None
    assert out["empty_cache"].startswith("failed: GPU 0: RuntimeError: CUDA error")


def test_free_memory_says_a_gc_that_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    def exploding_finaliser() -> int:
        raise RuntimeError("a finaliser exploded")

    monkeypatch.setattr(gc, "collect", exploding_finaliser)
    cleanup = Cleanup(source=None, shell=lambda: FakeShell(), read_figures=Figures())
    out = cleanup.free_memory(["gc"])
    assert out["actions_run"] == [] and out["gc_collected"] is None
    assert out["failures"] == [{"step": "gc", "target": None, "error": "RuntimeError: a finaliser exploded"}]


def test_a_clearer_that_fails_is_reported_and_the_rest_goes_on(
    cleanup: Cleanup, shell: FakeShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jupyterlab_vram_helper.cleanup import namespace_surgery

    def broken(shell: Any) -> None:
        raise ValueError("odd displayhook")

    monkeypatch.setitem(namespace_surgery.CLEARERS, "output_cache", broken)
    shell.user_ns["x"] = bytearray(1 << 20)
    t = torch.ones(10)
    shell.displayhook.show(1, t)
    shell.last_execution_result.result = t
    del t
    out = cleanup.delete(cleanup.inspect()["listing_id"], ["x"], ["output_cache", "last_execution_result"], ["gc"])
    assert out["deleted"] == ["x"] and out["cleared"] == ["last_execution_result"]
    assert out["failures"] == [{"step": "clear", "target": "output_cache", "error": "ValueError: odd displayhook"}]


# --- a model whose optimizer stays ------------------------------------------------------------


def test_a_model_and_its_optimizer_say_they_share_the_parameters(cleanup: Cleanup, shell: FakeShell) -> None:
    model = torch.nn.Linear(100, 100)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.ones(2, 100)).sum().backward()
    shell.user_ns.update(model=model, optimizer=optimizer)
    del model, optimizer
    result = cleanup.inspect()
    m, o = entry(result, "model"), entry(result, "optimizer")
    params = 2 * (100 * 100 + 100) * 4  # and their grads, which the parameters keep
    assert m["total_bytes"] == params and m["shared_with"] == ["optimizer"]
    # The optimizer keeps the model's bytes alive: counted under the model, which
    # is what lets the plan take them off while the optimizer stays.
    assert o["total_bytes"] == 0 and o["shared_with"] == ["model"]
    assert o["counted_under"] == ["model"] and o["shared_bytes_by_device"] == {"cpu": params}


def test_deleting_a_model_says_its_optimizer_still_holds_the_parameters(cleanup: Cleanup, shell: FakeShell) -> None:
    model = torch.nn.Linear(100, 100)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.ones(2, 100)).sum().backward()
    shell.user_ns.update(model=model, optimizer=optimizer)
    weight = weakref.ref(model.weight)
    del model, optimizer
    out = cleanup.delete(cleanup.inspect()["listing_id"], ["model"], [], ["gc"])
    assert out["deleted"] == ["model"] and weight() is not None
    [alive] = out["still_alive"]
    assert alive["name"] == "model" and "2 parameters still referenced by optimizer (SGD)" in alive["reason"]


def test_a_deleted_model_whose_parameters_die_is_not_reported(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns["model"] = torch.nn.Linear(10, 10)
    out = cleanup.delete(cleanup.inspect()["listing_id"], ["model"], [], ["gc"])
    assert out["deleted"] == ["model"] and out["still_alive"] == []


# --- many survivors ---------------------------------------------------------------------------


def test_many_survivors_are_looked_up_in_one_pass_and_only_the_first_twenty(
    cleanup: Cleanup, shell: FakeShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from jupyterlab_vram_helper.cleanup import referrers

    keep = [torch.ones(4) for _ in range(30)]
    shell.user_ns.update({f"t{i}": t for i, t in enumerate(keep)})
    listing = cleanup.inspect()["listing_id"]
    passes: list[int] = []
    real = gc.get_referrers

    def counting(*objs: Any) -> list[Any]:
        passes.append(len(objs))
        return real(*objs)

    monkeypatch.setattr(referrers.gc, "get_referrers", counting)
    out = cleanup.delete(listing, [f"t{i}" for i in range(30)], [], ["gc"])
    assert len(out["deleted"]) == 30 and len(out["still_alive"]) == 30
    assert passes == [20]  # one pass for twenty; the list is no dict: no owner pass
    reasons = [a["reason"] for a in out["still_alive"]]
    assert all(r == "still referenced by a list" for r in reasons[:20]), reasons[:20]
    assert all(r.startswith("still alive (what holds it is looked up for the first 20") for r in reasons[20:])


def test_an_attribute_holder_is_named_from_one_owner_pass(cleanup: Cleanup, shell: FakeShell) -> None:
    class Trainer:
        w: Any  # set on each instance below

    trainers = [Trainer() for _ in range(3)]
    for i, trainer in enumerate(trainers):
        trainer.w = torch.ones(4)
        shell.user_ns[f"w{i}"] = trainer.w
    out = cleanup.delete(cleanup.inspect()["listing_id"], ["w0", "w1", "w2"], [], ["gc"])
    assert [a["reason"] for a in out["still_alive"]] == ["still referenced by the attribute w of Trainer"] * 3


def test_naming_what_keeps_a_deleted_name_alive_asks_no_metaclass_and_no_module_property(
    cleanup: Cleanup, shell: FakeShell
) -> None:
    import types

    asked: list[str] = []

    class Meta(type):
        def __getattribute__(cls, name: str) -> Any:
            asked.append(f"__getattribute__({name})")
            return type.__getattribute__(cls, name)

        def __eq__(cls, other: Any) -> bool:
            asked.append("__eq__")
            return cls is other

        __hash__ = type.__hash__

    Trainer = Meta("Trainer", (), {})
    Key = Meta("Key", (), {})

    class Odd(types.ModuleType):
        @property
        def __dict__(self) -> Any:  # type: ignore[override]
            asked.append("module __dict__")
            raise RuntimeError("a module subclass's property ran")

    trainer, by_key, odd = Trainer(), {Key(): None}, Odd("odd")
    shell.user_ns["w0"] = trainer.w = torch.ones(4)
    shell.user_ns["w1"] = by_key[next(iter(by_key))] = torch.ones(4)
    shell.user_ns["w2"] = torch.ones(4)
    vars(types.ModuleType)["__dict__"].__get__(odd)["kept"] = shell.user_ns["w2"]
    listing = cleanup.inspect()["listing_id"]
    keep = (trainer, by_key, odd)
    asked.clear()
    out = cleanup.delete(listing, ["w0", "w1", "w2"], [], ["gc"])
    assert asked == []
    reasons = [a["reason"] for a in out["still_alive"]]
    assert reasons[0] == "still referenced by the attribute w of Trainer"
    assert reasons[1] == "still referenced by a dict (key a Key)"
    assert reasons[2] == "still referenced by a dict (attribute kept of module odd)"
    del keep


# --- large namespaces ---------------------------------------------------------------------------


def test_a_name_after_a_budget_eating_dataset_is_listed_and_deleted(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns["dataset"] = [list(range(1000)) for _ in range(250)]  # 250,000 items: the request's budget
    shell.user_ns["nested"] = [[np.zeros(1) for _ in range(1000)] for _ in range(3)]  # more than a name's minimum
    shell.user_ns["batch"] = [np.zeros(1 << 10) for _ in range(8)]
    result = cleanup.inspect()
    assert result["truncated"] is True
    batch, nested = entry(result, "batch"), entry(result, "nested")
    assert batch["total_bytes"] == 8 * 8192 and batch["truncated"] is False
    assert nested["truncated"] is True and nested["total_bytes"] > 0
    out = cleanup.delete(result["listing_id"], ["batch", "nested"], [], ["gc"])
    assert out["deleted"] == ["batch", "nested"] and out["refused"] == []


# --- a name rebound while the delete runs ------------------------------------------------------


def test_a_name_rebound_by_a_finaliser_during_the_delete_is_not_deleted(cleanup: Cleanup, shell: FakeShell) -> None:
    class Rebinds:
        def __init__(self) -> None:
            self.t = torch.ones(100)

        def __del__(self) -> None:
            shell.user_ns["b"] = "the user's new b"  # what a finaliser or weakref callback may do

    shell.user_ns["a"] = Rebinds()
    shell.user_ns["b"] = torch.ones(100)
    out = cleanup.delete(cleanup.inspect()["listing_id"], ["a", "b"], [], ["gc"])
    assert out["deleted"] == ["a"]
    assert out["refused"] == [{"name": "b", "reason": "rebound since the listing"}]
    assert shell.user_ns["b"] == "the user's new b"


def test_detach_takes_out_only_the_object_checked_and_puts_another_back_untouched(shell: FakeShell) -> None:
    from jupyterlab_vram_helper.cleanup.namespace_surgery import NameRebound, detach

    checked, rebound = bytearray(16), bytearray(32)
    shell.user_ns["x"] = rebound  # bound again, by another thread, after the check
    with pytest.raises(NameRebound):
        detach(shell, shell.user_ns, "x", expected=checked)
    assert shell.user_ns["x"] is rebound
    with pytest.raises(NameRebound):
        detach(shell, shell.user_ns, "gone", expected=checked)
    assert detach(shell, shell.user_ns, "x", expected=rebound) is not None
    assert "x" not in shell.user_ns
