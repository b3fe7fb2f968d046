"""CellMemoryRecorder with a fake torch.cuda and a scripted RSS: peaks, error records, odd cells,
failing sources, the sampler's feed, and the runtime's wiring (when records go out: test_cell_rounds.py)."""

from __future__ import annotations

import json
import threading
import time
import types

import pytest

from cell_harness import GB, MB, Harness, ScriptedRss, deferred_harness, figures, resets
from fakes import FakeComm, FakeCommManager, FakeTorch, in_forked_child, nested_stats, set_allocator, wait_until
from jupyterlab_vram_helper.readers import torch_cuda
from jupyterlab_vram_helper.background_sender import SENDER_THREAD_NAME
from jupyterlab_vram_helper.readers.nvml import NvmlReader
from jupyterlab_vram_helper.runtime import Runtime
from jupyterlab_vram_helper.sample import SampleSource


# --- exact peaks --------------------------------------------------------------------------


def test_exact_peak_resets_each_initialised_device_by_index(cuda: FakeTorch) -> None:
    h = Harness(cuda)

    def body():
        assert resets(cuda) == [("reset_peak_memory_stats", 0), ("reset_peak_memory_stats", 1)]
        set_allocator(cuda, 0, 3 * GB, 4 * GB)  # the cell's peak: 3 GB (below the old 5 GB)
        set_allocator(cuda, 0, 1536 * MB, 4 * GB)

    record = h.cell(body)
    assert record["gpus"] == [
        {
            "index": 0,
            "allocated_before_bytes": 1 * GB,
            "allocated_after_bytes": 1536 * MB,
            "allocated_peak_bytes": 3 * GB,
            "reserved_before_bytes": 2 * GB,
            "reserved_after_bytes": 4 * GB,
            "reserved_peak_bytes": 4 * GB,
            "peak_exact": True,
        }
    ]  # device 1 was never used: no entry
    assert record["peak_exact"] is True
    assert record["host"]["peak_exact"] is True


def test_a_vmhwm_above_the_rss_is_reset_at_cell_start_and_the_peak_is_exact() -> None:
    h = Harness()
    h.rss.set(900 * MB)
    h.rss.set(100 * MB)  # an earlier peak of 900 MB
    record = h.cell(lambda: (h.rss.set(400 * MB), h.rss.set(150 * MB)))
    assert h.rss.resets == 1
    assert record["host"] == {"rss_before_bytes": 100 * MB, "rss_after_bytes": 150 * MB,
                              "rss_peak_bytes": 400 * MB, "peak_exact": True}


@pytest.mark.parametrize("reset, can_reset", [(True, True), (False, True), (True, False)])
def test_a_vmhwm_that_is_the_rss_already_needs_no_reset_and_gives_an_exact_peak(reset: bool, can_reset: bool) -> None:
    # From the RSS on, VmHWM can only follow this cell, exactly as after a
    # reset: exact even where resets are off or impossible.
    h = Harness(reset=reset, rss=ScriptedRss(can_reset=can_reset))
    record = h.cell(lambda: (h.rss.set(700 * MB), h.rss.set(200 * MB)))
    assert h.rss.resets == 0
    assert record["host"] == {"rss_before_bytes": 100 * MB, "rss_after_bytes": 200 * MB,
                              "rss_peak_bytes": 700 * MB, "peak_exact": True}


def test_two_devices_each_get_their_own_figures(cuda: FakeTorch) -> None:
    h = Harness(cuda)
    set_allocator(cuda, 1, 10 * MB, 20 * MB)

    def body():
        set_allocator(cuda, 1, 700 * MB, 800 * MB)
        set_allocator(cuda, 1, 300 * MB, 800 * MB)

    record = h.cell(body)
    assert [g["index"] for g in record["gpus"]] == [0, 1]
    g0, g1 = record["gpus"]
    assert (g0["allocated_before_bytes"], g0["allocated_after_bytes"], g0["allocated_peak_bytes"]) == (GB, GB, GB)
    assert (g1["allocated_before_bytes"], g1["allocated_after_bytes"], g1["allocated_peak_bytes"]) == (
        10 * MB, 300 * MB, 700 * MB
    )
    assert g1["reserved_peak_bytes"] == 800 * MB and g1["peak_exact"] is True


def test_no_cuda_call_while_cuda_is_not_initialised(fake_torch: FakeTorch) -> None:
    h = Harness(fake_torch)
    record = h.cell()
    assert record["gpus"] == []
    assert fake_torch.calls == []  # not even device_count or memory stats


