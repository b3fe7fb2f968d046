"""CellMemoryRecorder and torch's allocators, looked up once CUDA is initialised: only torch's
stats and peak reset per cell, a device without a context neither read nor reset until it gets
one (cudaMallocAsync included), a failed read at the start, and a forked child."""

from __future__ import annotations

from cell_harness import GB, MB, Harness, resets
from fakes import FakeTorch, in_forked_child, nested_stats, set_allocator

from jupyterlab_vram_helper.sampling.readers import torch_cuda


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
        ("memory_stats_as_nested_dict", 0),
        ("memory_stats_as_nested_dict", 1),
        ("reset_peak_memory_stats", 0),
        ("reset_peak_memory_stats", 1),
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
    assert (
        first_use["allocated_before_bytes"],
        first_use["allocated_after_bytes"],
        first_use["allocated_peak_bytes"],
        first_use["peak_exact"],
    ) == (0, 256 * MB, 768 * MB, True)
    cuda.calls.clear()
    later = h.cell(lambda: set_allocator(cuda, 1, 384 * MB, 1 * GB))["gpus"][1]
    assert (later["allocated_before_bytes"], later["allocated_peak_bytes"], later["peak_exact"]) == (
        256 * MB,
        384 * MB,
        True,
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
        512 * MB,
        256 * MB,
        True,
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
        0,
        256 * MB,
        384 * MB,
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
