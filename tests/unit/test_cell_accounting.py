"""CellMemoryRecorder with a fake torch.cuda and a scripted RSS: peaks, outcomes, odd cases."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import types
from typing import Any, Dict, List, Optional, Tuple

import pytest

from fakes import FakeComm, FakeCommManager, FakeTorch, set_allocator
from jupyterlab_vram_helper.background_sender import SENDER_THREAD_NAME, BackgroundSender
from jupyterlab_vram_helper.cell_accounting import CellMemoryRecorder
from jupyterlab_vram_helper.cell_outcome import cell_outcome, is_out_of_memory
from jupyterlab_vram_helper.config import SamplerConfig
from jupyterlab_vram_helper.readers.host import ProcSelfRss
from jupyterlab_vram_helper.readers.nvml import NvmlReader
from jupyterlab_vram_helper.runtime import Runtime
from jupyterlab_vram_helper.sample import SampleSource

GB = 1 << 30
MB = 1 << 20


class ScriptedRss:
    """RSS figures the test sets; VmHWM behaves like the kernel's."""

    def __init__(self, rss: int = 100 * MB, can_reset: bool = True):
        self.current = rss
        self.hwm = rss
        self.can_reset = can_reset
        self.resets = 0
        self.reads: List[str] = []  # which /proc file each read would hit, in order

    def set(self, rss: int) -> None:
        self.current = rss
        self.hwm = max(self.hwm, rss)

    def rss_and_peak(self, hold_gil: bool = True) -> Tuple[Optional[int], Optional[int]]:
        self.reads.append("status" if hold_gil else "status, GIL released")
        return self.current, self.hwm

    def reset_peak(self) -> bool:
        if not self.can_reset:
            return False
        self.resets += 1
        self.hwm = self.current
        return True

    def close(self) -> None:
        pass


class Harness:
    def __init__(self, torch: Optional[FakeTorch] = None, reset: bool = True, rss: Optional[ScriptedRss] = None,
                 max_records: int = 2000, listeners: bool = True):
        self.config = SamplerConfig(reset_peak_per_cell=reset)
        self.sent: List[Any] = []
        self.rss = rss or ScriptedRss()
        self.torch = torch
        self.listeners = listeners
        self.shell = types.SimpleNamespace(execution_count=1)
        self.recorder = CellMemoryRecorder(
            config=lambda: self.config,
            send=self.sent.append,
            has_listeners=lambda: self.listeners,
            rss=self.rss,  # type: ignore[arg-type]
            torch_module=lambda: self.torch,
            shell=self.shell,
            max_records=max_records,
        )

    def cell(self, body=lambda: None, cell_id: Optional[str] = "c1", error: Optional[BaseException] = None,
             before_exec: Optional[BaseException] = None, store_history: bool = True):
        """Runs a cell through both hooks; its record, from the history."""
        self.run_hooks(body, cell_id, error, before_exec, store_history)
        return self.last()

    def run_hooks(self, body=lambda: None, cell_id: Optional[str] = "c1", error: Optional[BaseException] = None,
                  before_exec: Optional[BaseException] = None, store_history: bool = True) -> None:
        """Runs a cell through both hooks, and nothing else (a history request finishes records)."""
        info = types.SimpleNamespace(cell_id=cell_id, store_history=store_history, raw_cell="x")
        count = self.shell.execution_count
        if store_history:
            self.shell.execution_count += 1
        self.recorder.pre_run_cell(info)
        body()
        result = types.SimpleNamespace(
            info=info, execution_count=count, error_in_exec=error, error_before_exec=before_exec, result=None
        )
        self.recorder.post_run_cell(result)

    def last(self):
        history = self.recorder.history()
        return history[-1] if history else None

    def cells_sent(self):
        return [r for m in self.sent if m["type"] == "cells" for r in m["records"]]

    def errors_sent(self):
        return [m for m in self.sent if m["type"] == "error"]