def test_a_device_initialised_during_the_cell_counts_from_zero(fake_torch: FakeTorch) -> None:
    for reset in (True, False):
        fake_torch.initialized = False
        fake_torch.calls.clear()
        h = Harness(fake_torch, reset=reset)

        def body():
            fake_torch.initialized = True
            set_allocator(fake_torch, 0, 100 * MB, 128 * MB, peak=900 * MB, reserved_peak=1 * GB)

        record = h.cell(body)
        assert resets(fake_torch) == []
        assert record["gpus"][0] == {
            "index": 0,
            "allocated_before_bytes": 0,
            "allocated_after_bytes": 100 * MB,
            "allocated_peak_bytes": 900 * MB,
            "reserved_before_bytes": 0,
            "reserved_after_bytes": 128 * MB,
            "reserved_peak_bytes": 1 * GB,
            "peak_exact": True,
        }
        set_allocator(fake_torch, 0, 0, 0)


# --- torch's allocators, looked up once CUDA is initialised -----------------------------------------


def test_once_cuda_is_initialised_the_hooks_call_only_torchs_stats_and_reset(cuda: FakeTorch) -> None:
    h = Harness(cuda)
    h.cell()
    cuda.calls.clear()

    def body():
        set_allocator(cuda, 0, 3 * GB, 4 * GB)

    records = [h.cell(body), h.cell()]
    # Two cells: per device a stats read at each start and end, a reset at each start;
    # no device_count (nor is_initialized, which the fake does not log) per cell.
    assert sorted(set(cuda.calls)) == [
        ("memory_stats_as_nested_dict", 0), ("memory_stats_as_nested_dict", 1),
        ("reset_peak_memory_stats", 0), ("reset_peak_memory_stats", 1),
    ]
    assert len(cuda.calls) == 2 * 3 * 2
    assert [r["gpus"][0]["allocated_peak_bytes"] for r in records] == [3 * GB, 3 * GB]
    assert [r["gpus"][0]["allocated_before_bytes"] for r in records] == [1 * GB, 3 * GB]


def test_a_device_without_a_context_is_neither_read_nor_reset_until_it_gets_one(cuda: FakeTorch) -> None:
    # Eight GPUs and a notebook using one: the others hold nothing of torch's (no
    # context): reading their stats (~12 us each on an H100 machine) and
    # resetting their peaks at every cell would be cost for nothing.
    cuda.contexts.discard(1)
    h = Harness(cuda)
    h.cell()
    cuda.calls.clear()
    assert h.cell()["gpus"][0]["allocated_before_bytes"] == 1 * GB
    assert ("memory_stats_as_nested_dict", 1) not in cuda.calls
    assert ("reset_peak_memory_stats", 1) not in cuda.calls
    assert ("_cuda_hasPrimaryContext", 1) in cuda.calls  # asked instead, at each reading

    def body():  # the cell's first use of device 1 creates its context there
        cuda.contexts.add(1)
        set_allocator(cuda, 1, 512 * MB, 1 * GB, peak=768 * MB)
        set_allocator(cuda, 1, 256 * MB, 1 * GB)

    first_use = h.cell(body)["gpus"][1]
    # Nothing before the context, so its counters count this cell alone: exact.
    assert (first_use["allocated_before_bytes"], first_use["allocated_after_bytes"],
            first_use["allocated_peak_bytes"], first_use["peak_exact"]) == (0, 256 * MB, 768 * MB, True)
    cuda.calls.clear()
    later = h.cell(lambda: set_allocator(cuda, 1, 384 * MB, 1 * GB))["gpus"][1]
    assert (later["allocated_before_bytes"], later["allocated_peak_bytes"], later["peak_exact"]) == (
        256 * MB, 384 * MB, True
    )
    # From now on device 1 is read and reset like device 0, and not asked about again.
    assert ("reset_peak_memory_stats", 1) in cuda.calls
    assert ("_cuda_hasPrimaryContext", 1) not in cuda.calls
    assert h.recorder.last_error is None


