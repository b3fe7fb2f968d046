"""Tracks, per cell, the bytes it allocated that are still alive, and whether that figure keeps growing.

While allocations are recorded, after each cell (a ``post_run_cell`` hook in
allocation_sites.py) the helper groups the live allocations by cell and sends
every cell's figure in a ``cell_alive`` message. A cell whose figure rose
after each of its last :data:`LEAK_RUNS` runs, by at least
:data:`LEAK_MIN_GROWTH_BYTES` each time, is flagged ``growing``: a likely
leak (a list that every run appends to, a cache that is never cleared).

A run is compared with the previous run of the same notebook cell (its
``cell_id``); ipykernel compiles the same source under the same file name, so
a re-run's allocations and the earlier runs' ones that are still alive add up
in one figure, which is what a leak looks like.
"""

from __future__ import annotations

import itertools
from typing import Any

LEAK_RUNS = 3  # consecutive growing runs that make a likely leak
LEAK_MIN_GROWTH_BYTES = 1 << 20  # below this a rise is noise (caches, interned objects)
RUNS_KEPT = 8  # per cell
MAX_CELLS = 500  # cells listed in one message, largest first
MAX_TRACKED_CELLS = 2000


class CellAliveTracker:
    """Remembers, per cell, the bytes still alive after its last runs, to tell when they keep growing."""

    def __init__(self) -> None:
        self._runs: dict[str, list[list[Any]]] = {}  # cell id -> [[execution_count, total alive], ...]

    def forget(self) -> None:
        self._runs.clear()

    def ran(self, cell_id: str | None, execution_count: int | None, cells: list[dict[str, Any]]) -> None:
        """Note the figure of the cell that just ran, from ``cells`` (allocation_sites' per-cell list)."""
        if not cell_id:
            return
        total = 0
        for cell in cells:
            if cell.get("cell_id") == cell_id:
                total = cell["total_bytes"]
                break
        # The cell moves to the end at each run, so that the cells dropped first, once the
        # bound is reached, are those run longest ago, rather than a cell that ran first and
        # still runs again and again.
        runs = self._runs.pop(cell_id, None)
        if runs is None:
            if len(self._runs) >= MAX_TRACKED_CELLS:
                self._runs.pop(next(iter(self._runs)))
            runs = []
        self._runs[cell_id] = runs
        if runs and runs[-1][0] == execution_count:
            runs[-1][1] = total  # The same run was measured again, so its figure is replaced.
        else:
            runs.append([execution_count, total])
            del runs[:-RUNS_KEPT]

    def growing(self, cell_id: str | None) -> bool:
        runs = self._runs.get(cell_id or "")
        if not runs:
            return False
        # Before its first run a cell held nothing: that run's rise counts too.
        totals = ([0] if len(runs) < RUNS_KEPT else []) + [total for _, total in runs]
        if len(totals) < LEAK_RUNS + 1:
            return False
        last = totals[-(LEAK_RUNS + 1) :]
        return all(b - a >= LEAK_MIN_GROWTH_BYTES for a, b in itertools.pairwise(last))

    def message(self, cells: list[dict[str, Any]]) -> dict[str, Any]:
        """The ``cell_alive`` message: every cell's live bytes, its recent runs and the leak flag."""
        listed = []
        for cell in cells[:MAX_CELLS]:
            cell_id = cell.get("cell_id")
            runs = self._runs.get(cell_id or "", [])
            listed.append(
                dict(
                    cell,
                    runs=[{"execution_count": c, "total_bytes": t} for c, t in runs],
                    growing=self.growing(cell_id),
                )
            )
        return {"type": "cell_alive", "cells": listed}