def figures(rss: Optional[int], gpus=()):
    return {
        "host": {"rss_bytes": rss, "total_bytes": None, "available_bytes": None},
        "torch": {"imported": True, "cuda_initialized": True},
        "tensorflow": {"imported": False, "gpus_initialized": False},
        "gpus": [
            {"index": i, "name": None, "total_bytes": None, "nvml": None, "tensorflow": None,
             "torch": {"allocated_bytes": a, "reserved_bytes": r, "peak_allocated_bytes": None, "active_bytes": None,
                       "inactive_split_bytes": None, "num_ooms": 0, "num_alloc_retries": 0}}
            for i, a, r in gpus
        ],
    }


@pytest.fixture
def cuda(fake_torch: FakeTorch) -> FakeTorch:
    fake_torch.initialized = True
    set_allocator(fake_torch, 0, 1 * GB, 2 * GB, peak=5 * GB)  # an old peak, from before this cell
    set_allocator(fake_torch, 1, 0, 0)
    return fake_torch


def resets(torch: FakeTorch) -> List[Any]:
    return [c for c in torch.calls if c[0] == "reset_peak_memory_stats"]


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


# --- outcomes and out-of-memory recognition ------------------------------------------------


def _named(name: str, base: type = RuntimeError) -> type:
    return type(name, (base,), {})


OOM_ERRORS = [
    # torch: torch.OutOfMemoryError (= torch.cuda.OutOfMemoryError), from CUDACachingAllocator.cpp
    _named("OutOfMemoryError")(
        "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.11 GiB of which "
        "1.06 MiB is free. Including non-PyTorch memory, this process has 79.10 GiB memory in use."
    ),
    _named("OutOfMemoryError")("whatever the text"),  # by type name alone
    RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 7.93 GiB total capacity)"),  # torch < 1.13
    RuntimeError("CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported"),
    RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"),
    RuntimeError("cuDNN error: CUDNN_STATUS_ALLOC_FAILED"),
    RuntimeError("CUSOLVER_STATUS_ALLOC_FAILED"),
    RuntimeError("cuFFT error: CUFFT_ALLOC_FAILED"),
    RuntimeError("CUDA ran out of memory outside PyTorch's allocator. If this workload uses many dynamic shapes"),
    RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 4611686018427387904 bytes."),
    RuntimeError("MPS backend out of memory (MPS allocated: 1.2 GB, other allocations: 2 MB, max allowed: 18 GB)."),
    # TensorFlow: tf.errors.ResourceExhaustedError (a subclass of OpError)
    _named("ResourceExhaustedError", _named("OpError", Exception))(
        "OOM when allocating tensor with shape[32,1024,64,64] and type float on "
        "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"
    ),
    # JAX / XLA
    _named("XlaRuntimeError")("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes."),
    MemoryError(),
    _named("_ArrayMemoryError", MemoryError)("Unable to allocate 7.45 GiB for an array with shape (1000000000,)"),
]


@pytest.mark.parametrize("exc", OOM_ERRORS, ids=[f"{type(e).__name__}-{i}" for i, e in enumerate(OOM_ERRORS)])
def test_out_of_memory_is_recognised(exc: BaseException) -> None:
    assert is_out_of_memory(exc)
    status, error = cell_outcome(types.SimpleNamespace(error_in_exec=exc, error_before_exec=None))
    assert status == "error" and error is not None
    assert error["type"] == type(exc).__name__ and error["out_of_memory"] is True


def test_out_of_memory_raised_from_inside_another_error() -> None:
    try:
        try:
            raise _named("OutOfMemoryError")("CUDA out of memory.")
        except RuntimeError as inner:
            raise ValueError("training step 12 failed") from inner
    except ValueError as outer:
        assert is_out_of_memory(outer)


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("boom"),
        RuntimeError("CUDA error: device-side assert triggered"),
        RuntimeError("cuDNN error: CUDNN_STATUS_INTERNAL_ERROR"),
        RuntimeError("RESOURCE_EXHAUSTED: rate limit exceeded"),
        _named("Unprintable", Exception)(),
    ],
)
def test_other_errors_are_not_out_of_memory(exc: BaseException) -> None:
    assert not is_out_of_memory(exc)


