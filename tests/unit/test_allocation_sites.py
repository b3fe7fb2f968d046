"""Recording allocations: the GPU path against a fake torch.cuda, the grouping, the cell-file names."""

from __future__ import annotations

import base64
import importlib.util
import os
import pickle
import subprocess
import sys
import tracemalloc
import types
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

from fakes import CountsFirstShell, FakeProps, FakeTorch, nested_stats, wait_until
from jupyterlab_vram_helper import gpu_allocations
from jupyterlab_vram_helper.allocation_sites import AllocationSites
from jupyterlab_vram_helper.cell_files import CellFiles
from jupyterlab_vram_helper.protocol import RequestError, parse_request
from jupyterlab_vram_helper.site_grouping import SiteGrouper

CELL_A = "/tmp/ipykernel_4242/1f2e3d4c.py"  # ipykernel's name of a cell
CELL_B = "<ipython-input-9-0123456789ab>"  # plain IPython's


class FakeEvents:
    def __init__(self) -> None:
        self.callbacks: Dict[str, List[Callable[..., Any]]] = {"pre_run_cell": [], "post_run_cell": []}

    def register(self, event: str, cb: Callable[..., Any]) -> None:
        self.callbacks[event].append(cb)

    def unregister(self, event: str, cb: Callable[..., Any]) -> None:
        self.callbacks[event].remove(cb)


class FakeShell(CountsFirstShell):
    def __init__(self) -> None:
        super().__init__()
        self.events = FakeEvents()
        self.compile = types.SimpleNamespace(_filename_map={CELL_A: 4})

    def run_cell(self, cell_id: str) -> int:
        """Fire pre_run_cell as IPython does; returns the cell's execution count."""
        info = types.SimpleNamespace(cell_id=cell_id, store_history=True)
        count = self.execution_count
        self.execution_count += 1  # already counted when pre_run_cell fires (see cell_accounting.py)
        for cb in list(self.events.callbacks["pre_run_cell"]):
            cb(info)
        return count