def test_under_cuda_malloc_async_a_devices_first_context_in_a_cell_counts_from_zero(cuda: FakeTorch) -> None:
    # That backend's stats of a device without a context would create one (the
    # fake fails if they are read): which devices are read is decided at every
    # cell, and one torch says has no context holds nothing of torch's.
    cuda.allocator_backend = "cudaMallocAsync"
    cuda.contexts = {0}
    h = Harness(cuda)
    assert [g["index"] for g in h.cell()["gpus"]] == [0]
    assert ("reset_peak_memory_stats", 1) not in cuda.calls

    def body():
        cuda.contexts.add(1)
        set_allocator(cuda, 1, 512 * MB, 1 * GB, peak=10 * GB)  # 10 GB for a while, in this cell

    during = h.cell(body)["gpus"]
    assert [g["index"] for g in during] == [0, 1]
    assert (during[1]["allocated_before_bytes"], during[1]["allocated_after_bytes"]) == (0, 512 * MB)
    assert during[1]["allocated_peak_bytes"] == 10 * GB and during[1]["peak_exact"] is True
    after = h.cell(lambda: set_allocator(cuda, 1, 256 * MB, 1 * GB))["gpus"][1]
    assert (after["allocated_before_bytes"], after["allocated_after_bytes"], after["peak_exact"]) == (
        512 * MB, 256 * MB, True
    )
    assert h.recorder.last_error is None


def test_a_failed_read_at_cell_start_makes_the_start_unknown_not_zero(cuda: FakeTorch) -> None:
    h = Harness(cuda)
    h.cell()
    stats = cuda.cuda.memory.memory_stats_as_nested_dict
    calls = {"n": 0}

    def fails_once(device=None):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("CUDA error: unspecified launch failure")
        return stats(device)

    cuda.cuda.memory.memory_stats_as_nested_dict = fails_once
    torch_cuda._allocator = None  # bound again, to the failing function
    h.recorder._cuda = None
    record = h.cell(lambda: set_allocator(cuda, 0, 3 * GB, 4 * GB))
    g0 = record["gpus"][0]
    assert g0["allocated_before_bytes"] is None and g0["allocated_after_bytes"] == 3 * GB
    assert g0["peak_exact"] is False and record["peak_exact"] is False
    assert "reading torch.cuda at cell start failed" in (h.recorder.last_error or "")


def test_under_cuda_malloc_async_a_first_context_in_the_cell_counts_from_zero(cuda: FakeTorch) -> None:
    # CUDA is initialised but no device has a context yet: nothing is read or
    # reset at the start, and a device holds nothing before its context exists.
    cuda.allocator_backend = "cudaMallocAsync"
    cuda.contexts = set()
    cuda.stats = {0: nested_stats(0, 0, 0), 1: nested_stats(0, 0, 0)}  # no context: nothing held
    h = Harness(cuda)

    def body():
        cuda.contexts.add(0)
        set_allocator(cuda, 0, 256 * MB, 512 * MB, peak=384 * MB)

    g0 = h.cell(body)["gpus"][0]
    assert (g0["allocated_before_bytes"], g0["allocated_after_bytes"], g0["allocated_peak_bytes"]) == (
        0, 256 * MB, 384 * MB
    )
    assert g0["peak_exact"] is True
    assert resets(cuda) == []


def test_a_forked_child_looks_at_cuda_afresh(cuda: FakeTorch) -> None:
    h = Harness(cuda)
    h.cell()

    def in_child():
        cuda.initialized = False  # torch.cuda.is_initialized() in a child of a process that used CUDA
        cuda.calls.clear()
        record = h.cell()
        return [record["gpus"], cuda.calls, h.recorder.last_error]

    assert in_forked_child(in_child) == [[], [], None]


# --- approximate peaks -------------------------------------------------------------------------


def test_approximate_mode_resets_nothing_and_samples_the_peak(cuda: FakeTorch) -> None:
    h = Harness(cuda, reset=False)
    h.rss.set(400 * MB)
    h.rss.set(100 * MB)  # an old RSS high-water mark of 400 MB

    def body():
        set_allocator(cuda, 0, 2 * GB, 3 * GB)  # below the old 5 GB peak: the counter does not move
        h.rss.set(250 * MB)
        h.recorder.observe(figures(250 * MB, [(0, 2 * GB, 3 * GB)]))  # the sampler saw it
        set_allocator(cuda, 0, 1 * GB, 3 * GB)
        h.rss.set(120 * MB)

    record = h.cell(body)
    assert resets(cuda) == [] and h.rss.resets == 0
    g0 = record["gpus"][0]
    assert (g0["allocated_peak_bytes"], g0["reserved_peak_bytes"], g0["peak_exact"]) == (2 * GB, 3 * GB, False)
    host = record["host"]
    assert (host["rss_before_bytes"], host["rss_after_bytes"], host["rss_peak_bytes"]) == (100 * MB, 120 * MB, 250 * MB)
    assert host["peak_exact"] is False and record["peak_exact"] is False


