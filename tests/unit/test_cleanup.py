"""Cleanup: size accounting, listings, delete safety, snapshots, empty_cache."""

from __future__ import annotations

import contextlib
import gc
import sys
import traceback
import weakref
from typing import Any, Dict, Iterator, List

import pytest

from cleanup_harness import Figures, FakeShell
from fakes import FakeTorch, set_allocator
from jupyterlab_vram_helper import cleanup as cleanup_mod
from jupyterlab_vram_helper.cleanup import Cleanup
from jupyterlab_vram_helper.listings import reserved_name_reason
from jupyterlab_vram_helper.holders import Budget, Classes, Found, Sizer
from jupyterlab_vram_helper.protocol import RequestError, parse_request

real_torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

MODULES = {
    "torch": real_torch,
    "torch.nn.modules.module": sys.modules["torch.nn.modules.module"],
    "torch.optim.optimizer": sys.modules["torch.optim.optimizer"],
    "numpy": np,
}


@pytest.fixture(autouse=True)
def with_torch(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The real (CPU) torch back in sys.modules, as in a kernel that imported it
    (torch imports its own submodules lazily: it must stay findable)."""
    monkeypatch.setitem(sys.modules, "torch", real_torch)
    monkeypatch.setitem(sys.modules, "numpy", np)
    return real_torch


def size(obj: Any, depth: int = 2, objects: bool = True) -> Found:
    found = Found()
    Sizer(Classes(MODULES)).walk(obj, found, depth, objects=objects)
    return found


# --- size accounting ----------------------------------------------------------------


def test_a_tensor_and_its_view_share_one_storage() -> None:
    t = real_torch.ones(1000)
    v = t[:10]
    assert size(t).total == 4000
    assert size(v).storages == size(t).storages  # the view holds the whole storage
    assert size([t, v, t]).total == 4000


def test_a_leaf_tensor_counts_its_grad() -> None:
    p = real_torch.ones(100, requires_grad=True)
    (p * 2).sum().backward()
    found = size(p)
    assert found.total == 800 and found.grads == 1


def test_a_module_counts_parameters_buffers_and_grads() -> None:
    net = real_torch.nn.Sequential(real_torch.nn.Linear(10, 10), real_torch.nn.BatchNorm1d(10))
    net(real_torch.ones(4, 10)).sum().backward()
    found = size(net)
    params = (100 + 10 + 10 + 10) * 4
    buffers = (10 + 10) * 4 + 8  # running mean/var + num_batches_tracked
    assert found.total == 2 * params + buffers
    assert (found.params, found.buffers, found.grads) == (4, 3, 4)


def test_an_optimizer_counts_its_state_not_the_parameters() -> None:
    net = real_torch.nn.Linear(10, 10)
    opt = real_torch.optim.Adam(net.parameters())
    assert size(opt).total == 0
    net(real_torch.ones(1, 10)).sum().backward()
    opt.step()
    found = size(opt)
    assert found.state_tensors == 6  # exp_avg, exp_avg_sq, step per parameter
    assert found.total >= 2 * (110 * 4)


def test_containers_are_opened_to_the_given_depth() -> None:
    t = real_torch.zeros(10)
    nested = {"a": t, "b": [real_torch.zeros(20), (real_torch.zeros(30),)]}
    assert size(nested, depth=0).total == 0
    assert size(nested, depth=1).total == 40
    assert size(nested, depth=2).total == 120
    assert size(nested, depth=3).total == 240
    cyclic: List[Any] = [t]
    cyclic.append(cyclic)
    assert size(cyclic, depth=5).total == 40


def test_numpy_views_and_shared_memory_with_torch() -> None:
    a = np.zeros(1000)
    assert size(a).total == 8000
    assert size(a[::2]).storages == size(a).storages
    t = real_torch.from_numpy(a)
    assert size([a, t]).total == 8000  # one buffer
    n = real_torch.ones(10).numpy()
    assert size(n).total == 40


def test_objects_are_opened_only_at_the_top() -> None:
    class Holder:
        def __init__(self) -> None:
            self.weights = real_torch.zeros(25)

    h = Holder()
    assert size(h, objects=True).total == 100
    assert size([h], objects=False).total == 0


def test_the_walk_is_bounded() -> None:
    big = [real_torch.zeros(1) for _ in range(50)]
    found = Found()
    budget = Budget(items=10)
    Sizer(Classes(MODULES), budget).walk(big, found, 2)
    assert budget.exhausted and found.tensors < 10


def test_without_torch_nothing_is_a_tensor() -> None:
    assert Classes({}).kind(real_torch.zeros(1)) == "skip"
    assert size(real_torch.zeros(1)).total == 4  # with torch


# --- a fake IPython shell -------------------------------------------------------------------


@pytest.fixture
def shell() -> FakeShell:
    return FakeShell()


@pytest.fixture
def cleanup(shell: FakeShell, with_torch: Any) -> Cleanup:
    return Cleanup(source=None, shell=lambda: shell, read_figures=Figures())


def test_snapshot_shape(cleanup: Cleanup) -> None:
    assert cleanup.snapshot() == {
        "host": {"rss_bytes": 1000},
        "gpus": [
            {"index": 0, "allocated_bytes": 5, "reserved_bytes": 8, "nvml_used_bytes": 9},
            {"index": 1, "allocated_bytes": None, "reserved_bytes": None, "nvml_used_bytes": None},
        ],
    }


def test_inspect_lists_holders_largest_first_and_counts_shared_storage_once(cleanup: Cleanup, shell: FakeShell) -> None:
    a = real_torch.zeros(1000)
    shell.user_ns.update({"a": a, "b": a, "v": a[:5], "small": real_torch.zeros(10), "n": 3, "sys": sys,
                          "batch": [real_torch.zeros(100)], "ints": [1, 2, 3]})
    shell.displayhook.show(4, a)
    result = cleanup.inspect()
    names = [e["name"] for e in result["entries"]]
    assert names[0] == "a" and set(names) == {"a", "b", "v", "small", "batch"}
    assert [e["total_bytes"] for e in result["entries"]] == sorted((e["total_bytes"] for e in result["entries"]), reverse=True)
    by = {e["name"]: e for e in result["entries"]}
    assert by["a"]["total_bytes"] == 4000 and by["b"]["total_bytes"] == 0 and by["v"]["total_bytes"] == 0
    assert by["a"]["shared_with"] == ["b", "v"] and by["v"]["shared_with"] == ["a", "b"]
    # A name listed with 0 still says what it keeps alive, and under which name that is counted.
    assert by["b"]["shared_bytes"] == 4000 and by["b"]["counted_under"] == ["a"]
    assert by["b"]["shared_bytes_by_device"] == {"cpu": 4000} and by["a"]["shared_bytes_by_device"] == {}
    assert by["v"]["shared_bytes"] == 4000 and by["v"]["counted_under"] == ["a"]
    assert by["a"]["shared_bytes"] == 0 and by["a"]["counted_under"] == []
    assert by["small"]["shared_bytes"] == 0 and by["small"]["shared_with"] == []
    assert set(by["a"]["output_cache_refs"]) == {"Out[4]", "_4", "_"}
    assert by["batch"]["summary"] == "list of 1 tensor" and by["batch"]["kind"] == "container"
    assert by["a"]["summary"] == "float32[1000] cpu" and by["a"]["type_name"] == "torch.Tensor"
    [cache] = [h for h in result["hidden"] if h["holder"] == "output_cache"]
    assert cache["total_bytes"] == 4000 and "also held by named variables" in cache["summary"]
    assert cache["named_bytes_by_device"] == {"cpu": 4000}  # all of it is a's too
    assert result["truncated"] is False
    assert cleanup.inspect(max_entries=2)["truncated"] is True


@pytest.mark.parametrize("inspect_with", ["held_references", "plain_inspect"])
def test_an_oom_diagnosis_counts_memory_held_by_a_name_and_hidden_holders_once(
    cleanup: Cleanup, shell: FakeShell, inspect_with: str
) -> None:
    from jupyterlab_vram_helper.oom_watch import OomWatch

    size = 100 * 1024 * 1024
    data = bytearray(size)
    shell.user_ns["x"] = data
    shell.displayhook.show(3, data)  # Out[3], _3, _
    shell.last_execution_result.result = data  # and the last cell's result
    inspect = cleanup.held_references if inspect_with == "held_references" else (
        lambda: cleanup.inspect(keep_listing=False))
    figures = {"host": {"rss_bytes": 2 * size, "total_bytes": 8 << 30, "available_bytes": 50 << 20, "container": None},
               "gpus": []}
    watch = OomWatch(read_figures=lambda: figures, inspect=inspect)
    diagnosis = watch.diagnose("MemoryError", "Unable to allocate 120. MiB for an array with shape (15728640,)")
    del data
    assert diagnosis is not None
    holders = {h["holder"]: h["bytes"] for h in diagnosis["stale_holders"]}
    assert holders["name"] >= size and holders["output_cache"] >= size  # each holder's own figure
    assert size <= diagnosis["stale_bytes"] < size + 4096  # together: one buffer, not two or three


def test_inspect_lists_raw_bytes_from_64_kib_on_counting_a_buffer_once(cleanup: Cleanup, shell: FakeShell) -> None:
    import array

    raw = bytearray(3 * 2**20)
    samples = array.array("d", bytes(2**20))  # 131,072 doubles
    shell.user_ns.update({
        "raw": raw, "view": memoryview(raw), "samples": samples, "blob": b"\x00" * 2**20,
        "header": b"\x00" * 1000, "chunks": [bytes(100_000), bytes(100_000)],
    })
    by = {e["name"]: e for e in cleanup.inspect()["entries"]}
    assert set(by) == {"raw", "view", "samples", "blob", "chunks"}  # a 1,000-byte header is not worth a row
    assert by["raw"]["kind"] == "bytes" and by["raw"]["summary"] == "bytearray[3,145,728]"
    assert by["raw"]["total_bytes"] == sys.getsizeof(raw) >= 3 * 2**20
    assert by["view"]["total_bytes"] == 0 and by["view"]["shared_with"] == ["raw"]  # the view's memory is raw's
    assert by["view"]["shared_bytes"] == by["raw"]["total_bytes"] and by["view"]["counted_under"] == ["raw"]
    assert by["samples"]["total_bytes"] == 2**20 and by["samples"]["summary"] == "array[131,072]"
    assert by["chunks"]["summary"] == "list of 2 bytes objects" and by["chunks"]["total_bytes"] >= 200_000


def test_deleting_raw_bytes_frees_them(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns["raw"] = bytearray(2 * 2**20)
    listing = cleanup.inspect()["listing_id"]
    out = cleanup.delete(listing, ["raw"], [], [])
    assert out["deleted"] == ["raw"] and out["refused"] == [] and "raw" not in shell.user_ns


def test_listings_keep_no_strong_reference(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns["t"] = real_torch.zeros(10)
    shell.user_ns["box"] = [real_torch.zeros(10)]
    w = weakref.ref(shell.user_ns["t"])
    wb = weakref.ref(shell.user_ns["box"][0])
    cleanup.inspect()
    del shell.user_ns["t"], shell.user_ns["box"]
    gc.collect()
    assert w() is None and wb() is None


def test_delete_removes_the_name_and_its_output_cache_copies(cleanup: Cleanup, shell: FakeShell) -> None:
    t = real_torch.zeros(1000)
    shell.user_ns["t"] = t
    shell.displayhook.show(2, t)
    shell.displayhook.show(3, "other")
    shell.last_execution_result.result = t
    w = weakref.ref(t)
    del t
    listing = cleanup.inspect()["listing_id"]
    out = cleanup.delete(listing, ["t"], [], [])
    assert out["deleted"] == ["t"] and out["still_alive"] == [] and out["refused"] == []
    assert w() is None
    assert "_2" not in shell.user_ns and "_2" not in shell.user_ns_hidden and 2 not in shell.user_ns["_oh"]
    assert "__" not in shell.user_ns and shell.displayhook.__ is None
    assert shell.last_execution_result.result is None
    assert shell.user_ns["_3"] == "other"


def test_delete_keeps_other_user_names_and_says_so(cleanup: Cleanup, shell: FakeShell) -> None:
    t = real_torch.zeros(1000)
    shell.user_ns.update({"a": t, "b": t})
    del t
    out = cleanup.delete(cleanup.inspect()["listing_id"], ["a"], [], ["gc"])
    assert out["deleted"] == ["a"] and "b" in shell.user_ns
    [alive] = out["still_alive"]
    assert alive["name"] == "a" and "the user namespace (as b)" in alive["reason"] and "shared with b" in alive["reason"]


def test_delete_names_what_else_holds_a_tensor(cleanup: Cleanup, shell: FakeShell) -> None:
    class Keeper:
        pass

    keeper = Keeper()
    t = real_torch.zeros(1000)
    keeper.t = t
    shell.user_ns["t"] = t
    del t
    out = cleanup.delete(cleanup.inspect()["listing_id"], ["t"], [], ["gc"])
    [alive] = out["still_alive"]
    assert "attribute t of Keeper" in alive["reason"], alive


def test_a_list_made_again_at_the_listed_address_is_not_deleted(cleanup: Cleanup, shell: FakeShell) -> None:
    # Lists take no weakref, and CPython hands a freed list's address to the
    # next one: a cell run again often rebinds ``batch`` to a new list at the
    # same id(). Made here until the address matches (it does within a few tries).
    shell.user_ns["batch"] = [real_torch.zeros(100)]
    listing = cleanup.inspect()["listing_id"]
    listed_id = id(shell.user_ns["batch"])
    for _ in range(1000):
        shell.user_ns["batch"] = None
        shell.user_ns["batch"] = [real_torch.ones(100)]
        if id(shell.user_ns["batch"]) == listed_id:
            break
    else:
        pytest.skip("CPython did not reuse the list's address here")
    out = cleanup.delete(listing, ["batch"], [], [])
    assert out["deleted"] == [] and out["refused"] == [{"name": "batch", "reason": "rebound since the listing"}]
    assert "batch" in shell.user_ns


def test_a_listed_list_still_holding_what_it_held_is_deleted(cleanup: Cleanup, shell: FakeShell) -> None:
    kept = real_torch.zeros(100)
    shell.user_ns["batch"] = [kept]
    listing = cleanup.inspect()["listing_id"]
    out = cleanup.delete(listing, ["batch"], [], [])
    assert out["deleted"] == ["batch"] and "batch" not in shell.user_ns


def test_a_listed_list_given_other_tensors_since_is_not_deleted(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns["batch"] = [real_torch.zeros(100)]
    listing = cleanup.inspect()["listing_id"]
    shell.user_ns["batch"].append(real_torch.ones(100))  # the same list, holding more than the listing saw
    out = cleanup.delete(listing, ["batch"], [], [])
    assert out["deleted"] == [] and out["refused"][0]["reason"] == "rebound since the listing"


def test_deleting_a_list_watches_its_tensors(cleanup: Cleanup, shell: FakeShell) -> None:
    inner = real_torch.zeros(100)
    shell.user_ns["box"] = [inner]
    keep = [inner]  # noqa: F841  (holds the tensor)
    del inner
    out = cleanup.delete(cleanup.inspect()["listing_id"], ["box"], [], ["gc"])
    assert out["deleted"] == ["box"] and out["still_alive"] and "a list" in out["still_alive"][0]["reason"]


@pytest.mark.parametrize("name", ["In", "Out", "get_ipython", "exit", "quit", "_ih", "_oh", "_dh", "_i", "_i7",
                                  "_ii", "_iii", "_", "__", "___", "_12", "__builtins__", "__name__"])
def test_reserved_names(name: str) -> None:
    assert reserved_name_reason(name) is not None


def test_user_names_are_not_reserved() -> None:
    # _images, _ids: a user's, though they start as IPython's input history names do
    for name in ("x", "_x", "model_", "i_", "__x", "_1a", "_images", "_ids", "_iiii", "_i7a"):
        assert reserved_name_reason(name) is None, name


def test_refusals(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns.update({"t": real_torch.zeros(10), "gone": real_torch.zeros(10), "mod": sys})
    listing = cleanup.inspect()["listing_id"]
    shell.user_ns["t"] = real_torch.zeros(10)  # rebound
    del shell.user_ns["gone"]
    before = dict(shell.user_ns)
    out = cleanup.delete(listing, ["t", "gone", "mod", "In", "nope", "t"], [], [])
    assert out["deleted"] == []
    reasons = {r["name"]: r["reason"] for r in out["refused"]}
    assert reasons == {
        "t": "rebound since the listing",
        "gone": "no longer defined",
        "mod": "refused: a module",
        "In": "refused: an IPython internal name",
        "nope": "not in the listing",
    }
    assert shell.user_ns == before and all(shell.user_ns[k] is v for k, v in before.items())


def test_listings_expire(cleanup: Cleanup) -> None:
    first = cleanup.inspect()["listing_id"]
    for _ in range(cleanup_mod.KEPT_LISTINGS):
        cleanup.inspect()
    assert not cleanup.has_listing(first)


def test_an_unkept_inspect_pushes_no_listing_out(cleanup: Cleanup) -> None:
    first = cleanup.inspect()["listing_id"]
    for _ in range(cleanup_mod.KEPT_LISTINGS):
        unkept = cleanup.inspect(keep_listing=False)["listing_id"]  # as the OOM diagnosis asks
    assert cleanup.has_listing(first) and not cleanup.has_listing(unkept)


def test_clearing_the_output_cache_drops_the_hidden_copies(cleanup: Cleanup, shell: FakeShell) -> None:
    t = real_torch.zeros(100)
    shell.displayhook.show(1, t)
    w = weakref.ref(t)
    del t
    out = cleanup.delete(cleanup.inspect()["listing_id"], [], ["output_cache"], [])
    assert out["cleared"] == ["output_cache"]
    assert w() is None
    assert shell.user_ns_hidden["_"] == "" and shell.user_ns["_"] == ""


@pytest.fixture(autouse=True)
def _sys_last_restored(sys_last_restored: None) -> None:
    """Clearing the traceback removes sys.last_*: put back after each test."""


def record_last_error(monkeypatch: pytest.MonkeyPatch, shell: FakeShell, exc: BaseException) -> None:
    """What IPython keeps of an error that ended a cell: sys.last_* and the last result
    (put back after the test by sys_last_restored)."""
    sys.last_type = type(exc)
    sys.last_value = exc
    sys.last_traceback = exc.__traceback__
    shell.last_execution_result.error_in_exec = exc


def test_clearing_the_traceback_frees_frame_locals(cleanup: Cleanup, shell: FakeShell, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail() -> None:
        t = real_torch.zeros(250)  # noqa: F841
        raise RuntimeError("boom")

    try:
        fail()
    except RuntimeError as exc:
        record_last_error(monkeypatch, shell, exc)
    result = cleanup.inspect()
    [tb] = [h for h in result["hidden"] if h["holder"] == "last_traceback"]
    assert tb["total_bytes"] == 1000 and "fail(): t" in tb["summary"] and "%debug" in tb["warning"]
    out = cleanup.delete(result["listing_id"], [], ["last_traceback"], [])
    assert out["cleared"] == ["last_traceback"]
    # Gone, not None: IPython's %debug tells "no traceback" by hasattr.
    assert not hasattr(sys, "last_value") and not hasattr(sys, "last_traceback")
    assert shell.last_execution_result.error_in_exec is None
    assert not [h for h in cleanup.inspect()["hidden"] if h["holder"] == "last_traceback"]


def test_clearing_the_traceback_leaves_a_generator_in_the_error_chain_running(
    cleanup: Cleanup, shell: FakeShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    errors: List[BaseException] = []

    def worker() -> Iterator[int]:
        total = 0
        while True:
            try:
                total += yield total
                raise ValueError("bad item")
            except ValueError as exc:
                errors.append(exc)  # its traceback holds this generator's suspended frame

    w = worker()
    next(w)
    w.send(1)
    try:
        raise RuntimeError("a step failed") from errors[-1]
    except RuntimeError as exc:
        record_last_error(monkeypatch, shell, exc)
    out = cleanup.delete(cleanup.inspect()["listing_id"], [], ["last_traceback"], [])
    assert out["cleared"] == ["last_traceback"]
    assert w.send(2) == 3  # not finalised: the user's generator goes on


def test_clearing_the_traceback_frees_locals_the_listing_read_while_something_keeps_the_frame(
    cleanup: Cleanup, shell: FakeShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Big:
        payload = bytearray(1 << 20)

    probes: List[weakref.ref] = []

    def fail() -> None:
        big = Big()
        probes.append(weakref.ref(big))
        data = bytearray(1 << 20)  # noqa: F841 -- what makes the listing read the frame's locals
        raise RuntimeError("boom")

    try:
        fail()
    except RuntimeError as exc:
        record_last_error(monkeypatch, shell, exc)
        kept = exc.__traceback__  # a traceback the user kept: its frames outlive the clearing
    frame = kept.tb_next.tb_frame
    result = cleanup.inspect()  # reads fail()'s f_locals: on 3.10-3.12 a snapshot stays on the frame
    [tb] = [h for h in result["hidden"] if h["holder"] == "last_traceback"]
    assert "fail(): data" in tb["summary"]
    cleanup.delete(result["listing_id"], [], ["last_traceback"], [])
    gc.collect()
    assert probes[0]() is None
    assert frame.f_code.co_name == "fail"  # the frame itself is still there
    # the notebook's namespace (a module-level frame's f_locals) is untouched
    assert shell.user_ns["In"] == [] and "get_ipython" in shell.user_ns


def test_reading_a_failed_functions_locals_does_not_outlive_the_users_own_clear_frames(
    cleanup: Cleanup, shell: FakeShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The out-of-memory diagnosis reads the last error's frames (held_references);
    # the user then frees them the usual way, with traceback.clear_frames.
    probes: List[weakref.ref] = []

    def fail_holding() -> None:
        held = real_torch.zeros(1 << 18)  # a local the listing reads
        probes.append(weakref.ref(held))
        raise RuntimeError("boom")

    try:
        fail_holding()
    except RuntimeError as exc:
        record_last_error(monkeypatch, shell, exc)
        kept = exc
    [tb] = [h for h in cleanup.held_references()["hidden"] if h["holder"] == "last_traceback"]
    assert "fail_holding(): held" in tb["summary"]
    traceback.clear_frames(kept.__traceback__)
    gc.collect()
    assert probes[0]() is None  # no snapshot of ours keeps `held` alive
    frame = kept.__traceback__.tb_next.tb_frame
    assert frame.f_locals == {}  # read again: the cleared frame, as without us


# --- empty_cache never initialises CUDA -------------------------------------------------------


def _with_empty_cache(torch: FakeTorch) -> List[Any]:
    calls: List[Any] = []

    @contextlib.contextmanager
    def device(i: Any) -> Any:
        calls.append(("device", i))
        yield

    torch.cuda.device = device
    torch.cuda.empty_cache = lambda: calls.append(("empty_cache",))
    return calls


def test_empty_cache_without_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "torch")
    assert cleanup_mod.empty_cuda_cache() == "skipped_torch_not_imported"


def test_empty_cache_before_cuda_is_initialised(fake_torch: FakeTorch) -> None:
    calls = _with_empty_cache(fake_torch)
    assert cleanup_mod.empty_cuda_cache() == "skipped_cuda_not_initialized"
    assert calls == [] and fake_torch.calls == []


def test_empty_cache_on_devices_that_reserve_memory(fake_torch: FakeTorch) -> None:
    calls = _with_empty_cache(fake_torch)
    fake_torch.initialized = True
    set_allocator(fake_torch, 1, allocated=10, reserved=100)
    assert cleanup_mod.empty_cuda_cache() == "done"
    assert calls == [("device", 1), ("empty_cache",)]


# --- protocol ---------------------------------------------------------------------------


def test_parse_cleanup_requests() -> None:
    r = parse_request({"type": "free_memory", "request_id": "r", "actions": ["empty_cache", "gc", "gc"]})
    assert r.args == {"actions": ["empty_cache", "gc"]}
    r = parse_request({"type": "inspect", "request_id": "r"})
    assert r.args == {"max_entries": 200, "container_depth": 2}
    r = parse_request({"type": "inspect", "request_id": "r", "max_entries": 5000.0, "container_depth": 0})
    assert r.args == {"max_entries": 5000, "container_depth": 0}
    r = parse_request({"type": "delete", "request_id": "r", "listing_id": "L", "names": ["a"]})
    assert r.args == {"listing_id": "L", "names": ["a"], "hidden": [], "free": []}


@pytest.mark.parametrize(
    "data,code,needle",
    [
        ({"type": "free_memory"}, "malformed", "actions"),
        ({"type": "free_memory", "actions": []}, "malformed", "at least one"),
        ({"type": "free_memory", "actions": "gc"}, "malformed", "must be an array"),
        ({"type": "free_memory", "actions": ["gc", 1]}, "malformed", "not one of"),
        ({"type": "inspect", "max_entries": 0}, "malformed", "max_entries"),
        ({"type": "inspect", "max_entries": True}, "malformed", "max_entries"),
        ({"type": "inspect", "container_depth": 6}, "malformed", "container_depth"),
        ({"type": "delete", "names": []}, "malformed", "listing_id"),
        ({"type": "delete", "listing_id": 3, "names": []}, "malformed", "listing_id"),
        ({"type": "delete", "listing_id": "L"}, "malformed", "names"),
        ({"type": "delete", "listing_id": "L", "names": {}}, "malformed", "names"),
        ({"type": "delete", "listing_id": "L", "names": [], "hidden": ["everything"]}, "malformed", "hidden"),
        ({"type": "delete", "listing_id": "L", "names": [], "free": ["reboot"]}, "malformed", "free"),
        ({"type": "delete", "listing_id": "L", "names": [None]}, "refused", "strings"),
        ({"type": "delete", "listing_id": "L", "names": ["a"] * 10_001}, "refused", "10000"),
        ({"type": "delete", "listing_id": "L", "names": ["a" * 1025]}, "refused", "1025"),
    ],
)
def test_bad_cleanup_requests(data: Dict[str, Any], code: str, needle: str) -> None:
    with pytest.raises(RequestError) as err:
        parse_request({**data, "request_id": "r"})
    assert err.value.code == code and needle in err.value.message and err.value.request_id == "r"
