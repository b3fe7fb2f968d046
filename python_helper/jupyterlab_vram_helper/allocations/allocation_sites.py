"""Records allocations with their stacks, and reports live memory by notebook line.

The ``record_allocations``, ``allocation_sites`` and ``allocation_snapshot``
requests (docs/protocol.md). Recording is off by default and per kernel: host
memory through ``tracemalloc`` (:mod:`host_allocations`), GPU memory through
PyTorch's allocator history (:mod:`gpu_allocations`). While it is on, a
``pre_run_cell`` hook notes which notebook cell runs under which execution
count (:mod:`cell_files`), starts the GPU recording at the first cell
boundary after CUDA came up and starts again a recorder someone else stopped
(``tracemalloc.stop()``, ``_record_memory_history(enabled=None)`` in a cell),
and a ``post_run_cell`` hook has the sender
thread send each cell's live bytes (:mod:`cell_alive`). Turning it off stops
both recorders, frees their histories and removes the hooks: nothing stays
behind.

A listing holds numbers, file names, line numbers and source text, never a
user object.
"""

from __future__ import annotations

import base64
import pickle
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..cells.cell_alive import CellAliveTracker
from ..cells.cell_files import CellFiles
from ..cells.execution_counts import MAX_OPEN_CELLS, CellNumbering
from .gpu_allocations import GpuRecorder
from .host_allocations import HostRecorder
from .site_grouping import SiteGrouper

# After a per-cell computation of t seconds, the next one starts t * this later at the earliest.
CELL_ALIVE_GAP_FACTOR = 4
# Sites listed in an out-of-memory diagnosis.
OOM_SITES_LISTED = 5
# host.restart_reason of a restart around PyTorch's symbolizer (gpu_allocations.py)
SYMBOLIZER_RESTART = "symbolizer"
# How long the per-cell figures wait, when due while host tracing is paused, before trying again.
PAUSED_RETRY_S = 0.5
# A comm message is one JSON document held whole in the kernel and the browser.
MAX_SNAPSHOT_BYTES = 192 * 1024 * 1024


