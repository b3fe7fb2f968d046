"""A kernel that ran thousands of cells: a cell that still holds memory keeps its cell id,
and a cell run again and again keeps its run history, however many other cells ran."""

from __future__ import annotations

from _allocation_sites_helpers import FakeShell

from jupyterlab_vram_helper.cells import cell_alive, cell_files
from jupyterlab_vram_helper.cells.cell_alive import CellAliveTracker
from jupyterlab_vram_helper.cells.cell_files import CellFiles

SETUP = "/tmp/ipykernel_4242/5e7u9.py"
LOOP = "/tmp/ipykernel_4242/100p.py"


def test_a_cell_run_once_long_ago_keeps_its_id_after_thousands_of_runs() -> None:
    # The setup cell loads the data once (count 1); the training cell then runs
    # more times than the notes keep. Its file still names count 1: that count's
    # cell id is what the listing needs, not those of the loop's earlier runs.
    shell = FakeShell()
    shell.compile._filename_map = {SETUP: 1}
    cells = CellFiles(shell)
    cells.note(1, "setup")
    for count in range(2, cell_files.MAX_NOTED_CELLS + 500):
        shell.compile._filename_map[LOOP] = count  # ipykernel: the file's latest run
        cells.note(count, "loop")
    cells.start_lookup()
    assert cells.resolve(SETUP) == (1, "setup")
    assert cells.resolve(LOOP) == (cell_files.MAX_NOTED_CELLS + 499, "loop")


def test_a_cell_run_again_and_again_keeps_its_runs_while_thousands_of_others_run() -> None:
    tracker = CellAliveTracker()
    alive = 0
    count = 0
    for other in range(cell_alive.MAX_TRACKED_CELLS + 10):
        count += 1
        tracker.ran(f"other-{other}", count, [])
        if other % 500 == 0 or other == cell_alive.MAX_TRACKED_CELLS + 9:
            # the leaking loop cell, run between the others: 4 MiB more at each run
            count += 1
            alive += 4 << 20
            tracker.ran("loop", count, [{"cell_id": "loop", "total_bytes": alive}])
    assert tracker.growing("loop") is True
