"""CellMemoryRecorder's per-cell peaks, with a fake torch.cuda and a scripted RSS: exact where
the counters are reset at the cell's start (or need no reset), approximate (sampled) where they
are not or cannot be."""

from __future__ import annotations

import pytest
from cell_harness import GB, MB, Harness, ScriptedRss, figures, resets
from fakes import FakeTorch, set_allocator

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
    record = h.cell(lambda: h.rss.moves(400 * MB, 150 * MB))
    assert h.rss.resets == 1
    assert record["host"] == {
        "rss_before_bytes": 100 * MB,
        "rss_after_bytes": 150 * MB,
        "rss_peak_bytes": 400 * MB,
        "peak_exact": True,
    }


@pytest.mark.parametrize("reset, can_reset", [(True, True), (False, True), (True, False)])
def test_a_vmhwm_that_is_the_rss_already_needs_no_reset_and_gives_an_exact_peak(reset: bool, can_reset: bool) -> None:
    # From the RSS on, VmHWM can only follow this cell, exactly as after a
    # reset: exact even where resets are off or impossible.
    h = Harness(reset=reset, rss=ScriptedRss(can_reset=can_reset))
    record = h.cell(lambda: h.rss.moves(700 * MB, 200 * MB))
    assert h.rss.resets == 0
    assert record["host"] == {
        "rss_before_bytes": 100 * MB,
        "rss_after_bytes": 200 * MB,
        "rss_peak_bytes": 700 * MB,
        "peak_exact": True,
    }


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
        10 * MB,
        300 * MB,
        700 * MB,
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