class AllocationSites:
    """The kernel's allocation recording: it turns recording on and off and answers the requests for live memory by
    notebook line."""

    def __init__(
        self,
        shell: Callable[[], Any],
        broadcast: Callable[[Mapping[str, Any]], None],
        torch_module: Callable[[], Any] | None = None,
        call_soon: Callable[[Callable[[], None]], None] | None = None,
    ):
        """``call_soon(f)``: run ``f`` off the kernel's main thread soon (the runtime's
        sender thread); without it, the per-cell figures are computed at once."""
        self._shell = shell
        self._broadcast = broadcast
        self._call_soon = call_soon if call_soon is not None else (lambda call: call())
        self.alive = CellAliveTracker()
        self._ended: list[tuple] = []  # (cell id, execution count) of cells whose figure is due
        self._scheduled = False
        self._next_allowed = 0.0  # time.monotonic() before which no new computation starts
        self._timer: threading.Timer | None = None
        self.last_error: str | None = None
        self.host = HostRecorder()
        self.gpu = GpuRecorder() if torch_module is None else GpuRecorder(torch_module)
        self.cells = CellFiles()
        self._numbering = CellNumbering()
        # (id of the cell info, execution count, cell id, raw source, thread) of the cells running, outermost first
        self._running: list[tuple[int, int | None, str | None, Any, int]] = []
        self.enabled = False
        self._hooked: Any = None  # the shell whose events carry our hook

    # -- the record_allocations request ---------------------------------------------

    def set_recording(self, enabled: bool, host_frames: int, gpu_max_entries: int) -> dict[str, Any]:
        if enabled:
            try:
                self._start_recording(host_frames, gpu_max_entries)
            except BaseException:
                # Interrupted (PyTorch's symbolizer may run for seconds first): off,
                # and said so, rather than half started.
                self.stop()
                self._broadcast({"type": "allocation_recording", "recording": self.state()})
                raise
        else:
            self.stop()
        state = self.state()
        self._broadcast({"type": "allocation_recording", "recording": state})
        return state

    def _start_recording(self, host_frames: int, gpu_max_entries: int) -> None:
        self.enabled = True
        self.cells.shell = self._shell()
        host_restart, gpu_restart = self.host.restarted_at, self.gpu.restarted_at
        if self.gpu.needs_symbolizer(asked=True):
            # Before host tracing starts (restarted around it if it runs already).
            self.host.untraced(self.gpu.prepare_symbolizer, SYMBOLIZER_RESTART)
        self.host.start(host_frames)
        self.gpu.want(gpu_max_entries)
        if self.host.restarted_at != host_restart or (
            self.gpu.restarted_at != gpu_restart and not self.gpu.restart_kept_stacks
        ):
            # Allocations from before a restart lost their stacks: a cell's runs
            # before and after it do not compare (no leak flag from the drop).
            self.alive.forget()
        self._hook()

    def stop(self) -> None:
        self.enabled = False
        self._unhook()
        self.host.stop()
        self.gpu.stop()
        self.cells.forget()
        self._numbering.forget()
        self._running.clear()
        self.alive.forget()
        self._ended.clear()
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self._scheduled = False

    def state(self) -> dict[str, Any]:
        return {"enabled": self.enabled, "host": self.host.state(), "gpu": self.gpu.state()}

    # -- cell boundary --------------------------------------------------------------

    def pre_run_cell(self, info: Any = None) -> None:
        # Never raises: IPython would print our traceback into the user's cell.
        try:
            # Noted now: an out-of-memory diagnosis at this cell's end lists its lines.
            count = self._numbering.at_start(self._hooked, info)
            cell_id = getattr(info, "cell_id", None)
            self.cells.note(count, cell_id)
            running = self._running
            if getattr(info, "store_history", False):
                self.cells.note_own(getattr(info, "raw_cell", None), cell_id)
                if len(running) >= MAX_OPEN_CELLS:
                    del running[0]
                running.append((id(info), count, cell_id, getattr(info, "raw_cell", None), threading.get_ident()))
            elif running:  # run through run_cell by the running cell (%%capture, get_ipython().run_cell)
                # That cell is its thread's: a kernel subshell runs cells on a thread of its own.
                thread = threading.get_ident()
                outer = next((entry for entry in reversed(running) if entry[4] == thread), None)
                if outer is not None:
                    self.cells.note_nested(getattr(info, "raw_cell", None), outer[1], outer[2], outer[3])
            self._at_boundary_tell()
        except BaseException:
            # An interrupt can land here: starting the GPU history may first run
            # PyTorch's symbolizer for seconds (_at_boundary). Dropped, as in cell_accounting;
            # a SystemExit too: the hook runs no cell code, and raised on it would end the kernel.
            pass

    def post_run_cell(self, result: Any = None) -> None:
        # Never raises (see pre_run_cell). The figures are computed off the main thread.
        try:
            info = getattr(result, "info", None)
            cell_id = getattr(info, "cell_id", None)
            count = getattr(result, "execution_count", None)
            self._numbering.at_end(result)
            # The innermost first; a subshell's cell and the notebook's end in any order.
            running = self._running
            key = id(info)
            for position in range(len(running) - 1, -1, -1):
                if running[position][0] == key:
                    del running[position]
                    break
            if not isinstance(cell_id, str) or not cell_id:
                return
            if isinstance(count, int) and self.cells.cell_id_of(count) != cell_id:
                # The count noted at the start was a guess (a shell's first cell): the result's is exact.
                self.cells.note(count, cell_id)
            self._ended.append((cell_id, count if isinstance(count, int) else None))
            if self._scheduled:  # a "Run All" makes one computation for all the cells that ended meanwhile
                return
            self._schedule_cell_alive(self._next_allowed - time.monotonic())
        except BaseException:  # as in pre_run_cell
            pass

    def _schedule_cell_alive(self, delay: float) -> None:
        self._scheduled = True
        if delay <= 0:
            self._call_soon(self._send_cell_alive)
            return
        timer = threading.Timer(delay, lambda: self._call_soon(self._send_cell_alive))
        timer.daemon = True
        self._timer = timer
        timer.start()

    def _at_boundary(self) -> bool:
        """Between cells: a recorder someone else stopped starts again, and
        ``GpuRecorder.try_start`` runs, PyTorch's symbolizer run first, untraced,
        where it never ran (gpu_allocations.py): our host tracing restarts around it.
        True when the recording state changed: a recorder (re)started, or host tracing restarted."""
        stopped = self.host.notice_stopped() | self.gpu.notice_stopped()
        if stopped:
            self.alive.forget()  # what was allocated while it was off has no stack: runs do not compare
        restarted = self.host.restarted_at
        interrupted = False
        if self.gpu.needs_symbolizer():
            try:
                self.host.untraced(self.gpu.prepare_symbolizer, SYMBOLIZER_RESTART)
            except KeyboardInterrupt:
                # Dropped, as an interrupt that lands in a hook is; tried again at the next boundary.
                interrupted = True
        host_restarted = self.host.restarted_at != restarted
        if host_restarted:
            self.alive.forget()  # a cell's runs before and after the restart do not compare
        if interrupted:
            return host_restarted or stopped
        return self.gpu.try_start() or host_restarted or stopped

    def _at_boundary_tell(self) -> None:
        """The boundary work, and every comm told when it changed the recording state."""
        if self._at_boundary():
            self._broadcast({"type": "allocation_recording", "recording": self.state()})

    def _send_cell_alive(self) -> None:
        self._scheduled = False
        self._timer = None
        try:
            if not self.enabled or not self._ended:
                return
            if self.host.paused:
                # The main thread runs PyTorch's symbolizer with host tracing stopped:
                # its figures would lack the host's. Once it has restarted.
                self._schedule_cell_alive(PAUSED_RETRY_S)
                return
            start = time.perf_counter()
            ended, self._ended = self._ended, []
            # A torch that reads the live blocks only with its whole event history
            # (before 2.11: seconds) is read when a listing is asked for, not after each cell.
            cells = self._per_cell_list(gpu=self.gpu.reads_segments_alone())
            for cell_id, count in ended:
                self.alive.ran(cell_id, count, cells)
            message = self.alive.message(cells)
            elapsed = time.perf_counter() - start
            message["elapsed_ms"] = round(elapsed * 1000, 3)
            # The grouping holds the GIL: with many live allocations, leave the
            # kernel most of its time (cells ending meanwhile wait for the next round).
            self._next_allowed = time.monotonic() + CELL_ALIVE_GAP_FACTOR * elapsed
            self._broadcast(message)
        except Exception as exc:
            self.last_error = f"per-cell live bytes failed: {type(exc).__name__}: {exc}"

    def _per_cell_list(self, gpu: bool = True) -> list[dict[str, Any]]:
        self.cells.start_lookup()
        per_cell: dict[str, dict[str, int]] = {}
        host = self.host.group(self.cells)
        if host is not None:
            _add_per_cell(per_cell, "host", host)
        for index, grouper in self.gpu.group(self.cells) if gpu else ():
            _add_per_cell(per_cell, f"cuda:{index}", grouper)
        return self._cells(per_cell)

    def _hook(self) -> None:
        shell = self._shell()
        events = getattr(shell, "events", None)
        if events is None or self._hooked is shell:
            return
        self._unhook()
        events.register("pre_run_cell", self.pre_run_cell)
        _run_first(events, "pre_run_cell", self.pre_run_cell)
        events.register("post_run_cell", self.post_run_cell)
        self._hooked = shell

    def _unhook(self) -> None:
        shell, self._hooked = self._hooked, None
        events = getattr(shell, "events", None)
        if events is None:
            return
        for name, callback in (("pre_run_cell", self.pre_run_cell), ("post_run_cell", self.post_run_cell)):
            try:
                events.unregister(name, callback)
            except ValueError:
                pass

    # -- the allocation_sites request -----------------------------------------------

    def sites(self, max_sites: int) -> dict[str, Any]:
        start = time.perf_counter()
        self._at_boundary_tell()  # a listing is a boundary too: the kernel is between cells
        self.cells.shell = self._shell()
        self.cells.start_lookup()
        host = self.host.group(self.cells)
        gpus = self.gpu.group(self.cells)
        per_cell: dict[str, dict[str, int]] = {}
        devices: list[dict[str, Any]] = []
        if host is not None:
            devices.append(host.result("host", max_sites))
            _add_per_cell(per_cell, "host", host)
        for index, grouper in gpus:
            devices.append(dict(grouper.result(f"cuda:{index}", max_sites), index=index))
            _add_per_cell(per_cell, f"cuda:{index}", grouper)
        cells = self._cells(per_cell)
        for cell in cells:
            cell["growing"] = self.alive.growing(cell["cell_id"])
        return {
            "recording": self.state(),
            "devices": devices,
            "cells": cells,
            "elapsed_ms": round((time.perf_counter() - start) * 1000, 3),
        }

    def top_sites(self, device: str, limit: int = OOM_SITES_LISTED) -> dict[str, Any]:
        """The out-of-memory diagnosis's ``allocation_sites``: the largest live sites on
        ``device`` ("host" or "cuda:<index>"), or ``recording: False`` when nothing is recorded."""
        if not self.enabled:
            return {"recording": False, "sites": []}
        self.cells.shell = self._shell()
        self.cells.start_lookup()
        if device == "host":
            grouper = self.host.group(self.cells)
            return {
                "recording": grouper is not None,
                "sites": grouper.result(device, limit)["sites"] if grouper else [],
            }
        for index, grouper in self.gpu.group(self.cells):
            if f"cuda:{index}" == device:
                return {"recording": True, "sites": grouper.result(device, limit)["sites"]}
        return {"recording": self.gpu.recording, "sites": []}

    def _cells(self, per_cell: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
        out: dict[tuple, dict[str, Any]] = {}
        for filename, by_device in per_cell.items():
            count, cell_id = self.cells.resolve(filename) or (None, None)
            key = (count, cell_id) if cell_id is None else (None, cell_id)
            entry = out.get(key)
            if entry is None:
                entry = out[key] = {"execution_count": count, "cell_id": cell_id, "alive_bytes": {}, "total_bytes": 0}
            elif count is not None and (entry["execution_count"] is None or count > entry["execution_count"]):
                entry["execution_count"] = count  # the cell's latest run, of the versions still holding memory
            for device, size in by_device.items():
                entry["alive_bytes"][device] = entry["alive_bytes"].get(device, 0) + size
                entry["total_bytes"] += size
        return sorted(out.values(), key=lambda e: (-e["total_bytes"], e["execution_count"] or 0))

    def gpu_snapshot(self) -> dict[str, Any]:
        """The ``allocation_snapshot`` reply: PyTorch's allocator snapshot, pickled as
        ``torch.cuda.memory._dump_snapshot`` writes it, for pytorch.org/memory_viz."""
        self._at_boundary_tell()
        snapshot = self.gpu.snapshot()
        if snapshot is None:
            return {
                "format": "pickle",
                "data_base64": None,
                "bytes": 0,
                "reason": "GPU allocations are not being recorded"
                + (f" ({self.gpu.reason})" if self.gpu.reason else ""),
            }
        data = pickle.dumps(snapshot)
        del snapshot
        if len(data) > MAX_SNAPSHOT_BYTES:
            return {
                "format": "pickle",
                "data_base64": None,
                "bytes": len(data),
                "reason": f"the snapshot is {len(data)} bytes, "
                f"more than the {MAX_SNAPSHOT_BYTES} a comm message may carry; "
                "lower the history's max_entries, or call torch.cuda.memory._dump_snapshot(path) in a cell",
            }
        return {
            "format": "pickle",
            "data_base64": base64.b64encode(data).decode("ascii"),
            "bytes": len(data),
            "reason": None,
        }


def _run_first(events: Any, name: str, callback: Callable[..., None]) -> None:
    """Move ``callback`` to the front of IPython's ``name`` callbacks.

    The boundary work of ``pre_run_cell`` (PyTorch's symbolizer warm-up:
    seconds and ~150 MiB of imports once CUDA is up, restarting a recorder)
    is the helper's, not the cell's: it must come before the per-cell
    accounting reads the cell's starting figures, whose hook was registered
    when the helper was installed. ``register`` appends; IPython's
    EventManager keeps the callbacks in a list per event, run in order.
    """
    callbacks = getattr(events, "callbacks", {}).get(name)
    if isinstance(callbacks, list) and callback in callbacks:
        callbacks.remove(callback)
        callbacks.insert(0, callback)


def _add_per_cell(per_cell: dict[str, dict[str, int]], device: str, grouper: SiteGrouper) -> None:
    for filename, size in grouper.per_cell().items():
        by_device = per_cell.setdefault(filename, {})
        by_device[device] = by_device.get(device, 0) + size
