"""The sampler feeds CellMemoryRecorder's running maxima: readings outside cells and bad figures
ignored, a reading begun before a cell (or an inner cell) started goes to the one running then,
and an inner cell's start waits for a reading being folded into the outer cell."""

from __future__ import annotations

import threading
import time
import types
from typing import Any

import pytest
from cell_harness import GB, MB, Harness, _no_nvml, figures
from fakes import FakeComm, FakeTorch, known, set_allocator

from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
from jupyterlab_vram_helper.sampling.sample import SampleSource


def test_observe_ignores_readings_outside_cells_and_bad_figures() -> None:
    h = Harness()
    h.recorder.observe(figures(10 * GB))  # no cell running
    h.recorder.observe({"nonsense": True})  # never raises
    h.rss.set(500 * MB)
    h.rss.set(100 * MB)
    record = h.cell(lambda: h.rss.set(120 * MB))
    assert record["host"]["rss_peak_bytes"] == 120 * MB


def test_sampler_feeds_observers() -> None:
    from jupyterlab_vram_helper.sampling.sampler import Sampler

    seen: list[Any] = []
    comm = FakeComm()
    outlet = types.SimpleNamespace(targets=lambda: [comm], send=lambda t, m: None, report_error=lambda m: None)
    source = SampleSource(nvml=NvmlReader(load=_no_nvml))
    s = Sampler(source, outlet)  # type: ignore[arg-type]
    s.add_observer(lambda figures, started: seen.append((figures, started, time.perf_counter())))

    def broken(figures: Any, started: float) -> None:
        raise ZeroDivisionError("a broken observer")

    s.add_observer(broken)  # harms nothing
    before = time.perf_counter()
    s.tick()
    s.emit([comm], "snapshot")
    assert len(seen) == 2 and known(seen[0][0]["host"]["rss_bytes"]) > 0
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
        h.recorder.post_run_cell(
            types.SimpleNamespace(
                info=inner_info, execution_count=None, error_in_exec=None, error_before_exec=None, result=None
            )
        )

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
        sampler = threading.Thread(
            target=h.recorder.observe, args=({"host": {"rss_bytes": None}, "gpus": sampler_gpus()},)
        )
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
        h.recorder.post_run_cell(
            types.SimpleNamespace(
                info=inner_info, execution_count=None, error_in_exec=None, error_before_exec=None, result=None
            )
        )

    outer = h.cell(outer_body, cell_id="outer")
    g0 = outer["gpus"][0]
    assert (g0["allocated_peak_bytes"], g0["reserved_peak_bytes"]) == (9 * GB, 10 * GB)