def test_approximate_mode_without_samples_falls_back_to_before_and_after(cuda: FakeTorch) -> None:
    h = Harness(cuda, reset=False)
    h.rss.set(900 * MB)
    h.rss.set(100 * MB)

    def body():
        set_allocator(cuda, 0, 2 * GB, 2 * GB)
        h.rss.set(300 * MB)  # below the old 900 MB mark; no sample taken

    record = h.cell(body)
    assert record["gpus"][0]["allocated_peak_bytes"] == 2 * GB and record["gpus"][0]["peak_exact"] is False
    assert record["host"]["rss_peak_bytes"] == 300 * MB and record["host"]["peak_exact"] is False


def test_approximate_mode_counter_that_rose_is_exact(cuda: FakeTorch) -> None:
    h = Harness(cuda, reset=False)

    def body():
        set_allocator(cuda, 0, 7 * GB, 8 * GB)  # beats the old 5 GB peak
        set_allocator(cuda, 0, 1 * GB, 8 * GB)
        h.rss.set(500 * MB)
        h.rss.set(150 * MB)

    record = h.cell(body)
    g0 = record["gpus"][0]
    assert (g0["allocated_peak_bytes"], g0["reserved_peak_bytes"], g0["peak_exact"]) == (7 * GB, 8 * GB, True)
    assert record["host"]["rss_peak_bytes"] == 500 * MB and record["host"]["peak_exact"] is True


def test_rss_reset_unavailable_degrades_to_approximate() -> None:
    h = Harness(rss=ScriptedRss(can_reset=False))
    h.rss.set(300 * MB)
    h.rss.set(100 * MB)
    record = h.cell(lambda: h.rss.set(200 * MB))
    assert record["host"]["rss_peak_bytes"] == 200 * MB and record["host"]["peak_exact"] is False


# --- error records --------------------------------------------------------------------------------


def test_message_head_is_bounded_and_an_unprintable_error_is_survived() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    h = Harness()
    record = h.cell(error=ValueError("x" * 5000))
    assert len(record["error"]["message_head"]) == 1000
    record = h.cell(error=Unprintable())
    assert record["error"] == {"type": "Unprintable", "message_head": "", "out_of_memory": False}
    assert h.errors_sent() == []


# --- odd cells --------------------------------------------------------------------------------


def test_empty_cell_post_without_pre_makes_no_record() -> None:
    h = Harness()
    info = types.SimpleNamespace(cell_id="c", store_history=True)
    h.recorder.post_run_cell(types.SimpleNamespace(info=info, execution_count=None, error_in_exec=None,
                                                   error_before_exec=None))
    assert h.recorder.history() == [] and h.sent == []


def test_nested_cells_and_an_empty_nested_cell() -> None:
    h = Harness()
    outer = types.SimpleNamespace(cell_id="outer", store_history=True)
    inner = types.SimpleNamespace(cell_id="inner", store_history=False)
    empty = types.SimpleNamespace(cell_id="empty", store_history=False)

    def result(info, count):
        return types.SimpleNamespace(info=info, execution_count=count, error_in_exec=None, error_before_exec=None)

    h.recorder.pre_run_cell(outer)
    h.recorder.pre_run_cell(inner)
    h.recorder.post_run_cell(result(inner, 7))
    h.recorder.post_run_cell(result(empty, None))  # get_ipython().run_cell("") inside the outer cell
    h.recorder.post_run_cell(result(outer, 6))
    # %%capture's body, run_cell's code: part of the cell that ran it, whose record
    # covers it (IPython numbered it as the next cell, with no cell id of its own).
    assert [(r["cell_id"], r["execution_count"]) for r in h.recorder.history()] == [("outer", 6)]


def test_a_nested_run_that_fails_is_recorded_as_its_running_cells() -> None:
    """An out-of-memory error %%capture swallowed: the running cell ends ok, the failure has its record."""
    h = Harness()
    h.shell.execution_count = 7  # IPython already incremented it for the running cell, [6]
    outer = types.SimpleNamespace(cell_id="outer", store_history=True)
    inner = types.SimpleNamespace(cell_id=None, store_history=False, raw_cell="x = make_big()")
    h.recorder.pre_run_cell(outer)
    h.recorder.pre_run_cell(inner)
    h.recorder.post_run_cell(types.SimpleNamespace(info=inner, execution_count=7, error_before_exec=None,
                                                   error_in_exec=MemoryError("out of memory")))
    h.recorder.post_run_cell(types.SimpleNamespace(info=outer, execution_count=6, error_in_exec=None,
                                                   error_before_exec=None))
    assert [(r["cell_id"], r["execution_count"], r["status"]) for r in h.recorder.history()] == [
        ("outer", 6, "error"), ("outer", 6, "ok")
    ]


