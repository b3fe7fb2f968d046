"""A recording someone else stopped: a GPU history switched off in a cell (or by the owner of
a shared one) and a tracemalloc stopped in a cell start again at the next boundary, and say so."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from _allocation_sites_helpers import new_sites, recording_torch
from fakes import FakeTorch, nested_stats

pytestmark = pytest.mark.usefixtures("symbolizer_never_ran")


def history_switch(torch: FakeTorch, on: bool = False) -> Callable[[str | None], None]:
    """Gives ``torch`` PyTorch's ``_cuda_isHistoryEnabled``, true while a history is
    on, and our calls turn it on and off as PyTorch's do. Returns the user's own
    ``_record_memory_history``, which turns it on and off without our knowing."""
    state = {"on": on}
    ours = torch.cuda.memory._record_memory_history

    def record(enabled: str | None = "all", **kw: Any) -> None:
        ours(enabled, **kw)
        state["on"] = enabled is not None

    def users(enabled: str | None = "all") -> None:
        state["on"] = enabled is not None

    torch.cuda.memory._record_memory_history = record
    torch._C._cuda_isHistoryEnabled = lambda: state["on"]  # type: ignore[attr-defined]
    return users


def test_a_history_switched_off_in_a_cell_starts_again_at_the_next_cell_and_says_so() -> None:
    # PyTorch's recipe (record, run, _dump_snapshot, record(enabled=None)) in a cell
    # stops our history too: recording on means on.
    torch = recording_torch(initialized=True)
    users_record = history_switch(torch)
    shell, sent, sites = new_sites(torch)
    cells = lambda total: [{"cell_id": "c", "total_bytes": total}]  # noqa: E731
    try:
        first = sites.set_recording(True, host_frames=4, gpu_max_entries=5000)["gpu"]
        assert first["state"] == "recording" and first["restart_reason"] is None
        for count, total in ((1, 2 << 20), (2, 4 << 20), (3, 6 << 20)):
            sites.alive.ran("c", count, cells(total))
        shell.run_cell("same-as-ever")  # still on: nothing happens
        assert len(torch.history_calls) == 1 and sites.alive.growing("c")  # type: ignore[attr-defined]
        sent.clear()

        users_record(None)
        torch.stats[0] = nested_stats(1 << 20, 2 << 20, 1 << 20)  # allocated while it was off
        shell.run_cell("after-their-stop")
        assert torch.history_calls[-1] == {  # type: ignore[attr-defined]
            "enabled": "all",
            "context": "alloc",
            "stacks": "python",
            "max_entries": 5000,
        }
        gpu = sent[-1]["recording"]["gpu"]
        assert gpu["state"] == "recording" and gpu["max_entries"] == 5000
        assert gpu["restart_reason"] == "stopped_elsewhere" and gpu["restart_kept_stacks"] is False
        assert gpu["restarted_at"] == gpu["started"] >= first["started"]
        assert gpu["allocated_before_bytes"] == 1 << 20  # what has no stack, counted from now
        assert not sites.alive.growing("c")  # runs before and after the gap do not compare

        shell.run_cell("next")  # on again: not restarted twice
        assert len(torch.history_calls) == 2  # type: ignore[attr-defined]
        assert sites.state()["gpu"]["restarted_at"] == gpu["restarted_at"]
    finally:
        sites.stop()
    assert torch.history_calls[-1] == {"enabled": None}  # type: ignore[attr-defined]
    assert sites.state()["gpu"]["restart_reason"] is None


def test_a_shared_history_its_owner_switched_off_is_followed_by_ours() -> None:
    torch = recording_torch(initialized=True)
    users_record = history_switch(torch, on=True)  # theirs, before recording was asked for
    shell, sent, sites = new_sites(torch)
    try:
        assert sites.set_recording(True, host_frames=4, gpu_max_entries=7000)["gpu"]["state"] == "shared"
        users_record(None)  # their dump is done
        listing = sites.sites(max_sites=5)  # a listing is a boundary too
        gpu = listing["recording"]["gpu"]
        assert gpu["state"] == "recording" and gpu["max_entries"] == 7000
        assert gpu["restart_reason"] == "stopped_elsewhere"
        assert torch.history_calls == [  # type: ignore[attr-defined]
            {"enabled": "all", "context": "alloc", "stacks": "python", "max_entries": 7000}
        ]
    finally:
        sites.stop()
    assert torch.history_calls[-1] == {"enabled": None}  # type: ignore[attr-defined]  # ours now: stopped


def test_a_torch_that_cannot_say_whether_its_history_is_on_is_never_restarted() -> None:
    torch = recording_torch(initialized=True)  # no _cuda_isHistoryEnabled
    shell, sent, sites = new_sites(torch)
    try:
        sites.set_recording(True, host_frames=4, gpu_max_entries=5000)
        for cell in ("a", "b"):
            shell.run_cell(cell)
        sites.sites(max_sites=5)
        assert len(torch.history_calls) == 1  # type: ignore[attr-defined]
        assert sites.state()["gpu"]["restarted_at"] is None
    finally:
        sites.stop()


@pytest.mark.parametrize("theirs", [False, True], ids=["ours", "shared"])
def test_a_tracemalloc_stopped_in_a_cell_starts_again_at_the_asked_depth(theirs: bool) -> None:
    if theirs:
        tracemalloc.start(3)
    shell, sent, sites = new_sites(None)
    try:
        first = sites.set_recording(True, host_frames=6, gpu_max_entries=5000)["host"]
        assert first["state"] == ("shared" if theirs else "recording")
        tracemalloc.stop()  # the user's, in a cell
        assert sites.state()["host"]["state"] == "off"
        sent.clear()
        shell.run_cell("after-the-stop")
        assert tracemalloc.is_tracing() and tracemalloc.get_traceback_limit() == 6
        host = sent[-1]["recording"]["host"]
        assert host["state"] == "recording" and host["frames"] == 6
        assert host["restart_reason"] == "stopped_elsewhere" and host["restarted_at"] == host["started"]
        after = bytearray(100_000)
        assert tracemalloc.get_object_traceback(after) is not None
    finally:
        sites.stop()
    assert not tracemalloc.is_tracing()  # ours now: stopped with recording


def test_a_settings_change_after_tracemalloc_was_stopped_says_it_restarted() -> None:
    shell, sent, sites = new_sites(None)
    cells = lambda total: [{"cell_id": "c", "total_bytes": total}]  # noqa: E731
    try:
        sites.set_recording(True, host_frames=4, gpu_max_entries=5000)
        for count, total in ((1, 2 << 20), (2, 4 << 20), (3, 6 << 20)):
            sites.alive.ran("c", count, cells(total))
        tracemalloc.stop()  # in a cell; no cell since
        host = sites.set_recording(True, host_frames=8, gpu_max_entries=9000)["host"]  # a settings change
        assert tracemalloc.get_traceback_limit() == 8
        assert host["state"] == "recording" and host["restart_reason"] == "stopped_elsewhere"
        assert not sites.alive.growing("c")  # runs across the gap do not compare
    finally:
        sites.stop()
