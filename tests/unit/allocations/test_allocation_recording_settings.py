"""Changing the recording's settings: a new host depth restarts tracemalloc (ours only, and
forgets the runs behind the leak flag), a new GPU bound clears the event history where torch can
and restarts it where it cannot."""

from __future__ import annotations

from typing import Any

import pytest
from _allocation_sites_helpers import FakeShell, make_sites, new_sites, recording_torch
from fakes import FakeTorch, known

pytestmark = pytest.mark.usefixtures("symbolizer_never_ran")


def clearing_torch() -> FakeTorch:
    """A torch whose allocator history takes ``clear_history`` (as recent PyTorch)."""
    torch = recording_torch(initialized=True)
    calls = torch.history_calls  # type: ignore[attr-defined]

    def record_impl(
        enabled: str | None = "all",
        context: str | None = "all",
        stacks: str = "all",
        max_entries: int = 1 << 62,
        device: Any = None,
        clear_history: bool = False,
    ) -> None:
        call: dict[str, Any] = {"enabled": enabled}
        if enabled is not None:
            call.update(context=context, stacks=stacks, max_entries=max_entries)
        if clear_history:
            call["clear_history"] = True
        calls.append(call)

    def record(enabled: str | None = "all", *args: Any, **kwargs: Any) -> None:
        # As PyTorch 2.x: the public call only forwards to the one that declares the parameters.
        record_impl(enabled, *args, **kwargs)

    torch.cuda.memory._record_memory_history = record
    torch.cuda.memory._record_memory_history_impl = record_impl
    return torch


def test_a_new_host_depth_restarts_tracemalloc_and_leaves_the_gpu_history_alone() -> None:
    import tracemalloc

    torch = clearing_torch()
    shell, sent, sites = new_sites(torch)
    try:
        first = sites.set_recording(True, host_frames=4, gpu_max_entries=5000)
        assert first["host"]["restarted_at"] is None and first["gpu"]["state"] == "recording"
        assert first["host"]["restart_reason"] is None
        before = bytearray(100_000)
        assert tracemalloc.get_object_traceback(before) is not None
        gpu_calls = list(torch.history_calls)  # type: ignore[attr-defined]

        same = sites.set_recording(True, host_frames=4, gpu_max_entries=5000)
        assert same["host"]["restarted_at"] is None  # the same depth: nothing restarts
        assert tracemalloc.get_object_traceback(before) is not None

        state = sites.set_recording(True, host_frames=9, gpu_max_entries=5000)
        assert tracemalloc.get_traceback_limit() == 9
        host = state["host"]
        assert host["state"] == "recording" and host["frames"] == 9
        assert host["restarted_at"] is not None and host["restarted_at"] == host["started"] >= first["host"]["started"]
        assert host["restart_reason"] == "frames"
        # tracemalloc forgot what was allocated before: it has no stack any more
        assert tracemalloc.get_object_traceback(before) is None
        after = bytearray(100_000)
        assert len(known(tracemalloc.get_object_traceback(after))) >= 1
        # the GPU history is not touched: no call, same start
        assert torch.history_calls == gpu_calls  # type: ignore[attr-defined]
        assert state["gpu"] == first["gpu"]
        assert sent[-1] == {"type": "allocation_recording", "recording": state}
    finally:
        sites.stop()
    assert not tracemalloc.is_tracing()
    assert sites.state()["host"]["restarted_at"] is None


def test_a_host_restart_forgets_the_runs_behind_the_leak_flag() -> None:
    """Live bytes drop when tracemalloc restarts: earlier runs no longer compare."""
    sites = make_sites(None, FakeShell(), [])
    cells = lambda total: [{"cell_id": "c", "total_bytes": total}]  # noqa: E731
    try:
        sites.set_recording(True, host_frames=4, gpu_max_entries=5000)
        for count, total in ((1, 2 << 20), (2, 4 << 20), (3, 6 << 20)):
            sites.alive.ran("c", count, cells(total))
        assert sites.alive.growing("c")
        sites.set_recording(True, host_frames=4, gpu_max_entries=5000)  # same depth: kept
        assert sites.alive.growing("c")
        sites.set_recording(True, host_frames=8, gpu_max_entries=5000)  # restarted: forgotten
        assert not sites.alive.growing("c")
        assert sites.alive.message(cells(1 << 20))["cells"][0]["runs"] == []
    finally:
        sites.stop()


def test_a_new_depth_never_restarts_someone_elses_tracemalloc() -> None:
    import tracemalloc

    tracemalloc.start(3)
    sites = make_sites(None, FakeShell(), [])
    try:
        sites.set_recording(True, host_frames=4, gpu_max_entries=5000)
        before = bytearray(100_000)
        state = sites.set_recording(True, host_frames=12, gpu_max_entries=5000)
        assert state["host"]["state"] == "shared" and state["host"]["frames"] == 3
        assert state["host"]["restarted_at"] is None
        assert tracemalloc.get_object_traceback(before) is not None
        sites.stop()
        assert tracemalloc.is_tracing()
    finally:
        tracemalloc.stop()


def test_a_new_gpu_bound_clears_only_the_event_history_where_torch_can() -> None:
    torch = clearing_torch()
    sites = make_sites(torch, FakeShell(), [])
    try:
        first = sites.set_recording(True, host_frames=1, gpu_max_entries=5000)
        state = sites.set_recording(True, host_frames=1, gpu_max_entries=20_000)
        assert torch.history_calls == [  # type: ignore[attr-defined]
            {"enabled": "all", "context": "alloc", "stacks": "python", "max_entries": 5000},
            # never stopped (enabled=None): the live blocks keep their stacks
            {"enabled": "all", "context": "alloc", "stacks": "python", "max_entries": 20_000, "clear_history": True},
        ]
        gpu = state["gpu"]
        assert gpu["state"] == "recording" and gpu["max_entries"] == 20_000
        assert gpu["started"] == first["gpu"]["started"]
        assert gpu["allocated_before_bytes"] == first["gpu"]["allocated_before_bytes"]
        assert gpu["restarted_at"] is not None and gpu["restart_kept_stacks"] is True
        assert gpu["restart_reason"] == "max_entries"
        # the host recording is not touched by a GPU bound
        assert state["host"]["started"] == first["host"]["started"] and state["host"]["restarted_at"] is None
    finally:
        sites.stop()
    assert sites.state()["gpu"]["restarted_at"] is None


def test_a_new_gpu_bound_restarts_the_history_where_torch_cannot_clear_it_alone() -> None:
    torch = recording_torch(initialized=True)  # its call takes no clear_history
    sites = make_sites(torch, FakeShell(), [])
    try:
        sites.set_recording(True, host_frames=1, gpu_max_entries=5000)
        state = sites.set_recording(True, host_frames=1, gpu_max_entries=20_000)
        assert torch.history_calls == [  # type: ignore[attr-defined]
            {"enabled": "all", "context": "alloc", "stacks": "python", "max_entries": 5000},
            {"enabled": None},
            {"enabled": "all", "context": "alloc", "stacks": "python", "max_entries": 20_000},
        ]
        gpu = state["gpu"]
        assert gpu["state"] == "recording" and gpu["max_entries"] == 20_000
        assert gpu["restarted_at"] == gpu["started"] and gpu["restart_kept_stacks"] is False
        assert gpu["restart_reason"] == "max_entries"
    finally:
        sites.stop()
