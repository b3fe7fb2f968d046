"""Grouping allocations: GPU blocks charged to the innermost notebook frame, cell files resolved
in both name forms (edited versions listed with their latest run), the helper's own allocations
kept apart, and a cell flagged as growing after three rises."""

from __future__ import annotations

from typing import Any

import pytest
from _allocation_sites_helpers import CELL_A, CELL_B, FakeShell, frames, make_sites, new_sites, recording_torch

from jupyterlab_vram_helper.allocations.site_grouping import SiteGrouper
from jupyterlab_vram_helper.cells.cell_files import CellFiles

pytestmark = pytest.mark.usefixtures("symbolizer_never_ran")


def test_a_cell_whose_edited_versions_hold_memory_is_listed_with_its_latest_run() -> None:
    old_version, new_version = "/tmp/ipykernel_1/111.py", "/tmp/ipykernel_1/222.py"
    shell = FakeShell()
    sent: list[dict[str, Any]] = []
    shell.compile._filename_map = {new_version: 11, old_version: 10}
    sites = make_sites(None, shell, sent)
    sites.cells.shell = shell
    sites.cells.note(10, "cell-x")
    sites.cells.note(11, "cell-x")
    sites.cells.start_lookup()
    for order in ([new_version, old_version], [old_version, new_version]):
        cells = sites._cells({name: {"host": 5} for name in order})
        assert cells == [{"execution_count": 11, "cell_id": "cell-x", "alive_bytes": {"host": 10}, "total_bytes": 10}]


def test_gpu_blocks_are_charged_to_the_innermost_notebook_frame() -> None:
    torch = recording_torch(initialized=True)
    shell, sent, sites = new_sites(torch)
    shell.compile._filename_map = {CELL_A: 4}
    try:
        sites.set_recording(True, host_frames=4, gpu_max_entries=1000)
        count = shell.run_cell("the-cell")
        shell.compile._filename_map = {CELL_A: count}  # IPython compiled the cell under CELL_A
        library = ("/site-packages/torch/nn/modules/linear.py", 125, "forward")
        torch.blocks[:] = [  # type: ignore[attr-defined]
            {"state": "active_allocated", "size": 3 << 20, "frames": frames(library, (CELL_A, 7, "<module>"))},
            {"state": "active_allocated", "size": 1 << 20, "frames": frames((CELL_A, 7, "<module>"))},
            {"state": "active_allocated", "size": 2 << 20, "frames": frames((CELL_A, 3, "<module>"))},
            {"state": "inactive", "size": 50 << 20, "frames": frames((CELL_A, 3, "<module>"))},  # cached, not live
            {"state": "active_allocated", "size": 512, "frames": []},  # before recording
            {"state": "active_allocated", "size": 1024, "frames": frames(("/lib/x.py", 9, "f"))},
        ]
        listing = sites.sites(max_sites=10)
    finally:
        sites.stop()
    gpu = [d for d in listing["devices"] if d["device"] == "cuda:0"][0]
    assert gpu["index"] == 0
    assert gpu["total_bytes"] == (6 << 20) + 512 + 1024
    assert gpu["unattributed_bytes"] == 512
    top = gpu["sites"][0]
    assert top["cell"] == {"execution_count": count, "cell_id": "the-cell", "line": 7}
    assert top["bytes"] == 4 << 20 and top["count"] == 2
    assert top["library_frame"] == {"filename": library[0], "line": 125, "function": "forward"}
    assert [s["bytes"] for s in gpu["sites"]] == [4 << 20, 2 << 20, 1024]
    outside = gpu["sites"][2]
    assert outside["cell"] is None and outside["frame"] == {"filename": "/lib/x.py", "line": 9, "function": "f"}
    assert listing["cells"][0]["cell_id"] == "the-cell"
    assert listing["cells"][0]["alive_bytes"]["cuda:0"] == 6 << 20
    # Grouping reads the live blocks alone: the event history would cost seconds.
    assert torch.snapshots == ["segments"]  # type: ignore[attr-defined]


def test_cell_files_resolve_both_name_forms() -> None:
    shell = FakeShell()
    cells = CellFiles(shell)
    cells.note(4, "id-4")
    cells.start_lookup()
    assert cells.resolve(CELL_A) == (4, "id-4")
    assert cells.resolve(CELL_B) == (9, None)
    assert cells.resolve("/tmp/ipykernel_77/abcdef.py") == (None, None)  # a cell whose count is unknown
    assert cells.resolve("/usr/lib/python3/json/decoder.py") is None


def test_the_helpers_own_allocations_are_not_charged_to_the_user() -> None:
    grouper = SiteGrouper(CellFiles(FakeShell()))
    grouper.add(100, (("<jupyterlab-vram>/jupyterlab_vram_helper/x.py", 1, None), (CELL_B, 2, None)), count=3)
    result = grouper.result("host", 5)
    assert (result["helper_bytes"], result["helper_count"], result["sites"]) == (100, 3, [])
    # The totals include them: the panel takes them out of its heading, and says so.
    assert (result["total_bytes"], result["count"]) == (100, 3)


def test_a_cell_is_growing_after_three_rises_of_a_megabyte_or_more() -> None:
    from jupyterlab_vram_helper.cells.cell_alive import CellAliveTracker

    tracker = CellAliveTracker()
    mib = 1 << 20

    def ran(count: int, total: int) -> bool:
        tracker.ran("c", count, [{"cell_id": "c", "total_bytes": total}, {"cell_id": "other", "total_bytes": 1}])
        return tracker.growing("c")

    assert [ran(1, 5 * mib), ran(2, 10 * mib), ran(3, 15 * mib)] == [False, False, True]
    assert ran(4, 15 * mib + 100) is False  # a rise below a megabyte is noise
    assert ran(5, 20 * mib) is False and ran(6, 25 * mib) is False and ran(7, 30 * mib) is True
    assert ran(7, 1) is False  # the same run measured again replaces its figure
    tracker.ran("gone", 9, [])  # a cell with nothing alive counts 0
    assert tracker.growing("gone") is False and tracker.growing(None) is False
    message = tracker.message([{"cell_id": "c", "total_bytes": 1, "execution_count": 7, "alive_bytes": {"host": 1}}])
    assert message["type"] == "cell_alive" and message["cells"][0]["growing"] is False
    assert len(message["cells"][0]["runs"]) == 7