def test_outcomes() -> None:
    assert cell_outcome(types.SimpleNamespace(error_in_exec=None, error_before_exec=None)) == ("ok", None)
    assert cell_outcome(None) == ("interrupted", None)
    status, error = cell_outcome(types.SimpleNamespace(error_in_exec=KeyboardInterrupt(), error_before_exec=None))
    assert status == "interrupted" and error == {"type": "KeyboardInterrupt", "message_head": "", "out_of_memory": False}
    status, error = cell_outcome(types.SimpleNamespace(error_in_exec=None, error_before_exec=SyntaxError("bad")))
    assert status == "error" and error["type"] == "SyntaxError"


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
    assert [(r["cell_id"], r["execution_count"]) for r in h.recorder.history()] == [("inner", 7), ("outer", 6)]


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
    h.recorder.post_run_cell(result(inner, 7))
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
    h.cell(error=_named("OutOfMemoryError")("CUDA out of memory."))

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


class LaterCalls:
    """A call_soon that runs nothing until the test says so (the sender thread, stalled)."""

    def __init__(self) -> None:
        self.calls: List[Any] = []

    def __call__(self, call) -> None:
        self.calls.append(call)

    def run(self) -> None:
        calls, self.calls = self.calls, []
        for call in calls:
            call()


def deferred_harness(**kwargs: Any) -> Tuple[Harness, LaterCalls]:
    h = Harness(**kwargs)
    later = LaterCalls()
    h.recorder._call_soon = later
    return h, later


def test_the_hooks_read_one_file_and_reset_the_rest_waits_for_the_sender_thread() -> None:
    h, later = deferred_harness()
    h.run_hooks(lambda: (h.rss.set(500 * MB), h.rss.set(100 * MB)))  # leaves VmHWM above the RSS
    later.run()
    h.rss.reads.clear()
    h.recorder.pre_run_cell(info := types.SimpleNamespace(cell_id="c1", store_history=True))
    assert h.rss.reads == ["status"] and h.rss.resets == 1
    h.rss.set(900 * MB)
    h.rss.set(300 * MB)
    h.recorder.post_run_cell(types.SimpleNamespace(info=info, execution_count=1, error_in_exec=None,
                                                   error_before_exec=None))
    assert h.rss.reads == ["status"]  # post_run_cell reads no file
    assert len(later.calls) == 1 and len(h.recorder._records) == 1 and len(h.cells_sent()) == 1
    later.run()
    assert h.rss.reads == ["status", "status, GIL released"]
    record = h.cells_sent()[-1]
    assert record["host"] == {"rss_before_bytes": 100 * MB, "rss_after_bytes": 300 * MB,
                              "rss_peak_bytes": 900 * MB, "peak_exact": True}


def test_the_next_cell_finishes_the_last_record_with_one_read_before_it_resets_the_peak() -> None:
    h, later = deferred_harness()
    h.run_hooks(lambda: (h.rss.set(800 * MB), h.rss.set(600 * MB)))  # peak 800 MB, ends at 600 MB
    h.rss.reads.clear()
    h.run_hooks(lambda: h.rss.set(650 * MB))  # starts (resets VmHWM) before the sender thread ran
    # one status read serves as the first cell's end and the second's start; no statm read
    assert h.rss.reads == ["status"]
    first, second = h.recorder.history()
    assert (first["host"]["rss_after_bytes"], first["host"]["rss_peak_bytes"]) == (600 * MB, 800 * MB)
    assert (second["host"]["rss_before_bytes"], second["host"]["rss_peak_bytes"]) == (600 * MB, 650 * MB)
    assert first["host"]["peak_exact"] and second["host"]["peak_exact"]
    later.run()  # the sender now sends the records the hooks finished, in order
    assert [r["record_id"] for r in h.cells_sent()] == [1, 2]
    assert h.cells_sent()[0] is h.recorder.history()[0]