def test_a_cell_run_inside_another_keeps_both_peaks_exact(cuda: FakeTorch) -> None:
    """The inner cell's resets must not lose what the outer one reached before it."""
    h, later = deferred_harness(torch=cuda)
    outer = types.SimpleNamespace(cell_id="outer", store_history=True)
    inner = types.SimpleNamespace(cell_id="inner", store_history=False)

    def result(info, count):
        return types.SimpleNamespace(info=info, execution_count=count, error_in_exec=None, error_before_exec=None)

    h.recorder.pre_run_cell(outer)  # RSS 100 MB, allocated 1 GB
    h.rss.set(2 * GB)  # the outer cell's peaks, reached before it runs the inner cell...
    h.rss.set(200 * MB)
    set_allocator(cuda, 0, 3 * GB, 4 * GB)
    set_allocator(cuda, 0, 1 * GB, 4 * GB)
    h.recorder.pre_run_cell(inner)  # ...which resets both counters
    h.rss.set(500 * MB)
    set_allocator(cuda, 0, 2 * GB, 4 * GB)
    failed = result(inner, 7)
    failed.error_in_exec = ValueError("the nested code fails: it gets a record of its own")
    h.recorder.post_run_cell(failed)
    h.rss.set(300 * MB)  # the outer cell goes on
    set_allocator(cuda, 0, 1 * GB, 4 * GB)
    h.recorder.post_run_cell(result(outer, 6))
    later.run()
    inner_record, outer_record = h.recorder.history()
    assert inner_record["host"] == {"rss_before_bytes": 200 * MB, "rss_after_bytes": 500 * MB,
                                    "rss_peak_bytes": 500 * MB, "peak_exact": True}
    assert outer_record["host"] == {"rss_before_bytes": 100 * MB, "rss_after_bytes": 300 * MB,
                                    "rss_peak_bytes": 2 * GB, "peak_exact": True}
    assert inner_record["gpus"][0]["allocated_peak_bytes"] == 2 * GB
    assert outer_record["gpus"][0]["allocated_peak_bytes"] == 3 * GB and outer_record["peak_exact"]


def test_the_users_own_peak_reset_in_a_cell_makes_its_peak_approximate_and_keeps_what_was_seen(
    cuda: FakeTorch,
) -> None:
    """Load, reset, train, print max_memory_allocated: the counter forgets what came
    before the user's reset, so the cell's peak is what was seen, said to be approximate."""
    h = Harness(cuda)

    def body():
        set_allocator(cuda, 0, 9 * GB, 10 * GB)  # an 8 GB transient...
        h.recorder.observe(figures(100 * MB, [(0, 9 * GB, 10 * GB)]))  # ...the sampler saw
        set_allocator(cuda, 0, 1 * GB, 10 * GB)
        cuda.cuda.reset_peak_memory_stats(0)  # the user's own measurement starts
        set_allocator(cuda, 0, 1 * GB + 100 * MB, 10 * GB)

    gpu = h.cell(body)["gpus"][0]
    assert gpu["allocated_peak_bytes"] == 9 * GB and gpu["peak_exact"] is False

    def unseen():
        set_allocator(cuda, 0, 9 * GB, 10 * GB)  # a transient no sample caught
        set_allocator(cuda, 0, 512 * MB, 10 * GB)
        cuda.cuda.reset_peak_memory_stats(0)  # the counter falls below the value at the start

    gpu = h.cell(unseen)["gpus"][0]
    assert gpu["allocated_before_bytes"] == 1 * GB + 100 * MB
    assert gpu["allocated_peak_bytes"] == 1 * GB + 100 * MB and gpu["peak_exact"] is False

    def own_reset_only():
        set_allocator(cuda, 0, 3 * GB, 10 * GB)
        set_allocator(cuda, 0, 1 * GB, 10 * GB)

    gpu = h.cell(own_reset_only)["gpus"][0]
    assert gpu["allocated_peak_bytes"] == 3 * GB and gpu["peak_exact"] is True


