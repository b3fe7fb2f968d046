"""The cells running in the kernel right now, as per-cell accounting tracks them.

Cells nest: user code calls ``get_ipython().run_cell`` (as ``%%capture`` or a
notebook runner do), and each call fires ``pre_run_cell`` inside the running
cell. A kernel subshell (ipykernel 7) runs cells on threads of its own, at
the same time as the notebook's. So the running cells form one list,
outermost first, in which each thread's cells form a stack; that list is
:class:`RunningCells`.

The cell hooks read and append to :attr:`RunningCells.cells` directly, keeping
it under :data:`MAX_PENDING_CELLS`, because their common path is one cell
with no nesting, and every call layer costs them time with cold caches. What
nesting and threads need is here, off that path. The sampler thread and a
cell starting inside another both raise a running cell's maxima, under one
lock.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from ..sampling.readers import torch_cuda
from .cell_processes import CellTree
from .cell_readings import GpuReading, PendingCell, max_known, raise_gpu_max

# Deeper nesting means that a post_run_cell was lost somewhere, so the oldest
# cells are dropped.
MAX_PENDING_CELLS = 32

_get_ident = threading.get_ident


class RunningCells:
    """The running cells, outermost first, as the module docstring describes."""

    def __init__(self) -> None:
        # The list is never replaced, only changed in place, because the
        # recorder keeps it as its own attribute.
        self.cells: list[PendingCell] = []
        # This is held while a running cell's maxima are raised, since that
        # reads, compares and writes.
        self._maxima_lock = threading.Lock()

    def after_fork(self) -> None:
        """Make a new lock in a forked child, because the sampler thread may have
        held the old one at the fork."""
        self._maxima_lock = threading.Lock()

    def innermost_position(self, thread: int) -> int:
        """The position of the innermost running cell of ``thread``, or -1 when it runs none."""
        cells = self.cells
        for position in range(len(cells) - 1, -1, -1):
            if cells[position].thread == thread:
                return position
        return -1

    def innermost_of(self, thread: int) -> PendingCell | None:
        """The innermost running cell of ``thread``, if any."""
        position = self.innermost_position(thread)
        return self.cells[position] if position >= 0 else None

    def nest(self, cell: PendingCell) -> None:
        """Mark ``cell`` as nested if it is code that the running cell of its thread
        runs through run_cell, such as %%capture's body or get_ipython().run_cell.

        Such code has no cell of its own, although IPython numbers it as the
        next cell, so it is part of that cell, whose record covers it. Only a
        failure of its own, such as an out-of-memory error that %%capture
        swallowed, gets a record, as that cell's.
        """
        outer = self.innermost_of(cell.thread)
        if outer is not None:
            cell.nested = True
            cell.cell_id = outer.cell_id
            cell.execution_count = outer.execution_count

    def pop_ended(self, result: Any) -> PendingCell | None:
        """Remove and return the running cell that ``result`` ends. This is off the
        common path, because the hook checks the innermost cell first."""
        cells = self.cells
        if result is None:
            # The cell was cancelled, as an interrupted cell that awaits is. It
            # is the innermost running cell of this thread, not a subshell's
            # that started after it.
            position = self.innermost_position(_get_ident())
        else:
            info_id = id(getattr(result, "info", None))
            position = next((p for p in range(len(cells) - 1, -1, -1) if cells[p].info_id == info_id), -1)
        if position < 0:
            # This is an empty cell, whose pre_run_cell never fired.
            return None
        cell = cells[position]
        # The cells of its thread above it never got their post_run_cell, so
        # they are forgotten. Another thread's cells, such as a subshell's cell
        # that started later and runs on, stay.
        cells[position:] = [other for other in cells[position + 1 :] if other.thread != cell.thread]
        return cell

    def fold_into_outer(self, cell: PendingCell) -> None:
        """Fold ``cell``'s maxima into the cell it ran inside. The sampler's readings
        went to the innermost cell, but they were the outer cell's too."""
        outer = self.innermost_of(cell.thread)
        if outer is None:
            return
        with self._maxima_lock:
            if cell.sampled_rss_max is not None:
                outer.sampled_rss_max = max_known(outer.sampled_rss_max, cell.sampled_rss_max)
            for index, (allocated, reserved) in cell.sampled_gpu_max.items():
                raise_gpu_max(outer, index, allocated, reserved)

    def keep_outer_peaks(self, reading: GpuReading) -> None:
        """Fold the peaks that the running cells have reached so far (``reading``)
        into their maxima, before a cell that runs inside them resets the peaks,
        which would hide them."""
        with self._maxima_lock:
            for index, stats in reading.items():
                counters = torch_cuda.counters_from_stats(stats)
                if counters is not None:
                    for outer in self.cells:
                        raise_gpu_max(outer, index, counters.allocated_peak, counters.reserved_peak)
                        outer.gpu_peaks_folded.add(index)

    def keep_outer_rss_peaks(self, high_water: int | None) -> None:
        """Fold the high-water mark into the maxima of the running cells that count
        from their start, before a cell that runs inside them resets VmHWM, which
        would hide it."""
        with self._maxima_lock:
            for outer in self.cells:
                if outer.rss_peak_from_start:
                    outer.sampled_rss_max = max_known(outer.sampled_rss_max, high_water)

    def observe(self, figures: Mapping[str, Any], started: float | None) -> None:
        """Fold one sampler reading into the innermost cell of each thread that runs
        one, where that cell had started by ``started`` (see
        CellMemoryRecorder.observe). Every thread gets it, because a kernel
        subshell's cells run beside the notebook's, and the figures are the
        process's."""
        cells = self.cells
        threads: set[int] = set()
        for position in range(len(cells) - 1, -1, -1):
            cell = cells[position]
            if cell.thread in threads or (started is not None and not 0.0 < cell.t0 <= started):
                continue
            threads.add(cell.thread)
            self._fold_reading(cell, figures)

    def _fold_reading(self, cell: PendingCell, figures: Mapping[str, Any]) -> None:
        rss = figures["host"]["rss_bytes"]
        with self._maxima_lock:
            if rss is not None and (cell.sampled_rss_max is None or rss > cell.sampled_rss_max):
                cell.sampled_rss_max = rss
            for gpu in figures["gpus"]:
                torch_figures = gpu["torch"]
                if torch_figures is not None:
                    raise_gpu_max(cell, gpu["index"], torch_figures["allocated_bytes"], torch_figures["reserved_bytes"])
            processes = figures.get("processes")
            if processes is not None and (cell.tree is not None or processes["processes"]):
                if cell.tree is None:
                    cell.tree = CellTree(None)  # none at its start (its hook keeps nothing then)
                cell.tree.fold(processes)