@pytest.fixture(autouse=True)
def symbolizer_never_ran(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Each test starts in a process where PyTorch's symbolizer has not run (the
    fake's marks it run as the real one does: torch._inductor imported)."""
    monkeypatch.setattr(gpu_allocations, "_symbolizer_ran", False)
    real = sys.modules.pop("torch._inductor", None)
    yield
    sys.modules.pop("torch._inductor", None)
    if real is not None:
        sys.modules["torch._inductor"] = real


def recording_torch(initialized: bool) -> FakeTorch:
    torch = FakeTorch([FakeProps("H100", 80 << 30, "GPU-0")], initialized=initialized)
    torch.stats[0] = nested_stats(4096, 8192, 4096)
    torch.history_calls: List[Dict[str, Any]] = []  # type: ignore[attr-defined]
    torch.blocks: List[Dict[str, Any]] = []  # type: ignore[attr-defined]

    def record(enabled: Optional[str] = "all", **kw: Any) -> None:
        assert torch.initialized, "recording before CUDA is initialised would initialise it"
        torch.history_calls.append(dict(kw, enabled=enabled))  # type: ignore[attr-defined]

    torch.snapshots: List[str] = []  # type: ignore[attr-defined]  # which snapshot call, each time

    def segments() -> List[Dict[str, Any]]:
        return [{"device": 0, "blocks": list(torch.blocks)}]  # type: ignore[attr-defined]

    # Whether a snapshot ever ran the symbolizer for the first time while tracemalloc traced
    torch.first_symbolization_traced = False  # type: ignore[attr-defined]

    def symbolized_by_snapshot() -> None:
        if "torch._inductor" not in sys.modules:  # the first symbolization, as PyTorch's snapshot makes it
            torch.first_symbolization_traced |= tracemalloc.is_tracing()  # type: ignore[attr-defined]
            sys.modules["torch._inductor"] = types.ModuleType("torch._inductor")

    def snapshot(device: Any = None) -> Dict[str, Any]:
        torch.snapshots.append("with the event history")  # type: ignore[attr-defined]
        symbolized_by_snapshot()
        return {"segments": segments(), "device_traces": [[]]}

    def memory_snapshot(mempool_id: Any = None, include_traces: bool = True) -> List[Dict[str, Any]]:
        torch.snapshots.append("segments" if include_traces is False else "segments, events built")  # type: ignore[attr-defined]
        symbolized_by_snapshot()
        return segments()

    # PyTorch's stack symbolizer: whether tracemalloc traced, at each run of it
    torch.symbolized: List[bool] = []  # type: ignore[attr-defined]

    def symbolize_tracebacks(tracebacks: List[Any]) -> List[Any]:
        torch.symbolized.append(tracemalloc.is_tracing())  # type: ignore[attr-defined]
        sys.modules["torch._inductor"] = types.ModuleType("torch._inductor")  # what its first run imports
        return [[] for _ in tracebacks]

    torch._C._profiler = types.SimpleNamespace(  # type: ignore[attr-defined]
        gather_traceback=lambda python, script, cpp: object(), symbolize_tracebacks=symbolize_tracebacks
    )
    torch.cuda.memory._record_memory_history = record
    torch.cuda.memory._snapshot = snapshot
    torch.cuda.memory.memory_snapshot = memory_snapshot
    return torch


def frames(*spec: Any) -> List[Dict[str, Any]]:
    return [{"filename": f, "line": line, "name": name} for f, line, name in spec]


def make_sites(torch: Optional[FakeTorch], shell: FakeShell, sent: List[Dict[str, Any]]) -> AllocationSites:
    return AllocationSites(shell=lambda: shell, broadcast=sent.append, torch_module=lambda: torch)


def test_gpu_recording_waits_for_cuda_and_starts_at_the_next_cell() -> None:
    torch = recording_torch(initialized=False)
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
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
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
    try:
        sites.set_recording(True, host_frames=4, gpu_max_entries=5000)
        torch.initialized = True  # CUDA came up; the next boundary is a listing, not a cell
        listing = sites.sites(max_sites=10)
        assert listing["recording"]["gpu"]["state"] == "recording"
        assert sent and sent[-1]["type"] == "allocation_recording"
        assert sent[-1]["recording"]["gpu"] == listing["recording"]["gpu"]
    finally:
        sites.stop()


def test_a_cell_whose_edited_versions_hold_memory_is_listed_with_its_latest_run() -> None:
    old_version, new_version = "/tmp/ipykernel_1/111.py", "/tmp/ipykernel_1/222.py"
    shell, sent = FakeShell(), []
    shell.compile._filename_map = {new_version: 11, old_version: 10}
    sites = make_sites(None, shell, sent)
    sites.cells.shell = shell
    sites.cells.note(10, "cell-x")
    sites.cells.note(11, "cell-x")
    sites.cells.start_lookup()
    for order in ([new_version, old_version], [old_version, new_version]):
        cells = sites._cells({name: {"host": 5} for name in order})
        assert cells == [{"execution_count": 11, "cell_id": "cell-x", "alive_bytes": {"host": 10}, "total_bytes": 10}]


def test_a_history_the_user_started_is_read_never_reconfigured_or_stopped() -> None:
    torch = recording_torch(initialized=True)
    torch._C._cuda_isHistoryEnabled = lambda: True  # type: ignore[attr-defined]  # their _record_memory_history(...)
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
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


def history_switch(torch: FakeTorch, on: bool = False) -> Callable[[Optional[str]], None]:
    """Gives ``torch`` PyTorch's ``_cuda_isHistoryEnabled``, true while a history is
    on, and our calls turn it on and off as PyTorch's do. Returns the user's own
    ``_record_memory_history``, which turns it on and off without our knowing."""
    state = {"on": on}
    ours = torch.cuda.memory._record_memory_history

    def record(enabled: Optional[str] = "all", **kw: Any) -> None:
        ours(enabled, **kw)
        state["on"] = enabled is not None

    def users(enabled: Optional[str] = "all") -> None:
        state["on"] = enabled is not None

    torch.cuda.memory._record_memory_history = record
    torch._C._cuda_isHistoryEnabled = lambda: state["on"]  # type: ignore[attr-defined]
    return users


def test_a_history_switched_off_in_a_cell_starts_again_at_the_next_cell_and_says_so() -> None:
    # PyTorch's recipe (record, run, _dump_snapshot, record(enabled=None)) in a cell
    # stops our history too: recording on means on.
    torch = recording_torch(initialized=True)
    users_record = history_switch(torch)
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
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
            "enabled": "all", "context": "alloc", "stacks": "python", "max_entries": 5000
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
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
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
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
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
    shell, sent = FakeShell(), []
    sites = make_sites(None, shell, sent)
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
    shell, sent = FakeShell(), []
    sites = make_sites(None, shell, sent)
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


def test_gpu_blocks_are_charged_to_the_innermost_notebook_frame() -> None:
    torch = recording_torch(initialized=True)
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
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


def test_a_torch_whose_snapshot_always_has_the_events_still_groups_by_site() -> None:
    torch = recording_torch(initialized=True)

    def older_memory_snapshot(mempool_id: Any = None) -> List[Dict[str, Any]]:
        torch.snapshots.append("segments, events built")  # type: ignore[attr-defined]
        return [{"device": 0, "blocks": list(torch.blocks)}]  # type: ignore[attr-defined]

    torch.cuda.memory.memory_snapshot = older_memory_snapshot
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
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
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
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
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
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


def test_a_torch_without_allocator_history_is_unavailable_and_not_retried() -> None:
    torch = FakeTorch([FakeProps("H100", 80 << 30, "GPU-0")], initialized=True)
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
    try:
        state = sites.set_recording(True, host_frames=1, gpu_max_entries=1000)
        assert state["gpu"]["state"] == "unavailable" and "no allocator history" in state["gpu"]["reason"]
        shell.run_cell("c")
        assert sites.state()["gpu"]["state"] == "unavailable"
    finally:
        sites.stop()
    assert sites.state()["gpu"] == {
        "state": "off", "max_entries": None, "started": None, "allocated_before_bytes": None, "reason": None,
        "restarted_at": None, "restart_kept_stacks": None, "restart_reason": None,
    }


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


@pytest.mark.parametrize(
    "data",
    [
        {"type": "record_allocations", "request_id": "r", "enabled": "yes"},
        {"type": "record_allocations", "request_id": "r", "enabled": True, "host_frames": 65},
        {"type": "record_allocations", "request_id": "r", "enabled": True, "gpu_max_entries": 999},
        {"type": "allocation_sites", "request_id": "r", "max_sites": 0},
    ],
)
def test_bad_fields_are_malformed(data: Dict[str, Any]) -> None:
    with pytest.raises(RequestError) as caught:
        parse_request(data)
    assert caught.value.code == "malformed" and caught.value.request_id == "r"


def test_defaults() -> None:
    request = parse_request({"type": "record_allocations", "request_id": "r", "enabled": True})
    assert request.args == {"enabled": True, "host_frames": 16, "gpu_max_entries": 100_000}
    assert parse_request({"type": "allocation_sites", "request_id": "r"}).args == {"max_sites": 200}


def test_a_cell_is_growing_after_three_rises_of_a_megabyte_or_more() -> None:
    from jupyterlab_vram_helper.cell_alive import CellAliveTracker

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


def clearing_torch() -> FakeTorch:
    """A torch whose allocator history takes ``clear_history`` (as recent PyTorch)."""
    torch = recording_torch(initialized=True)
    calls = torch.history_calls  # type: ignore[attr-defined]

    def record_impl(
        enabled: Optional[str] = "all", context: Optional[str] = "all", stacks: str = "all",
        max_entries: int = 1 << 62, device: Any = None, clear_history: bool = False,
    ) -> None:
        call: Dict[str, Any] = {"enabled": enabled}
        if enabled is not None:
            call.update(context=context, stacks=stacks, max_entries=max_entries)
        if clear_history:
            call["clear_history"] = True
        calls.append(call)

    def record(enabled: Optional[str] = "all", *args: Any, **kwargs: Any) -> None:
        # As PyTorch 2.x: the public call only forwards to the one that declares the parameters.
        record_impl(enabled, *args, **kwargs)

    torch.cuda.memory._record_memory_history = record
    torch.cuda.memory._record_memory_history_impl = record_impl
    return torch


def test_a_new_host_depth_restarts_tracemalloc_and_leaves_the_gpu_history_alone() -> None:
    import tracemalloc

    torch = clearing_torch()
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
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
        assert len(tracemalloc.get_object_traceback(after)) >= 1
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


def test_pytorchs_symbolizer_runs_untraced_before_the_gpu_history_starts() -> None:
    # Its first run imports torch._inductor: 102 s under tracemalloc on an H100 machine.
    torch = recording_torch(initialized=True)
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
    try:
        state = sites.set_recording(True, host_frames=4, gpu_max_entries=1000)
        assert torch.symbolized == [False]  # type: ignore[attr-defined]
        assert state["gpu"]["state"] == "recording" and state["host"]["state"] == "recording"
        assert state["host"]["restarted_at"] is None  # host tracing started after it
        shell.run_cell("cell-a")
        sites.sites(max_sites=5)
        assert torch.symbolized == [False]  # type: ignore[attr-defined]  # once per process
        assert torch.first_symbolization_traced is False  # type: ignore[attr-defined]
    finally:
        sites.stop()


def test_cuda_coming_up_under_host_recording_restarts_it_around_the_symbolizer() -> None:
    torch = recording_torch(initialized=False)
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
    try:
        state = sites.set_recording(True, host_frames=6, gpu_max_entries=1000)
        assert state["gpu"]["state"] == "waiting" and torch.symbolized == []  # type: ignore[attr-defined]
        assert tracemalloc.is_tracing()
        shell.run_cell("cell-a")  # CUDA still down: nothing to prepare
        assert torch.symbolized == []  # type: ignore[attr-defined]
        torch.initialized = True  # the user's cell brought CUDA up
        shell.run_cell("cell-b")
        assert torch.symbolized == [False]  # type: ignore[attr-defined]  # tracemalloc stopped around it
        assert tracemalloc.is_tracing() and tracemalloc.get_traceback_limit() == 6
        recording = sent[-1]["recording"]
        assert recording["gpu"]["state"] == "recording"
        assert recording["host"]["restarted_at"] is not None and recording["host"]["frames"] == 6
        assert recording["host"]["restart_reason"] == "symbolizer"
        sites.sites(max_sites=5)
        assert torch.first_symbolization_traced is False  # type: ignore[attr-defined]
    finally:
        sites.stop()
    assert not tracemalloc.is_tracing()


def test_the_symbolizer_warm_up_is_done_before_the_cells_accounting_reads_its_start() -> None:
    # The warm-up (seconds, ~150 MiB of imports) is the helper's, not the
    # cell's: its hook runs before the per-cell accounting's, which the
    # helper registered at install, long before recording was turned on.
    from IPython.core.events import EventManager, available_events

    torch = recording_torch(initialized=False)
    shell, sent = FakeShell(), []
    shell.events = EventManager(shell, available_events)  # type: ignore[assignment]
    symbolized_at_cell_start: List[List[bool]] = []

    def accounting_start(info: Any = None) -> None:
        symbolized_at_cell_start.append(list(torch.symbolized))  # type: ignore[attr-defined]

    shell.events.register("pre_run_cell", accounting_start)
    sites = make_sites(torch, shell, sent)
    try:
        sites.set_recording(True, host_frames=6, gpu_max_entries=1000)
        torch.initialized = True  # the user's cell brought CUDA up
        shell.run_cell("cell-b")
        assert symbolized_at_cell_start == [[False]]
        assert shell.events.callbacks["pre_run_cell"] == [sites.pre_run_cell, accounting_start]
    finally:
        sites.stop()
    assert shell.events.callbacks["pre_run_cell"] == [accounting_start]


def test_an_interrupt_during_the_symbolizer_at_a_cell_start_leaves_recording_whole() -> None:
    torch = recording_torch(initialized=False)
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
    real_symbolize = torch._C._profiler.symbolize_tracebacks  # type: ignore[attr-defined]

    def interrupted(tracebacks: List[Any]) -> List[Any]:
        raise KeyboardInterrupt

    try:
        sites.set_recording(True, host_frames=5, gpu_max_entries=1000)
        torch.initialized = True
        torch._C._profiler.symbolize_tracebacks = interrupted  # type: ignore[attr-defined]
        shell.run_cell("cell-a")  # no exception reaches IPython
        assert tracemalloc.is_tracing() and tracemalloc.get_traceback_limit() == 5
        state = sent[-1]["recording"]  # the host restart is said
        assert state["gpu"]["state"] == "waiting" and state["host"]["restarted_at"] is not None
        assert state["host"]["restart_reason"] == "symbolizer"
        torch._C._profiler.symbolize_tracebacks = real_symbolize  # type: ignore[attr-defined]
        shell.run_cell("cell-b")  # tried again
        assert torch.symbolized == [False]  # type: ignore[attr-defined]
        assert sent[-1]["recording"]["gpu"]["state"] == "recording"
    finally:
        sites.stop()


def test_an_interrupted_record_request_leaves_recording_off_and_says_so() -> None:
    torch = recording_torch(initialized=True)

    def interrupted(tracebacks: List[Any]) -> List[Any]:
        raise KeyboardInterrupt

    torch._C._profiler.symbolize_tracebacks = interrupted  # type: ignore[attr-defined]
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
    with pytest.raises(KeyboardInterrupt):  # the request's answer: interrupted
        sites.set_recording(True, host_frames=4, gpu_max_entries=1000)
    assert sites.enabled is False and not tracemalloc.is_tracing()
    assert sent[-1]["recording"]["host"]["state"] == "off" and sent[-1]["recording"]["gpu"]["state"] == "off"
    assert shell.events.callbacks == {"pre_run_cell": [], "post_run_cell": []}


def test_a_symbolizer_that_already_ran_is_not_run_again() -> None:
    sys.modules["torch._inductor"] = types.ModuleType("torch._inductor")  # the user compiled a model
    torch = recording_torch(initialized=False)
    shell, sent = FakeShell(), []
    sites = make_sites(torch, shell, sent)
    try:
        sites.set_recording(True, host_frames=4, gpu_max_entries=1000)
        torch.initialized = True
        shell.run_cell("cell-a")
        assert torch.symbolized == []  # type: ignore[attr-defined]
        assert sent[-1]["recording"]["gpu"]["state"] == "recording"
        assert sent[-1]["recording"]["host"]["restarted_at"] is None
    finally:
        sites.stop()


def test_preparing_real_torchs_symbolizer_imports_what_its_first_run_does() -> None:
    # In a process of its own: a first run, and no import of real torch into this one.
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    code = (
        "import sys, torch\n"
        "from jupyterlab_vram_helper.gpu_allocations import prepare_symbolizer, symbolizer_ready\n"
        "before = symbolizer_ready()\n"
        "prepare_symbolizer(torch)\n"
        "print(before, symbolizer_ready())\n"
    )
    helper = Path(__file__).resolve().parents[2] / "python_helper"
    env = dict(os.environ, PYTHONPATH=str(helper))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


def test_per_cell_figures_due_while_host_tracing_is_paused_wait_for_it() -> None:
    # The symbolizer runs on the main thread with host tracing stopped; the
    # sender thread's per-cell figures would lack the host's meanwhile.
    import time

    shell, sent = FakeShell(), []
    sites = make_sites(None, shell, sent)
    try:
        sites.set_recording(True, host_frames=2, gpu_max_entries=1000)
        sites.host.paused = True
        shell.run_cell("cell-a")
        result = types.SimpleNamespace(info=types.SimpleNamespace(cell_id="cell-a"), execution_count=1)
        for cb in list(shell.events.callbacks["post_run_cell"]):
            cb(result)
        assert [m for m in sent if m["type"] == "cell_alive"] == []
        sites.host.paused = False
        deadline = time.monotonic() + 5
        while not [m for m in sent if m["type"] == "cell_alive"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [m for m in sent if m["type"] == "cell_alive"], "the figures never came once tracing resumed"
    finally:
        sites.stop()