def test_an_interrupted_notebook_cell_beside_a_subshell_cell_is_the_one_recorded_interrupted() -> None:
    """ipykernel 7 ends a cancelled (awaiting) cell with post_run_cell(None), on the
    main thread: a subshell's cell that started later, on its own thread, goes on."""
    h = Harness()
    h.shell.execution_count = 5
    notebook = types.SimpleNamespace(cell_id="notebook", store_history=True, raw_cell="await x")
    subshell = types.SimpleNamespace(cell_id="subshell", store_history=True, raw_cell="y = 1")
    h.recorder.pre_run_cell(notebook)
    started, finish = threading.Event(), threading.Event()

    def subshell_thread() -> None:
        h.recorder.pre_run_cell(subshell)
        started.set()
        finish.wait(5)
        h.recorder.post_run_cell(types.SimpleNamespace(info=subshell, execution_count=9, error_in_exec=None,
                                                       error_before_exec=None))

    thread = threading.Thread(target=subshell_thread)
    thread.start()
    assert started.wait(5)
    h.recorder.post_run_cell(None)  # the notebook's cell is interrupted while it awaits
    finish.set()
    thread.join(5)
    assert sorted((r["cell_id"], r["status"]) for r in h.recorder.history()) == [
        ("notebook", "interrupted"), ("subshell", "ok")
    ]
    assert h.recorder._pending == []


def test_cancelled_cell_is_interrupted_with_the_expected_count() -> None:
    h = Harness()
    h.shell.execution_count = 42  # IPython already incremented it for this stored cell
    h.recorder.pre_run_cell(types.SimpleNamespace(cell_id=None, store_history=True))
    h.recorder.post_run_cell(None)  # ipykernel: the cell's coroutine was cancelled
    record = h.last()
    assert (record["status"], record["error"], record["execution_count"], record["cell_id"]) == (
        "interrupted", None, 41, None
    )


def test_console_cell_and_odd_cell_ids() -> None:
    h = Harness()
    assert h.cell(cell_id=None)["cell_id"] is None
    assert h.cell(cell_id="")["cell_id"] is None
    assert h.cell(cell_id=123)["cell_id"] is None  # type: ignore[arg-type]
    assert h.cell(cell_id="x" * 1000)["cell_id"] == "x" * 256


def test_records_are_numbers_and_names_only(cuda: FakeTorch) -> None:
    h = Harness(cuda)
    h.cell(error=type("OutOfMemoryError", (RuntimeError,), {})("CUDA out of memory."))

    def leaves(value):
        if isinstance(value, dict):
            for v in value.values():
                yield from leaves(v)
        elif isinstance(value, list):
            for v in value:
                yield from leaves(v)
        else:
            yield value

    record = h.last()
    assert all(v is None or type(v) in (int, float, str, bool) for v in leaves(record))
    assert json.loads(json.dumps(record)) == record


def test_history_keeps_the_last_n_and_ids_increase() -> None:
    h = Harness(max_records=3)
    for _ in range(5):
        h.cell()
    assert [r["record_id"] for r in h.recorder.history()] == [3, 4, 5]
    assert [r["record_id"] for r in h.cells_sent()] == [1, 2, 3, 4, 5]


# --- hooks never raise --------------------------------------------------------------------------


class BrokenRss(ScriptedRss):
    def rss_and_peak(self, hold_gil=True):
        raise OSError("proc is gone")


def test_failing_sources_still_give_a_record_and_one_error_each(cuda: FakeTorch) -> None:
    def broken_stats(device=None):
        raise RuntimeError("driver exploded")

    cuda.cuda.memory.memory_stats_as_nested_dict = broken_stats
    cuda.cuda.memory_stats_as_nested_dict = broken_stats
    h = Harness(cuda, rss=BrokenRss())
    for _ in range(3):
        record = h.cell()  # must not raise
    assert record["status"] == "ok" and record["gpus"] == []
    assert record["host"]["rss_before_bytes"] is None and record["host"]["peak_exact"] is False
    errors = h.errors_sent()
    assert {e["code"] for e in errors} == {"internal"}
    assert len(errors) == 4  # RSS at start and after, torch at start and at end: each once, not per cell
    assert all("per-cell accounting" in e["message"] for e in errors)


def test_a_hook_swallows_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    h = Harness()

    def explode(*a):
        raise KeyboardInterrupt  # an interrupt landing inside the hook

    monkeypatch.setattr(h.recorder, "_wall_clock", explode)  # called early in pre_run_cell
    monkeypatch.setattr(h.recorder, "_clock", explode)  # the first thing post_run_cell does
    for _ in range(3):
        h.recorder.pre_run_cell(types.SimpleNamespace())
        h.recorder.post_run_cell(None)
    errors = h.errors_sent()
    assert [e["code"] for e in errors] == ["internal", "internal"]  # start and end, each once
    assert "measuring the cell start failed: KeyboardInterrupt" in errors[0]["message"]