def test_a_cell_that_starts_while_the_sender_thread_reads_the_last_ones_end_does_not_reset_under_it() -> None:
    h, later = deferred_harness()
    h.run_hooks(lambda: (h.rss.set(800 * MB), h.rss.set(300 * MB)))  # peak 800 MB, waiting for the sender
    about_to_read, go_on = threading.Event(), threading.Event()
    read_now = h.rss.rss_and_peak

    def stalled_read(hold_gil: bool = True) -> Tuple[Optional[int], Optional[int]]:
        if not hold_gil:  # the sender thread: it stalls just before its read
            about_to_read.set()
            go_on.wait(5)
        return read_now(hold_gil)

    h.rss.rss_and_peak = stalled_read  # type: ignore[method-assign]
    sender = threading.Thread(target=later.run)
    sender.start()
    assert about_to_read.wait(5)
    next_cell = threading.Thread(
        target=h.recorder.pre_run_cell, args=(types.SimpleNamespace(cell_id="c2", store_history=True),))
    next_cell.start()
    next_cell.join(0.2)  # it must wait for the sender, not reset VmHWM under it
    go_on.set()
    sender.join(5)
    next_cell.join(5)
    first = h.recorder.history()[0]
    assert (first["host"]["rss_peak_bytes"], first["host"]["peak_exact"]) == (800 * MB, True)
    assert h.rss.resets == 1  # the next cell's reset, after the read


def test_records_of_cells_that_ended_before_the_sender_ran_go_out_in_one_message() -> None:
    h, later = deferred_harness()
    for _ in range(3):  # a "Run All": the sender thread is still waiting out its round
        h.cell()
    assert h.sent == [] and len(later.calls) == 1  # one round queued, the later cells joined it
    later.run()
    cells = [m for m in h.sent if m["type"] == "cells"]
    assert len(cells) == 1 and [r["record_id"] for r in cells[0]["records"]] == [1, 2, 3]
    h.cell()  # a lone cell later: its own message
    later.run()
    assert [[r["record_id"] for r in m["records"]] for m in h.sent if m["type"] == "cells"] == [[1, 2, 3], [4]]


def test_in_an_event_loop_the_round_is_queued_on_the_loops_next_turn_not_in_the_hook() -> None:
    h, later = deferred_harness()

    async def lone_cell() -> Tuple[int, int]:
        h.run_hooks()
        in_the_hook = len(later.calls)  # the execute_reply would go out here
        await asyncio.sleep(0)  # the loop's next turn
        return in_the_hook, len(later.calls)

    assert asyncio.run(lone_cell()) == (0, 1)
    later.run()
    assert [r["record_id"] for r in h.cells_sent()] == [1]


def test_a_cell_that_starts_before_the_loops_turn_queues_the_round_itself() -> None:
    # ipykernel may run a queued cell before the loop's next turn; if that cell
    # ran for an hour, the record before it must not wait for it
    h, later = deferred_harness()

    async def back_to_back() -> Tuple[int, int]:
        h.run_hooks()
        h.recorder.pre_run_cell(types.SimpleNamespace(cell_id="long", store_history=True))
        queued_at_start = len(later.calls)
        await asyncio.sleep(0)
        return queued_at_start, len(later.calls)

    assert asyncio.run(back_to_back()) == (1, 1)  # queued by the second cell's start, and only once
    later.run()
    assert [r["record_id"] for r in h.cells_sent()] == [1]


def test_a_cell_run_inside_another_queues_its_round_at_once_even_in_an_event_loop() -> None:
    h, later = deferred_harness()

    async def nested() -> int:
        outer = types.SimpleNamespace(cell_id="outer", store_history=True)
        h.recorder.pre_run_cell(outer)
        h.run_hooks(cell_id="inner")  # get_ipython().run_cell from user code: the outer cell goes on
        return len(later.calls)

    assert asyncio.run(nested()) == 1


