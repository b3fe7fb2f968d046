"""Turning allocation recording on: the GPU history waits for CUDA and starts at the next
cell or listing, a history the user started is read and never reconfigured or stopped, and a
torch without an allocator history is unavailable."""

from __future__ import annotations

import pytest
from _allocation_sites_helpers import CELL_A, frames, new_sites, recording_torch
from fakes import FakeProps, FakeTorch

pytestmark = pytest.mark.usefixtures("symbolizer_never_ran")


def test_gpu_recording_waits_for_cuda_and_starts_at_the_next_cell() -> None:
    torch = recording_torch(initialized=False)
    shell, sent, sites = new_sites(torch)
    try:
        state = sites.set_recording(True, host_frames=4, gpu_max_entries=5000)
        assert state["gpu"]["state"] == "waiting" and "CUDA is not initialised" in state["gpu"]["reason"]
        assert torch.history_calls == []  # type: ignore[attr-defined]
        assert not any(c[0] in ("device_count", "get_device_properties") for c in torch.calls)

        torch.initialized = True  # the user's next cell brought CUDA up
        shell.run_cell("cell-x")
        assert torch.history_calls == [  # type: ignore[attr-defined]
            {"enabled": "all", "context": "alloc", "stacks": "python", "max_entries": 5000}
        ]
        started = sent[-1]["recording"]["gpu"]
        assert started["state"] == "recording" and started["max_entries"] == 5000
        # what was allocated before recording started is said, not hidden
        assert started["allocated_before_bytes"] == 4096
    finally:
        sites.stop()
    assert torch.history_calls[-1] == {"enabled": None}  # type: ignore[attr-defined]  # stopped and freed
    assert shell.events.callbacks == {"pre_run_cell": [], "post_run_cell": []}


def test_a_listing_that_starts_the_gpu_history_tells_every_comm() -> None:
    torch = recording_torch(initialized=False)
    shell, sent, sites = new_sites(torch)
    try:
        sites.set_recording(True, host_frames=4, gpu_max_entries=5000)
        torch.initialized = True  # CUDA came up; the next boundary is a listing, not a cell
        listing = sites.sites(max_sites=10)
        assert listing["recording"]["gpu"]["state"] == "recording"
        assert sent and sent[-1]["type"] == "allocation_recording"
        assert sent[-1]["recording"]["gpu"] == listing["recording"]["gpu"]
    finally:
        sites.stop()


def test_a_history_the_user_started_is_read_never_reconfigured_or_stopped() -> None:
    torch = recording_torch(initialized=True)
    torch._C._cuda_isHistoryEnabled = lambda: True  # type: ignore[attr-defined]  # their _record_memory_history(...)
    shell, sent, sites = new_sites(torch)
    shell.compile._filename_map = {CELL_A: 4}
    try:
        state = sites.set_recording(True, host_frames=4, gpu_max_entries=5000)
        assert state["gpu"]["state"] == "shared" and state["gpu"]["max_entries"] is None
        count = shell.run_cell("the-cell")
        shell.compile._filename_map = {CELL_A: count}
        torch.blocks[:] = [{"state": "active_allocated", "size": 2 << 20, "frames": frames((CELL_A, 3, "<module>"))}]  # type: ignore[attr-defined]
        gpu = [d for d in sites.sites(max_sites=10)["devices"] if d["device"] == "cuda:0"][0]
        assert gpu["sites"][0]["cell"]["line"] == 3 and gpu["sites"][0]["bytes"] == 2 << 20  # read as it is
        assert sites.set_recording(True, host_frames=4, gpu_max_entries=9000)["gpu"]["state"] == "shared"
        sites.set_recording(False, host_frames=4, gpu_max_entries=9000)
    finally:
        sites.stop()
    assert torch.history_calls == []  # type: ignore[attr-defined]  # never started, resized, cleared or stopped


def test_a_torch_without_allocator_history_is_unavailable_and_not_retried() -> None:
    torch = FakeTorch([FakeProps("H100", 80 << 30, "GPU-0")], initialized=True)
    shell, sent, sites = new_sites(torch)
    try:
        state = sites.set_recording(True, host_frames=1, gpu_max_entries=1000)
        assert state["gpu"]["state"] == "unavailable" and "no allocator history" in state["gpu"]["reason"]
        shell.run_cell("c")
        assert sites.state()["gpu"]["state"] == "unavailable"
    finally:
        sites.stop()
    assert sites.state()["gpu"] == {
        "state": "off",
        "max_entries": None,
        "started": None,
        "allocated_before_bytes": None,
        "reason": None,
        "restarted_at": None,
        "restart_kept_stacks": None,
        "restart_reason": None,
    }
