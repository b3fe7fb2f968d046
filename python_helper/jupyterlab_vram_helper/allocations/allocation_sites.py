"""Records allocations with their stacks, and reports live memory by notebook line.

This module answers the ``record_allocations``, ``allocation_sites`` and
``allocation_snapshot`` requests (docs/protocol.md). Recording is off by
default and is set per kernel. Host memory is recorded through
``tracemalloc`` (:mod:`host_allocations`) and GPU memory through PyTorch's
allocator history (:mod:`gpu_allocations`). While recording is on, a
``pre_run_cell`` hook notes which notebook cell runs under which execution
count (:mod:`cell_files`), starts the GPU recording at the first cell
boundary after CUDA came up, and starts again a recorder that someone else
stopped (with ``tracemalloc.stop()`` or
``_record_memory_history(enabled=None)`` in a cell). A ``post_run_cell`` hook
has the sender thread send each cell's live bytes (:mod:`cell_alive`).
Turning recording off stops both recorders, frees their histories and
removes the hooks, so that nothing stays behind.

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

# After a per-cell computation that took t seconds, the next one starts at the
# earliest t times this later, so that the computations, which hold the GIL,
# leave the kernel most of its time.
CELL_ALIVE_GAP_FACTOR = 4
# At most this many sites are listed in an out-of-memory diagnosis.
OOM_SITES_LISTED = 5
# The host recorder's restart_reason for a restart around PyTorch's symbolizer
# (see gpu_allocations.py).
SYMBOLIZER_RESTART = "symbolizer"
# When the per-cell figures fall due while host tracing is paused, they wait
# this long before trying again.
PAUSED_RETRY_S = 0.5
# A comm message is one JSON document held whole in the kernel and in the
# browser, so a larger snapshot is refused rather than sent.
MAX_SNAPSHOT_BYTES = 192 * 1024 * 1024


class AllocationSites:
    """The kernel's allocation recording. It turns recording on and off and
    answers the requests for live memory by notebook line."""

    def __init__(
        self,
        shell: Callable[[], Any],
        broadcast: Callable[[Mapping[str, Any]], None],
        torch_module: Callable[[], Any] | None = None,
        call_soon: Callable[[Callable[[], None]], None] | None = None,
    ):
        """Take the shell, the way to tell every comm, and optionally torch.

        ``call_soon(f)`` runs ``f`` soon, off the kernel's main thread, on the
        runtime's sender thread. Without it, the per-cell figures are computed
        at once.
        """
        self._shell = shell
        self._broadcast = broadcast
        self._call_soon = call_soon if call_soon is not None else (lambda call: call())
        self.alive = CellAliveTracker()
        # The (cell id, execution count) of each cell whose figure is due.
        self._ended: list[tuple] = []
        self._scheduled = False
        # The time.monotonic() before which no new computation starts.
        self._next_allowed = 0.0
        self._timer: threading.Timer | None = None
        self.last_error: str | None = None
        self.host = HostRecorder()
        self.gpu = GpuRecorder() if torch_module is None else GpuRecorder(torch_module)
        self.cells = CellFiles()
        self._numbering = CellNumbering()
        # The cells running, outermost first, each as (id of the cell info,
        # execution count, cell id, raw source, thread).
        self._running: list[tuple[int, int | None, str | None, Any, int]] = []
        self.enabled = False
        # The shell whose events carry this recording's hooks.
        self._hooked: Any = None

    # -- the record_allocations request ---------------------------------------------

    def set_recording(self, enabled: bool, host_frames: int, gpu_max_entries: int) -> dict[str, Any]:
        if enabled:
            try:
                self._start_recording(host_frames, gpu_max_entries)
            except BaseException:
                # An interrupt can land here, since PyTorch's symbolizer may
                # run for seconds first. Recording is then turned off, and
                # every comm is told so, rather than left half started.
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
            # The symbolizer must run before host tracing starts, so that its
            # imports are not traced; host tracing that runs already is
            # restarted around it.
            self.host.untraced(self.gpu.prepare_symbolizer, SYMBOLIZER_RESTART)
        self.host.start(host_frames)
        self.gpu.want(gpu_max_entries)
        if self.host.restarted_at != host_restart or (
            self.gpu.restarted_at != gpu_restart and not self.gpu.restart_kept_stacks
        ):
            # Allocations from before a restart lost their stacks, so a cell's
            # runs before and after it do not compare. Forgetting them keeps
            # the drop from flagging a leak.
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
        # This hook never raises, because IPython would print the helper's
        # traceback into the user's cell.
        try:
            # The cell is noted at its start, so that an out-of-memory diagnosis
            # at this cell's end can list its lines.
            count = self._numbering.at_start(self._hooked, info)
            cell_id = getattr(info, "cell_id", None)
            self.cells.note(count, cell_id)
            running = self._running
            if getattr(info, "store_history", False):
                self.cells.note_own(getattr(info, "raw_cell", None), cell_id)
                if len(running) >= MAX_OPEN_CELLS:
                    del running[0]
                running.append((id(info), count, cell_id, getattr(info, "raw_cell", None), threading.get_ident()))
            elif running:
                # This cell is run through run_cell by the running cell (as
                # %%capture or get_ipython().run_cell do). Its outer cell is the
                # one on the same thread, because a kernel subshell runs cells
                # on a thread of its own.
                thread = threading.get_ident()
                outer = next((entry for entry in reversed(running) if entry[4] == thread), None)
                if outer is not None:
                    self.cells.note_nested(getattr(info, "raw_cell", None), outer[1], outer[2], outer[3])
            self._at_boundary_tell()
        except BaseException:
            # An interrupt can land here, because starting the GPU history may
            # first run PyTorch's symbolizer for seconds (see _at_boundary). It
            # is dropped, as in cell_accounting. A SystemExit is dropped too:
            # the hook runs no cell code, and raising it here would end the
            # kernel.
            pass

    def post_run_cell(self, result: Any = None) -> None:
        # This hook never raises either (see pre_run_cell). The figures are
        # computed off the main thread.
        try:
            info = getattr(result, "info", None)
            cell_id = getattr(info, "cell_id", None)
            count = getattr(result, "execution_count", None)
            self._numbering.at_end(result)
            # The cell is looked for innermost first, since a subshell's cell
            # and the notebook's can end in either order.
            running = self._running
            key = id(info)
            for position in range(len(running) - 1, -1, -1):
                if running[position][0] == key:
                    del running[position]
                    break
            if not isinstance(cell_id, str) or not cell_id:
                return
            if isinstance(count, int) and self.cells.cell_id_of(count) != cell_id:
                # The count noted at the start was a guess, as it is for a
                # shell's first cell, while the result's count is exact.
                self.cells.note(count, cell_id)
            self._ended.append((cell_id, count if isinstance(count, int) else None))
            # A computation is already due, so a "Run All" makes one computation
            # for all the cells that ended meanwhile.
            if self._scheduled:
                return
            self._schedule_cell_alive(self._next_allowed - time.monotonic())
        except BaseException:
            # This is dropped for the same reasons as in pre_run_cell.
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
        """Do the work that waits for a boundary between cells.

        A recorder that someone else stopped starts again, and
        ``GpuRecorder.try_start`` runs. Before it, PyTorch's symbolizer runs
        untraced where it never ran (see gpu_allocations.py), and the helper's
        host tracing restarts around it. The result is True when the recording
        state changed, because a recorder started or restarted, or host tracing
        restarted.
        """
        stopped = self.host.notice_stopped() | self.gpu.notice_stopped()
        if stopped:
            # What was allocated while a recorder was off has no stack, so a
            # cell's runs before and after do not compare.
            self.alive.forget()
        restarted = self.host.restarted_at
        interrupted = False
        if self.gpu.needs_symbolizer():
            try:
                self.host.untraced(self.gpu.prepare_symbolizer, SYMBOLIZER_RESTART)
            except KeyboardInterrupt:
                # The interrupt is dropped, as one that lands in a hook is, and
                # the symbolizer is tried again at the next boundary.
                interrupted = True
        host_restarted = self.host.restarted_at != restarted
        if host_restarted:
            # A cell's runs before and after the restart do not compare.
            self.alive.forget()
        if interrupted:
            return host_restarted or stopped
        return self.gpu.try_start() or host_restarted or stopped

    def _at_boundary_tell(self) -> None:
        """Do the boundary work, and tell every comm when it changed the recording state."""
        if self._at_boundary():
            self._broadcast({"type": "allocation_recording", "recording": self.state()})

    def _send_cell_alive(self) -> None:
        self._scheduled = False
        self._timer = None
        try:
            if not self.enabled or not self._ended:
                return
            if self.host.paused:
                # The main thread is running PyTorch's symbolizer with host
                # tracing stopped, so the figures would lack the host's. They
                # are computed once host tracing has restarted.
                self._schedule_cell_alive(PAUSED_RETRY_S)
                return
            start = time.perf_counter()
            ended, self._ended = self._ended, []
            # A torch that can read the live blocks only together with its whole
            # event history, which takes seconds before torch 2.11, is read when
            # a listing is asked for, not after each cell.
            cells = self._per_cell_list(gpu=self.gpu.reads_segments_alone())
            for cell_id, count in ended:
                self.alive.ran(cell_id, count, cells)
            message = self.alive.message(cells)
            elapsed = time.perf_counter() - start
            message["elapsed_ms"] = round(elapsed * 1000, 3)
            # The grouping holds the GIL, so with many live allocations the
            # kernel is left most of its time. Cells that end meanwhile wait for
            # the next round.
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
        # A listing is a boundary too, because the kernel is between cells.
        self._at_boundary_tell()
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
        """The out-of-memory diagnosis's ``allocation_sites``. They are the largest
        live sites on ``device`` ("host" or "cuda:<index>"), with ``recording``
        False when nothing is recorded there."""
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
                # The count shown is the cell's latest run among the versions
                # that still hold memory.
                entry["execution_count"] = count
            for device, size in by_device.items():
                entry["alive_bytes"][device] = entry["alive_bytes"].get(device, 0) + size
                entry["total_bytes"] += size
        return sorted(out.values(), key=lambda e: (-e["total_bytes"], e["execution_count"] or 0))

    def gpu_snapshot(self) -> dict[str, Any]:
        """The ``allocation_snapshot`` reply. It carries PyTorch's allocator
        snapshot, pickled as ``torch.cuda.memory._dump_snapshot`` writes it, so
        that pytorch.org/memory_viz can open it."""
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

    The boundary work of ``pre_run_cell`` is the helper's, not the cell's. It
    warms up PyTorch's symbolizer, which takes seconds and about 150 MiB of
    imports once CUDA is up, and restarts recorders. So it must come before the
    per-cell accounting reads the cell's starting figures, and that hook was
    registered when the helper was installed. ``register`` appends, and
    IPython's EventManager keeps the callbacks in a list per event and runs
    them in order, so the callback is moved to the front of that list.
    """
    callbacks = getattr(events, "callbacks", {}).get(name)
    if isinstance(callbacks, list) and callback in callbacks:
        callbacks.remove(callback)
        callbacks.insert(0, callback)


def _add_per_cell(per_cell: dict[str, dict[str, int]], device: str, grouper: SiteGrouper) -> None:
    for filename, size in grouper.per_cell().items():
        by_device = per_cell.setdefault(filename, {})
        by_device[device] = by_device.get(device, 0) + size