def stats_reads(torch: FakeTorch) -> List[Any]:
    return [c for c in torch.calls if c[0] == "memory_stats_as_nested_dict"]


def test_torch_counters_after_a_cell_are_read_by_the_sender_thread_not_the_hook(cuda: FakeTorch) -> None:
    h, later = deferred_harness(torch=cuda)
    info = types.SimpleNamespace(cell_id="c1", store_history=True)
    h.recorder.pre_run_cell(info)
    assert stats_reads(cuda) == [("memory_stats_as_nested_dict", 0), ("memory_stats_as_nested_dict", 1)]
    set_allocator(cuda, 0, 3 * GB, 4 * GB)
    set_allocator(cuda, 0, 1536 * MB, 4 * GB)
    cuda.calls.clear()
    h.recorder.post_run_cell(types.SimpleNamespace(info=info, execution_count=1, error_in_exec=None,
                                                   error_before_exec=None))
    assert cuda.calls == []  # post_run_cell leaves torch alone
    later.run()  # the sender thread: one reading per device, then the record
    assert stats_reads(cuda) == [("memory_stats_as_nested_dict", 0), ("memory_stats_as_nested_dict", 1)]
    (gpu,) = h.cells_sent()[-1]["gpus"]
    assert (gpu["allocated_before_bytes"], gpu["allocated_after_bytes"], gpu["allocated_peak_bytes"]) == (
        1 * GB, 1536 * MB, 3 * GB)
    assert gpu["peak_exact"] is True


def test_the_next_cell_reads_torch_once_for_the_last_cells_end_and_its_own_start(cuda: FakeTorch) -> None:
    h, later = deferred_harness(torch=cuda)
    h.run_hooks(lambda: (set_allocator(cuda, 0, 3 * GB, 4 * GB), set_allocator(cuda, 0, 2 * GB, 4 * GB)))
    cuda.calls.clear()

    def second_body():
        # one reading per device, then the resets: the first cell's peak was read before them
        assert [c[0] for c in cuda.calls if c[0] != "device_count"] == (
            ["memory_stats_as_nested_dict"] * 2 + ["reset_peak_memory_stats"] * 2)
        set_allocator(cuda, 0, 2560 * MB, 4 * GB)

    h.run_hooks(second_body)
    first, second = h.recorder.history()
    (g1,), (g2,) = first["gpus"], second["gpus"]
    assert (g1["allocated_after_bytes"], g1["allocated_peak_bytes"], g1["peak_exact"]) == (2 * GB, 3 * GB, True)
    assert (g2["allocated_before_bytes"], g2["allocated_peak_bytes"], g2["peak_exact"]) == (2 * GB, 2560 * MB, True)
    later.run()
    assert [r["record_id"] for r in h.cells_sent()] == [1, 2]


def test_a_history_request_finishes_waiting_records() -> None:
    h, later = deferred_harness(listeners=False)
    h.cell(lambda: h.rss.set(700 * MB))
    (record,) = h.recorder.history()
    assert record["host"]["rss_peak_bytes"] == 700 * MB
    later.run()  # the sender thread, later: nothing left to do, and nobody to send to
    assert h.sent == [] and len(h.recorder.history()) == 1


def test_without_a_listener_the_sender_thread_still_reads_the_end_of_the_cell() -> None:
    h, later = deferred_harness(listeners=False)
    h.cell(lambda: h.rss.set(700 * MB))
    assert len(later.calls) == 1
    later.run()
    h.rss.set(5 * GB)  # much later, the user loads something between cells
    (record,) = h.recorder.history()
    assert record["host"]["rss_after_bytes"] == 700 * MB and h.sent == []


def test_no_listener_no_send_but_history_kept() -> None:
    h = Harness(listeners=False)
    h.cell()
    assert h.sent == [] and len(h.recorder.history()) == 1


# --- hooks never raise --------------------------------------------------------------------------


