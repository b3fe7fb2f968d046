"""What a cell's record carries besides the kernel's own memory, read after the cell ends.

Two sources add to a record: how busy each GPU was while the cell ran (cell_load.py, from the
driver's own sample buffer) and the kernel's child processes around it (cell_processes.py). Both
are read on the sender thread once a cell has ended, never in IPython's hooks, so that the hooks
cost the same with them as without. This module keeps those reads together, apart from the
accounting of the kernel's own memory in cell_accounting.py.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from .cell_processes import read_processes_after

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import CellGpuLoad
    from ..sampling.processes.process_tree import TreeTotals
    from .cell_load import CellLoadTracker
    from .cell_readings import EndedCell

    # Reports a failed reading (what was being read, the exception) as the recorder does.
    Problem = Callable[[str, BaseException], None]


class AfterCellReadings:
    """Reads the GPU load and the kernel's processes for the cells that ended, once per sender round."""

    def __init__(
        self,
        cell_load: CellLoadTracker | None = None,
        processes: Any = None,
        processes_now: Callable[[], TreeTotals | None] | None = None,
    ):
        # Each cell's GPU load, read from the driver after it ends; None: records carry none.
        self.cell_load = cell_load
        # The process tree's reader (sampling/processes/process_tree.py), where it can read one.
        # The hooks read its ``latest`` reading; ``processes_now`` reads the tree anew after a cell.
        self.processes = processes
        self.processes_now = processes_now

    def read(self, ended: Collection[EndedCell], problem: Problem) -> dict[int, list[CellGpuLoad]] | None:
        """Give ``ended`` their processes after them, and return their GPU load entries by ``id(cell)``.

        None means that records carry no load (no tracker). A failed reading is reported through
        ``problem`` and costs only its own figures.
        """
        self._read_processes(ended, problem)
        if self.cell_load is None:
            return None
        try:
            return self.cell_load.entries([(e.cell, e.cell.started + max(0.0, e.t1 - e.cell.t0)) for e in ended])
        except Exception as exc:
            problem("reading the GPU load of the cell", exc)
            return {}

    def _read_processes(self, ended: Collection[EndedCell], problem: Problem) -> None:
        """The kernel's processes after the ended cells, read once where they may have had some."""
        if self.processes_now is None or self.processes is None:
            return
        try:
            read_processes_after(ended, self.processes.latest, self.processes_now)
        except Exception as exc:
            problem("reading the kernel's processes after the cell", exc)
