"""Which of torch's snapshot calls each read makes: the live blocks alone where torch can leave
the event history out (and after each cell), a listing only where it cannot, and the export as
torch's own pickle with the event history."""

from __future__ import annotations

import base64
import pickle
import types
from typing import Any

import pytest
from _allocation_sites_helpers import CELL_A, frames, new_sites, recording_torch
from fakes import wait_until

pytestmark = pytest.mark.usefixtures("symbolizer_never_ran")


def test_a_torch_whose_snapshot_always_has_the_events_still_groups_by_site() -> None:
    torch = recording_torch(initialized=True)

    def older_memory_snapshot(mempool_id: Any = None) -> list[dict[str, Any]]:
        torch.snapshots.append("segments, events built")  # type: ignore[attr-defined]
        return [{"device": 0, "blocks": list(torch.blocks)}]  # type: ignore[attr-defined]

    torch.cuda.memory.memory_snapshot = older_memory_snapshot
    shell, sent, sites = new_sites(torch)
    try:
        sites.set_recording(True, host_frames=1, gpu_max_entries=1000)
        count = shell.run_cell("cell-y")
        torch.blocks[:] = [{"state": "active_allocated", "size": 4096, "frames": frames(("/lib/x.py", 9, "f"))}]  # type: ignore[attr-defined]
        # After each cell: the host's figures alone, the events (seconds to build) not paid for.
        result = types.SimpleNamespace(info=types.SimpleNamespace(cell_id="cell-y"), execution_count=count)
        for cb in list(shell.events.callbacks["post_run_cell"]):
            cb(result)
        wait_until(lambda: [m for m in sent if m["type"] == "cell_alive"])
        assert torch.snapshots == []  # type: ignore[attr-defined]
        # A listing asked for reads them.
        listing = sites.sites(max_sites=10)
    finally:
        sites.stop()
    gpu = [d for d in listing["devices"] if d["device"] == "cuda:0"][0]
    assert gpu["total_bytes"] == 4096 and gpu["sites"][0]["bytes"] == 4096
    assert torch.snapshots == ["segments, events built"]  # type: ignore[attr-defined]


def test_a_torch_that_leaves_the_events_out_is_read_after_each_cell() -> None:
    torch = recording_torch(initialized=True)
    shell, sent, sites = new_sites(torch)
    try:
        sites.set_recording(True, host_frames=1, gpu_max_entries=1000)
        count = shell.run_cell("cell-y")
        shell.compile._filename_map = {CELL_A: count}
        torch.blocks[:] = [{"state": "active_allocated", "size": 4096, "frames": frames((CELL_A, 1, "<module>"))}]  # type: ignore[attr-defined]
        result = types.SimpleNamespace(info=types.SimpleNamespace(cell_id="cell-y"), execution_count=count)
        for cb in list(shell.events.callbacks["post_run_cell"]):
            cb(result)
        wait_until(lambda: [m for m in sent if m["type"] == "cell_alive"])
    finally:
        sites.stop()
    alive = [m for m in sent if m["type"] == "cell_alive"][-1]
    assert alive["cells"][0]["alive_bytes"]["cuda:0"] == 4096
    assert torch.snapshots == ["segments"]  # type: ignore[attr-defined]


def test_the_snapshot_export_is_torchs_own_pickle() -> None:
    torch = recording_torch(initialized=True)
    shell, sent, sites = new_sites(torch)
    try:
        sites.set_recording(True, host_frames=1, gpu_max_entries=1000)
        torch.blocks[:] = [{"state": "active_allocated", "size": 10, "frames": []}]  # type: ignore[attr-defined]
        exported = sites.gpu_snapshot()
    finally:
        sites.stop()
    data = base64.b64decode(exported["data_base64"])
    assert exported["bytes"] == len(data) and exported["reason"] is None
    assert pickle.loads(data)["segments"][0]["blocks"][0]["size"] == 10
    assert torch.snapshots == ["with the event history"]  # type: ignore[attr-defined]  # memory_viz wants it