# --- the sampler feeds running maxima ----------------------------------------------------------


def test_observe_ignores_readings_outside_cells_and_bad_figures() -> None:
    h = Harness()
    h.recorder.observe(figures(10 * GB))  # no cell running
    h.recorder.observe({"nonsense": True})  # never raises
    h.rss.set(500 * MB)
    h.rss.set(100 * MB)
    record = h.cell(lambda: h.rss.set(120 * MB))
    assert record["host"]["rss_peak_bytes"] == 120 * MB


def test_sampler_feeds_observers() -> None:
    from jupyterlab_vram_helper.sampler import Sampler

    seen = []
    comm = FakeComm()
    outlet = types.SimpleNamespace(targets=lambda: [comm], send=lambda t, m: None, report_error=lambda m: None)
    source = SampleSource(nvml=NvmlReader(load=_no_nvml))
    s = Sampler(source, outlet)  # type: ignore[arg-type]
    s.add_observer(lambda figures, started: seen.append((figures, started, time.perf_counter())))
    s.add_observer(lambda f, started: 1 / 0)  # a broken observer harms nothing
    before = time.perf_counter()
    s.tick()
    s.emit([comm], "snapshot")
    assert len(seen) == 2 and seen[0][0]["host"]["rss_bytes"] > 0
    # each reading comes with when it began, on per-cell accounting's clock
    assert before <= seen[0][1] <= seen[0][2] <= seen[1][1] <= seen[1][2]


@pytest.mark.parametrize("reset", [True, False])
def test_a_reading_begun_before_the_cell_started_is_not_its_peak(cuda: FakeTorch, reset: bool) -> None:
    h = Harness(cuda, reset=reset)
    set_allocator(cuda, 0, 1 * GB, 2 * GB)
    # The sampler began a reading while the previous cell still held 9 GB; the
    # next cell started before the reading reached the recorder.
    stale_start = time.perf_counter()

    def body():
        h.recorder.observe(figures(5 * GB, [(0, 9 * GB, 10 * GB)]), stale_start)
        h.rss.set(150 * MB)
        fresh_start = time.perf_counter()
        h.recorder.observe(figures(150 * MB, [(0, 1 * GB, 2 * GB)]), fresh_start)  # one of its own

    record = h.cell(body)
    g0 = record["gpus"][0]
    assert (g0["allocated_peak_bytes"], g0["reserved_peak_bytes"]) == (1 * GB, 2 * GB)
    assert record["host"]["rss_peak_bytes"] == 150 * MB


def test_a_reading_begun_before_an_inner_cell_goes_to_the_outer_one() -> None:
    h = Harness(reset=False)
    h.rss.set(900 * MB)
    h.rss.set(100 * MB)  # an old VmHWM of 900 MB: only readings tell these cells' peaks
    inner_info = types.SimpleNamespace(cell_id="inner", store_history=True, raw_cell="x")

    def outer_body():
        h.rss.set(600 * MB)
        started = time.perf_counter()  # a reading of the outer cell's 600 MB ...
        h.rss.set(200 * MB)
        h.recorder.pre_run_cell(inner_info)  # ... reaches the recorder once the inner cell runs
        h.recorder.observe(figures(600 * MB), started)
        h.recorder.post_run_cell(types.SimpleNamespace(info=inner_info, execution_count=None, error_in_exec=None,
                                                       error_before_exec=None, result=None))

    outer = h.cell(outer_body, cell_id="outer")
    inner = [r for r in h.recorder.history() if r["cell_id"] == "inner"][0]
    assert inner["host"]["rss_peak_bytes"] == 200 * MB
    assert outer["host"]["rss_peak_bytes"] == 600 * MB


