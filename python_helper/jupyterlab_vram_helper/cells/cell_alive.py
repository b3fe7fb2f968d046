"""Tracks, per cell, the bytes it allocated that are still alive, and whether that figure keeps growing.

While allocations are recorded, after each cell (a ``post_run_cell`` hook in
allocation_sites.py) the helper groups the live allocations by cell and sends
every cell's figure in a ``cell_alive`` message. A cell whose figure rose
after each of its last :data:`LEAK_RUNS` runs, by at least
:data:`LEAK_MIN_GROWTH_BYTES` each time, is flagged ``growing``, because that
is a likely leak, such as a list that every run appends to or a cache that is
never cleared.

A run is compared with the previous run of the same notebook cell, found by
its ``cell_id``. ipykernel compiles the same source under the same file name, so
a re-run's allocations and the earlier runs' ones that are still alive add up
in one figure, which is what a leak looks like.
"""

from __future__ import annotations

import itertools
from typing import Any

# This many consecutive growing runs make a likely leak.
LEAK_RUNS = 3
# A smaller rise is noise, from caches or interned objects.
LEAK_MIN_GROWTH_BYTES = 1 << 20
# This many runs are kept for each cell.
RUNS_KEPT = 8
# At most this many cells are listed in one message, largest first.
MAX_CELLS = 500
MAX_TRACKED_CELLS = 2000


class CellAliveTracker:
    """Remembers, per cell, the bytes still alive after its last runs, to tell when they keep growing."""

    def __init__(self) -> None:
        # This maps a cell id to its runs, each as [execution_count, total alive].
        self._runs: dict[str, list[list[Any]]] = {}

    def forget(self) -> None:
        self._runs.clear()

    def ran(self, cell_id: str | None, execution_count: int | None, cells: list[dict[str, Any]]) -> None:
        """Note the figure of the cell that just ran, from ``cells``, the per-cell list of allocation_sites.py."""
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
            # The same run was measured again, so its figure is replaced.
            runs[-1][1] = total
        else:
            runs.append([execution_count, total])
            del runs[:-RUNS_KEPT]

    def growing(self, cell_id: str | None) -> bool:
        runs = self._runs.get(cell_id or "")
        if not runs:
            return False
        # Before its first run a cell held nothing, so that run's rise counts
        # too. Once RUNS_KEPT runs are kept, the first one may have been
        # dropped, so no zero is added then.
        totals = ([0] if len(runs) < RUNS_KEPT else []) + [total for _, total in runs]
        if len(totals) < LEAK_RUNS + 1:
            return False
        last = totals[-(LEAK_RUNS + 1) :]
        return all(b - a >= LEAK_MIN_GROWTH_BYTES for a, b in itertools.pairwise(last))

    def message(self, cells: list[dict[str, Any]]) -> dict[str, Any]:
        """The ``cell_alive`` message, with every cell's live bytes, its recent runs and the leak flag."""
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