class BrokenRss(ScriptedRss):
    def rss(self):
        raise OSError("proc is gone")

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
    s.add_observer(seen.append)
    s.add_observer(lambda f: 1 / 0)  # a broken observer harms nothing
    s.tick()
    s.emit([comm], "snapshot")
    assert len(seen) == 2 and seen[0]["host"]["rss_bytes"] > 0


def _no_nvml():
    raise ImportError("no pynvml")


# --- /proc/self on this machine -----------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="Linux /proc only")
def test_proc_self_rss_reads_and_resets_the_peak() -> None:
    psutil = pytest.importorskip("psutil")
    probe = ProcSelfRss()
    try:
        assert abs(probe.rss_and_peak()[0] - psutil.Process().memory_info().rss) < 8 * MB
        block = bytearray(64 * MB)
        for i in range(0, len(block), 4096):
            block[i] = 1
        del block
        rss, peak = probe.rss_and_peak()
        assert peak - rss > 48 * MB
        assert probe.rss_and_peak(hold_gil=False)[1] == peak  # the background thread's read agrees
        if not probe.reset_peak():
            pytest.skip("this kernel refuses /proc/self/clear_refs")
        rss, peak = probe.rss_and_peak()
        assert peak - rss < 8 * MB
    finally:
        probe.close()


@pytest.mark.parametrize(
    "status, expected",
    [
        # the kernel's layout: VmHWM just before VmRSS, tab and blanks before the figure
        (b"Name:\tpython\nVmPeak:\t  900000 kB\nVmHWM:\t  524288 kB\nVmRSS:\t  262144 kB\nRssAnon:\t 1 kB\n",
         (256 * MB, 512 * MB)),
        (b"Name:\tpython\nVmRSS:\t 1024 kB\n", (MB, None)),  # no VmHWM: the RSS still counts
        (b"Name:\tpython\nVmHWM:\t 2048 kB\nVmRSS:\t many kB\n", (None, None)),  # garbled: nothing made up
        (b"Name:\tpython\n", (None, None)),
    ],
)
def test_proc_self_rss_parses_the_status_file(tmp_path, status: bytes, expected) -> None:
    (tmp_path / "status").write_bytes(status)
    probe = ProcSelfRss(proc_self=str(tmp_path))
    try:
        assert probe.rss_and_peak() == expected
        assert probe.rss_and_peak(hold_gil=False) == expected
    finally:
        probe.close()


def test_proc_self_rss_without_proc() -> None:
    probe = ProcSelfRss(proc_self="/nonexistent/self")
    assert not probe.available
    assert probe.rss_and_peak() == (None, None) and probe.reset_peak() is False
    assert probe.rss_and_peak(hold_gil=False) == (None, None)


