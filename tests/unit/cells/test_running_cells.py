"""The running cells as per-cell accounting tracks them (running_cells.py): nesting
through run_cell, a kernel subshell's cells on threads of their own, and the
maxima that the sampler and an inner cell's start raise."""

from __future__ import annotations

import threading
import types

from jupyterlab_vram_helper.cells.cell_readings import PendingCell
from jupyterlab_vram_helper.cells.running_cells import RunningCells

MAIN, SUBSHELL = 1, 2


def _cell(info: object, thread: int = MAIN, cell_id: str | None = "c", count: int = 1, t0: float = 1.0) -> PendingCell:
    cell = PendingCell(id(info), cell_id, count, 0.0)
    cell.thread = thread
    cell.t0 = t0
    return cell


def _figures(rss: int, allocated: int = 0, reserved: int = 0) -> dict:
    return {
        "host": {"rss_bytes": rss},
        "gpus": [{"index": 0, "torch": {"allocated_bytes": allocated, "reserved_bytes": reserved}}],
    }


def test_code_a_cell_runs_through_run_cell_is_that_cells() -> None:
    running = RunningCells()
    outer_info, inner_info = object(), object()
    outer = _cell(outer_info, cell_id="outer", count=7)
    running.cells.append(outer)
    inner = _cell(inner_info, cell_id=None, count=8)  # IPython numbers it as the next cell
    running.nest(inner)
    assert (inner.nested, inner.cell_id, inner.execution_count) == (True, "outer", 7)
    # A subshell's cell has no running cell of its own thread: not nested.
    beside = _cell(object(), thread=SUBSHELL, cell_id="sub")
    running.nest(beside)
    assert (beside.nested, beside.cell_id) == (False, "sub")


def test_an_ended_cell_is_found_by_its_info_and_takes_its_threads_lost_cells_along() -> None:
    running = RunningCells()
    infos = [object() for _ in range(4)]
    outer = _cell(infos[0])
    lost = _cell(infos[1])  # its post_run_cell never came
    sub = _cell(infos[2], thread=SUBSHELL)  # started later, runs on
    running.cells.extend([outer, lost, sub])
    assert running.pop_ended(types.SimpleNamespace(info=infos[0])) is outer
    assert running.cells == [sub]
    assert running.pop_ended(types.SimpleNamespace(info=infos[3])) is None  # an empty cell: never started
    assert running.cells == [sub]


def test_a_cancelled_cell_is_the_innermost_of_the_calling_thread() -> None:
    running = RunningCells()
    mine, theirs = _cell(object(), thread=threading.get_ident()), _cell(object(), thread=SUBSHELL)
    running.cells.extend([mine, theirs])
    assert running.pop_ended(None) is mine  # result None: an interrupted cell that awaits
    assert running.cells == [theirs]


def test_a_reading_goes_to_the_innermost_cell_of_each_thread_that_had_started() -> None:
    running = RunningCells()
    inner_info = object()
    outer, inner = _cell(object(), t0=1.0), _cell(inner_info, t0=5.0)
    sub = _cell(object(), thread=SUBSHELL, t0=2.0)
    running.cells.extend([outer, sub, inner])
    running.observe(_figures(100, allocated=10, reserved=20), started=3.0)
    # The inner cell started after the reading began: its outer cell gets it, and the subshell's cell.
    assert (outer.sampled_rss_max, inner.sampled_rss_max, sub.sampled_rss_max) == (100, None, 100)
    running.observe(_figures(300, allocated=30, reserved=40), started=6.0)
    assert (outer.sampled_rss_max, inner.sampled_rss_max) == (100, 300)
    assert inner.sampled_gpu_max == {0: [30, 40]}
    # The inner cell ends: what it saw was its outer cell's too.
    assert running.pop_ended(types.SimpleNamespace(info=inner_info)) is inner
    running.fold_into_outer(inner)
    assert outer.sampled_rss_max == 300 and outer.sampled_gpu_max[0] == [30, 40]


def test_a_reset_inside_a_running_cell_keeps_the_peaks_it_hides() -> None:
    running = RunningCells()
    counting, not_counting = _cell(object()), _cell(object())
    counting.rss_peak_from_start = True
    running.cells.extend([counting, not_counting])
    running.keep_outer_rss_peaks(900)
    assert (counting.sampled_rss_max, not_counting.sampled_rss_max) == (900, None)
    stats = {
        "allocated_bytes": {"all": {"current": 5, "peak": 50}},
        "reserved_bytes": {"all": {"current": 8, "peak": 80}},
    }
    running.keep_outer_peaks({0: stats})
    assert counting.sampled_gpu_max == {0: [50, 80]} and counting.gpu_peaks_folded == {0}


def test_a_forked_child_gets_a_lock_its_parents_sampler_cannot_hold() -> None:
    running = RunningCells()
    held = running._maxima_lock
    held.acquire()  # held at the fork by the parent's sampler thread, which the child lacks
    try:
        running.after_fork()
        cell = _cell(object())
        running.cells.append(cell)
        # On the old lock this would wait forever: a thread, so that a failure fails, not hangs.
        reader = threading.Thread(target=running.observe, args=(_figures(42), None), daemon=True)
        reader.start()
        reader.join(5)
        assert not reader.is_alive() and cell.sampled_rss_max == 42
    finally:
        held.release()