def test_an_inner_cell_starting_waits_for_a_sampler_reading_being_folded_into_the_outer_cell(cuda: FakeTorch) -> None:
    # The sampler thread and an inner cell's start both raise the outer cell's
    # maxima (read, compare, write); interleaved, one of the two maxima is lost.
    h = Harness(cuda)
    inner_info = types.SimpleNamespace(cell_id="inner", store_history=True, raw_cell="x")
    folding, release = threading.Event(), threading.Event()

    def sampler_gpus():  # the sampler's figures, read while observe() folds them
        folding.set()
        release.wait(5)
        yield {"index": 0, "torch": {"allocated_bytes": 5 * GB, "reserved_bytes": 6 * GB}}

    def outer_body():
        set_allocator(cuda, 0, 9 * GB, 10 * GB)  # the outer cell's peak so far
        set_allocator(cuda, 0, 2 * GB, 10 * GB)
        sampler = threading.Thread(target=h.recorder.observe,
                                   args=({"host": {"rss_bytes": None}, "gpus": sampler_gpus()},))
        sampler.start()
        assert folding.wait(5)
        inner_start = threading.Thread(target=h.recorder.pre_run_cell, args=(inner_info,))
        inner_start.start()
        inner_start.join(0.2)
        waited = inner_start.is_alive()  # the inner cell's fold waits for the sampler's
        release.set()
        sampler.join(5)
        inner_start.join(5)
        assert waited
        h.recorder.post_run_cell(types.SimpleNamespace(info=inner_info, execution_count=None, error_in_exec=None,
                                                       error_before_exec=None, result=None))

    outer = h.cell(outer_body, cell_id="outer")
    g0 = outer["gpus"][0]
    assert (g0["allocated_peak_bytes"], g0["reserved_peak_bytes"]) == (9 * GB, 10 * GB)


def _no_nvml():
    raise ImportError("no pynvml")


# --- wiring: runtime, channel, sender ------------------------------------------------------------


class FakeEvents:
    def __init__(self) -> None:
        self.callbacks: dict = {}

    def register(self, event, cb) -> None:
        self.callbacks.setdefault(event, []).append(cb)

    def unregister(self, event, cb) -> None:
        self.callbacks[event].remove(cb)

    def trigger(self, event, *args) -> None:
        for cb in self.callbacks.get(event, []):
            cb(*args)


def test_records_broadcast_to_every_comm_and_history_request() -> None:
    manager = FakeCommManager()
    shell = types.SimpleNamespace(events=FakeEvents(), execution_count=1)
    rt = Runtime(source=SampleSource(nvml=NvmlReader(load=_no_nvml)), comm_manager=manager, shell=shell)
    rt.install()
    try:
        a = manager.open({"type": "open", "protocol": 1, "config": {"interval_s": 60, "heartbeat_s": 600}})
        b = manager.open({"type": "open", "protocol": 1})
        info = types.SimpleNamespace(cell_id="nb-cell", store_history=True)
        shell.events.trigger("pre_run_cell", info)
        shell.events.trigger(
            "post_run_cell",
            types.SimpleNamespace(info=info, execution_count=1, error_in_exec=None, error_before_exec=None),
        )
        wait_until(lambda: "cells" in a.types() and "cells" in b.types())
        (record_a,) = [m for m in a.sent if m["type"] == "cells"][0]["records"]
        (record_b,) = [m for m in b.sent if m["type"] == "cells"][0]["records"]
        assert record_a == record_b and record_a["cell_id"] == "nb-cell"
        assert SENDER_THREAD_NAME in [t.name for t in threading.enumerate()]

        b.deliver({"type": "history", "request_id": "h"})
        reply = b.sent[-1]
        assert {k: v for k, v in reply.items() if k != "result"} == {
            "type": "reply", "request_id": "h", "request_type": "history"}
        assert reply["result"]["records"] == [record_a]
        # Every sample sent so far, to either comm, is in the timeline.
        sent = {m["seq"]: m for m in a.sent + b.sent if m["type"] == "sample"}
        timeline = reply["result"]["timeline"]
        assert timeline["times"] == [sent[seq]["time"] for seq in sorted(sent)]
        assert timeline["rss_bytes"] == [sent[seq]["host"]["rss_bytes"] for seq in sorted(sent)]
    finally:
        rt.uninstall()
    assert shell.events.callbacks == {"pre_run_cell": [], "post_run_cell": []}
    assert SENDER_THREAD_NAME not in [t.name for t in threading.enumerate()]


def test_a_sender_that_could_not_take_a_round_is_asked_again_at_the_next_cell() -> None:
    # The sender's thread could not start (a cgroup's pids.max): that cell's
    # hook reports it, and the next cell queues a round again.
    h, later = deferred_harness()
    refusals = [RuntimeError("can't start new thread")]

    def call_soon(call) -> None:
        if refusals:
            raise refusals.pop()
        later(call)

    h.recorder._call_soon = call_soon
    h.run_hooks(cell_id="refused")
    assert later.calls == [] and "can't start new thread" in h.errors_sent()[-1]["message"]
    h.run_hooks(cell_id="next")
    later.run()
    assert [r["cell_id"] for r in h.cells_sent()] == ["refused", "next"]