@pytest.mark.skipif(not hasattr(os, "fork") or not os.path.exists("/proc/self/status"), reason="needs fork and /proc")
def test_proc_self_rss_in_a_forked_child_reads_the_child() -> None:
    import psutil

    probe = ProcSelfRss()
    parent_rss = probe.rss_and_peak()[0]
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: grow by 96 MB, report what the probe and psutil say
        try:
            block = bytearray(96 * MB)
            for i in range(0, len(block), 4096):
                block[i] = 1
            os.write(write_end, json.dumps([probe.rss_and_peak()[0], psutil.Process().memory_info().rss]).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    child_probe, child_psutil = json.loads(os.read(read_end, 1000))
    os.close(read_end)
    os.waitpid(pid, 0)
    # the two processes really differ (fork shares pages lazily, the child grew 96 MB)...
    assert abs(child_psutil - parent_rss) > 32 * MB
    # ...and the probe, opened in the parent, read the child's own RSS
    assert abs(child_probe - child_psutil) < 8 * MB
    assert abs(probe.rss_and_peak()[0] - parent_rss) < 16 * MB  # and the parent's probe still reads the parent


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


def _wait(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


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
        _wait(lambda: "cells" in a.types() and "cells" in b.types())
        (record_a,) = [m for m in a.sent if m["type"] == "cells"][0]["records"]
        (record_b,) = [m for m in b.sent if m["type"] == "cells"][0]["records"]
        assert record_a == record_b and record_a["cell_id"] == "nb-cell"
        assert SENDER_THREAD_NAME in [t.name for t in threading.enumerate()]

        b.deliver({"type": "history", "request_id": "h"})
        reply = b.sent[-1]
        assert reply == {"type": "reply", "request_id": "h", "request_type": "history",
                         "result": {"records": [record_a]}}
    finally:
        rt.uninstall()
    assert shell.events.callbacks == {"pre_run_cell": [], "post_run_cell": []}
    assert SENDER_THREAD_NAME not in [t.name for t in threading.enumerate()]


def test_background_sender_sends_in_order_off_the_calling_thread() -> None:
    got = []
    threads = set()

    def broadcast(message):
        threads.add(threading.current_thread().name)
        got.append(message["n"])

    sender = BackgroundSender(broadcast)
    for n in range(50):
        sender.post({"n": n})
    _wait(lambda: len(got) == 50)
    sender.stop()
    assert got == list(range(50)) and threads == {SENDER_THREAD_NAME}


def test_background_sender_runs_a_call_one_window_later_with_everything_queued_meanwhile() -> None:
    rounds: List[List[Tuple[str, float]]] = []
    round_of: Dict[str, int] = {}
    queued: Dict[str, float] = {}

    def work(name: str):
        queued[name] = time.monotonic()

        def call() -> None:
            now = time.monotonic()
            # calls run back to back in one round; a new round starts after a pause
            if not rounds or now - rounds[-1][-1][1] > 0.05:
                rounds.append([])
            rounds[-1].append((name, now))
            round_of[name] = len(rounds) - 1
        return call

    sender = BackgroundSender(lambda message: None, window_s=0.2)
    sender.call_soon(work("lone"))
    _wait(lambda: "lone" in round_of)
    for name in ("a", "b", "c"):  # a burst, well within one window
        sender.call_soon(work(name))
        time.sleep(0.02)
    _wait(lambda: "c" in round_of)
    sender.call_soon(work("later"))
    _wait(lambda: "later" in round_of)
    sender.stop()
    assert round_of == {"lone": 0, "a": 1, "b": 1, "c": 1, "later": 2}
    lone_waited = rounds[0][0][1] - queued["lone"]
    assert 0.2 <= lone_waited < 1.0  # one window, not at once
    assert rounds[1][0][1] - queued["a"] >= 0.2  # the burst's first call waited a window
    assert rounds[1][-1][1] - queued["c"] < rounds[1][0][1] - queued["a"]  # and the rest joined it


def test_background_sender_with_no_window_runs_a_call_at_once() -> None:
    got: List[float] = []
    sender = BackgroundSender(lambda message: None, window_s=0)
    queued = time.monotonic()
    sender.call_soon(lambda: got.append(time.monotonic()))
    _wait(lambda: got)
    sender.stop()
    assert got[0] - queued < 0.5


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_background_sender_works_in_a_forked_child_and_after_a_stop() -> None:
    got = []
    sender = BackgroundSender(lambda message: got.append(message["n"]), window_s=0)
    sender.post({"n": 1})
    _wait(lambda: got == [1])
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child has no sender thread: a new one must start, or the post is lost
        try:
            child_got = []
            sender._broadcast = lambda message: child_got.append(message["n"])
            sender.post({"n": 2})
            deadline = time.monotonic() + 5
            while not child_got and time.monotonic() < deadline:
                time.sleep(0.01)
            os.write(write_end, json.dumps(child_got).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    child_got = json.loads(os.read(read_end, 1000))
    os.close(read_end)
    os.waitpid(pid, 0)
    assert child_got == [2]
    sender.stop()
    assert sender._thread is None  # the stopped thread let go of itself
    sender.post({"n": 3})  # and the next post starts a new one
    _wait(lambda: got == [1, 3])
    sender.stop()
