"""The kernel's processes around one cell: the ``processes`` section of a cell record.

The kernel's own figures in a record are exact (its counters are reset at the
cell's start). Its processes' are not: the sampler thread reads their tree
(sampling/processes/), the cell hooks only keep the last reading at the
cell's start (one attribute read), the sampler folds each reading during the
cell into maxima, and the sender thread reads the tree once more after the
cell. So the peak is a sampled maximum, named as such in the record with the
readings' spacing. With no process before, during or after the cell the
record has no such section, and nothing is read for it.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..sampling.processes.process_tree import MIN_INTERVAL_S, TreeTotals

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import CellProcessTree


class CellTree:
    """What a running cell keeps of its processes' readings (numbers only)."""

    __slots__ = ("before", "host_max", "gpu_max", "most", "samples")

    def __init__(self, before: TreeTotals | None):
        self.before = before
        self.host_max = before.host_bytes if before is not None else 0
        self.gpu_max: dict[int, int] = {}
        self.most = before.processes if before is not None else 0
        self.samples = 0
        if before is not None:
            self._fold_gpus(before.gpus)

    def fold(self, processes: Mapping[str, Any]) -> None:
        """One sampler reading of the tree (the sample's ``processes``) during the cell."""
        self.samples += 1
        totals = processes["totals"]
        if totals is None:
            return
        self.most = max(self.most, len(processes["processes"]))
        host = totals["processes_host_bytes"] or 0
        if host > self.host_max:
            self.host_max = host
        self._fold_gpus({gpu["index"]: gpu["processes_used_bytes"] for gpu in totals["gpus"]})

    def _fold_gpus(self, gpus: Mapping[int, int | None]) -> None:
        for index, used in gpus.items():
            if used is not None and used > self.gpu_max.get(index, 0):
                self.gpu_max[index] = used

    def seen(self) -> bool:
        """Whether the kernel had a process at its start or at a reading during it."""
        return self.most > 0


def read_processes_after(
    ended: Iterable[Any], latest: TreeTotals | None, read: Callable[[], TreeTotals | None]
) -> None:
    """Give the ended cells (cell_readings.EndedCell) the processes' totals after them, read once,
    where they may have had processes (the sender thread; nothing is read otherwise)."""
    cells = list(ended)
    if not any(may_have_processes(cell.cell.tree, latest) for cell in cells):
        return
    after = read()
    for cell in cells:
        if cell.cell.tree is None and after is not None:
            cell.cell.tree = CellTree(None)  # none at its start: they came during it
        cell.tree_after = after


def may_have_processes(tree: CellTree | None, latest: TreeTotals | None) -> bool:
    """Whether a reading after the cell is worth making: processes were seen, or the kernel's
    multiprocessing has started some (a cell shorter than the readings' spacing)."""
    if latest is not None or (tree is not None and tree.seen()):
        return True
    children = getattr(sys.modules.get("multiprocessing.process"), "_children", None)
    return bool(children)


def spacing_s(interval_s: float) -> float:
    """How far apart the tree's readings are at the sampler's ``interval_s``."""
    return interval_s * max(1, math.ceil(MIN_INTERVAL_S / interval_s - 1e-9))


def processes_section(tree: CellTree, after: TreeTotals | None, interval_s: float) -> CellProcessTree | None:
    """The record's ``processes``; None where the kernel had none at any reading of the cell."""
    if not tree.seen() and after is None:
        return None
    before = tree.before
    host_before = before.host_bytes if before is not None else 0
    host_after = after.host_bytes if after is not None else 0
    gpus_after = after.gpus if after is not None else {}
    gpus_before = before.gpus if before is not None else {}
    indices = sorted(set(tree.gpu_max) | {i for i, used in gpus_after.items() if used})
    return {
        "host_before_bytes": host_before,
        "host_after_bytes": host_after,
        "host_sampled_max_bytes": max(tree.host_max, host_after),
        "processes_before": before.processes if before is not None else 0,
        "processes_after": after.processes if after is not None else 0,
        "sample_spacing_s": spacing_s(interval_s),
        # The readings at its start and after it, and those during it.
        "samples": tree.samples + 2,
        "gpus": [
            {
                "index": index,
                "before_bytes": gpus_before.get(index, 0),
                "after_bytes": gpus_after.get(index, 0),
                "sampled_max_bytes": _max_known(tree.gpu_max.get(index, 0), gpus_after.get(index, 0)),
            }
            for index in indices
        ],
    }


def _max_known(*values: int | None) -> int | None:
    known = [value for value in values if value is not None]
    return max(known) if known else None
