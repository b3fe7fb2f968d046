"""Per-cell memory accounting, which makes one record per executed cell (the ``cell`` message of docs/protocol.md).

IPython calls ``pre_run_cell(info)`` before a cell and ``post_run_cell(result)``
after it; :class:`CellMemoryRecorder` reads the memory figures in both, keeps
the last :data:`HISTORY_LENGTH` records and hands each new one to a background
thread that sends it to every open comm.

What the hooks can rely on (IPython 8/9, ipykernel 6/7):

- ``shell.execution_count`` in ``pre_run_cell`` is the cell's number in some
  IPython releases and one more in others: execution_counts.py tells which.
- An empty or blank cell fires ``post_run_cell`` without ``pre_run_cell``.
  Silent executions (the bootstrap, ``user_expressions`` probes) fire neither.
- ``result.info`` is the very object ``pre_run_cell`` received, so a pending
  cell is matched by its identity. Cells can nest (user code calling
  ``get_ipython().run_cell``), and a kernel subshell runs cells on threads of
  its own: running_cells.py keeps them.
- ipykernel passes ``result=None`` when the cell's coroutine was cancelled
  (an interrupt while an async cell awaits).
- An exception escaping a hook is printed into the user's output: every hook
  body catches everything, and problems go to the frontend as an ``internal``
  protocol error.

Nothing here keeps a reference to a user object: records hold numbers and
strings (the exception's class name and the start of its message), read from
``result`` while the hook runs and never stored with it.

Peaks. With ``reset_peak_per_cell`` (the default) the peaks are exact: the
hook resets torch's allocator peak counters (explicit device indices, only
once CUDA is initialised) and the kernel's VmHWM (``/proc/self/clear_refs``)
at cell start, and reads them at cell end. Without it nothing is reset, and a
peak is the highest of: the figures before and after, the sampler's readings
during the cell, and the counter itself if it rose during the cell (a counter
that rose was beaten inside this cell, so it is then exact too). A device whose
CUDA state was created during the cell counts from zero, and a VmHWM that is
the RSS at cell start needs no reset: exact either way.

Cost. The hooks run on the kernel's main thread, between the user's cell and
the execute_reply, so they do only what must happen at that instant: clocks,
and at cell start torch's counters (once CUDA is up, torch's stats binding
called directly and its dict kept as read: readers/torch_cuda.CellAllocators),
one reading of RSS and VmHWM (``statm`` and getrusage's maximum where those
prove VmHWM, else ``/proc/self/status``: readers/kernel_rss.py) and the peak resets
(VmHWM's only where it is above the RSS).
Everything that can wait is left to the sender thread, which runs one
window after the cell (background_sender.py; a lone cell's record
goes out ~40 ms after the kernel's idle status, the records of cells that end
meanwhile go with it, and while cells keep ending one message goes out per 50 ms;
the kernel's loop wakes that thread once the cell's reply has gone, see
``CellMemoryRecorder.reply_loop``):
torch's counters after the cell (one stats call per device, ~12 us
on an H100 machine even with warm caches) and picking the counters out of
both readings, the RSS after the
cell and its peak (the same reading), building the record
and sending it. None of these can be lost before the next reset, and they
have not moved since the cell ended unless something else ran (a request
of the panel finishes them first: :meth:`CellMemoryRecorder.finish_records`). If the next
cell starts first (a "Run All", or cells sent one by one), its
``pre_run_cell`` reads RSS and VmHWM in one go before it resets and stamps
them on the waiting cells, where they double as the new cell's starting
figures; the sender still builds those records. A ``history`` request
finishes waiting records too. Records are finished in order. A cell that ends
inside another one (``get_ipython().run_cell`` from user code) reads its
figures at once, since its caller goes on running.
"""

from __future__ import annotations

import asyncio
import collections
import os
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..config import SamplerConfig
from ..forking import call_in_forked_child
from ..oom.cell_outcome import cell_outcome, exception_of, oom_message_readable, out_of_memory_text
from ..protocol import CellStatus, cells_message, error_message
from ..sampling.readers import torch_cuda
from ..sampling.readers.kernel_rss import KernelRss, kernel_rss
from ..sampling.readers.torch_cuda import NO_ALLOCATIONS, CellAllocators
from .after_cell import AfterCellReadings
from .cell_processes import CellTree
from .cell_readings import EndedCell, GpuReading, PendingCell, gpu_reading
from .cell_records import cell_record, gpu_records
from .execution_counts import CellNumbering
from .running_cells import MAX_PENDING_CELLS, RunningCells

if TYPE_CHECKING:  # only the type: the module is loaded when a diagnosis is made
    from ..protocol_types import CellGpuMemory, CellMemoryRecord, OomDiagnosis


HISTORY_LENGTH = 2000
MAX_CELL_ID_CHARS = 256

_get_ident = threading.get_ident
# The loop running in this thread, or None (no exception where there is none).
_running_loop = asyncio.events._get_running_loop


class CellMemoryRecorder:
    """Builds a :class:`CellMemoryRecord` per executed cell; see the module docstring."""

    def __init__(
        self,
        config: Callable[[], SamplerConfig],
        send: Callable[[Mapping[str, Any]], None] | None = None,
        has_listeners: Callable[[], bool] = lambda: True,
        call_soon: Callable[[Callable[[], None]], None] | None = None,
        diagnose_oom: Callable[[str, str], OomDiagnosis | None] | None = None,
        rss: KernelRss | None = None,
        torch_module: Callable[[], Any] = torch_cuda.loaded_torch,
        shell: Any = None,
        wall_clock: Callable[[], float] = time.time,
        # time.perf_counter, or a stand-in on its scale: observe() compares the sampler's times with it
        clock: Callable[[], float] = time.perf_counter,
        max_records: int = HISTORY_LENGTH,
        after_cell: AfterCellReadings | None = None,
        clusters: Any = None,
        cluster_error: Callable[[BaseException], OomDiagnosis | None] | None = None,
    ):
        self._config = config
        self._send = send
        self._has_listeners = has_listeners
        # Off the hook's thread (the runtime's sender); in tests, at once.
        self._call_soon = call_soon if call_soon is not None else (lambda call: call())
        self._diagnose_oom = diagnose_oom
        self._rss = rss if rss is not None else kernel_rss()
        self._torch = torch_module
        # What records carry besides the kernel's own memory (the GPU load, the kernel's
        # processes), read after each cell; the hooks only look at the process tree's last reading.
        self._after_cell = after_cell if after_cell is not None else AfterCellReadings()
        self._processes = self._after_cell.processes
        # The clusters' readings (cluster/cell_cluster.CellClusters), or None: records carry none.
        self._clusters = clusters
        # Recognises an error a cluster worker raised or died of, and diagnoses it as the
        # worker's (cluster/cluster_errors.py); None where the runtime gives none.
        self._cluster_error = cluster_error
        self.shell = shell
        self._wall_clock = wall_clock
        self._clock = clock
        self._running = RunningCells()
        # The running cells' list is kept as an attribute of this object too, so that the hooks'
        # common path reads it directly rather than through another attribute lookup.
        self._pending = self._running.cells
        self._numbering = CellNumbering()
        self._records: collections.deque[CellMemoryRecord] = collections.deque(maxlen=max_records)
        # The cells that ended and are still waiting for their end figures.
        self._ended: collections.deque[EndedCell] = collections.deque()
        # Records made since the last send; the sender thread sends them together.
        self._unsent: collections.deque[CellMemoryRecord] = collections.deque(maxlen=max_records)
        self._finish_lock = threading.Lock()
        # True while a sender round is queued and has not started. Cells that end meanwhile
        # join that round without queuing, or waking, anything.
        self._round_queued = False
        # The kernel's event loop, which runs the cells, or None; runtime.install sets it to the
        # loop that its bootstrap ran in. After post_run_cell the kernel sends the cell's reply
        # and its idle status without giving the loop back, so a round handed over from the
        # loop's next step wakes the sender's thread only after them. That wake-up (a futex
        # wake, about 20 us with the caches cold after a pause) is thereby kept off the cell's
        # critical path. This is not done for a cell that ends inside another one, because its
        # caller runs on and the loop with it, nor on another loop (a kernel subshell's thread).
        # A cell run as a task of its own (top-level await) still hands over before its reply.
        self.reply_loop: Any = None
        # torch's allocators once CUDA is initialised (see CellAllocators). A forked child
        # forgets them, because the parent's CUDA state is not valid there.
        self._cuda: CellAllocators | None = None
        call_in_forked_child(self._forget_parent_state)
        self._next_id = 1
        # Names this run of record ids, because the ids start at 1 in every recorder (a new
        # process, or a helper delivered again). The frontend keys records by this series, so
        # that a pid reused by a container cannot mix the records of two runs.
        self.series = os.urandom(8).hex()
        self.last_error: str | None = None
        self._reported_errors: set = set()

    # -- IPython hooks ------------------------------------------------------------

    def hooks(self) -> list[tuple[str, Callable[..., None]]]:
        return [("pre_run_cell", self.pre_run_cell), ("post_run_cell", self.post_run_cell)]

    # Both hooks are written flat on purpose. They run with the caches cold, because the
    # kernel sat idle or the user's code just ran, and there every extra call layer costs the
    # cell one or two microseconds (see benchmarks/cell_hooks_overhead.py). Only the uncommon
    # paths are methods of their own.

    def pre_run_cell(self, info: Any = None) -> None:
        try:
            cell_id = getattr(info, "cell_id", None)
            # This count is used if post_run_cell gets no result. What shell.execution_count
            # means at this point depends on the IPython release (see execution_counts.py).
            count = self._numbering.at_start(self.shell, info)
            cell = PendingCell(
                id(info),
                cell_id[:MAX_CELL_ID_CHARS] if isinstance(cell_id, str) and cell_id else None,
                count if isinstance(count, int) else None,
                self._wall_clock(),
            )
            cell.thread = _get_ident()
            if self._processes is not None and self._processes.latest is not None:
                # With no process, nothing is kept.
                cell.tree = CellTree(self._processes.latest)
            clusters = self._clusters
            if clusters is not None and clusters.latest is not None:
                # Only while a cluster is attached: one window for the poller to fold into.
                cell.cluster = clusters.begin()
            # Each source is read on its own, so that a failing one costs only its own figures,
            # not the whole record. torch's counters are read once, before any reset; that one
            # reading is both the start of this cell and the end of records still waiting for it.
            torch = self._torch()
            gpus: GpuReading | None = None
            cuda: CellAllocators | None = None
            if torch is not None:
                try:
                    cuda = self._cell_allocators(torch)
                    gpus = gpu_reading(cuda)
                except Exception as exc:
                    # CUDA may well be up already, so the start is unknown rather than zero, which
                    # would read as "came up during the cell".
                    cell.cuda_was_initialized = True
                    self._problem("reading torch.cuda at cell start", exc)
            rss = self._rss
            try:
                # RSS and VmHWM are read once. That reading gives this cell's starting RSS, the
                # end figures of cells still waiting for theirs (the reset below would lose their
                # peak), and whether VmHWM needs a reset.
                current, high_water = rss.rss_and_peak()
                if self._ended:
                    self._stamp_ended((current, high_water), gpus)
                cell.rss_before = current
                if current is not None and high_water is not None and high_water <= current:
                    # VmHWM already equals the RSS, so from here on it follows this cell as it
                    # would after a reset. This is the common case, and it saves a syscall.
                    cell.rss_peak_from_start = True
                elif rss.can_reset and self._config().reset_peak_per_cell and rss.reset_peak():
                    cell.rss_peak_from_start = True
                    if self._pending:
                        self._running.keep_outer_rss_peaks(high_water)
                else:
                    cell.rss_peak_before = high_water
            except Exception as exc:
                self._problem("reading RSS at cell start", exc)
                # Give the waiting cells unknown end figures rather than ones read after a reset.
                if self._ended:
                    self._stamp_ended(None, gpus)
            if gpus and cuda is not None:
                try:
                    self._gpus_before(cell, cuda, gpus)
                except Exception as exc:
                    cell.gpu_peaks_were_reset = False
                    self._problem("resetting torch.cuda's peaks at cell start", exc)
            pending = self._pending
            if pending and getattr(info, "store_history", True) is False:
                self._running.nest(cell)
            if len(pending) >= MAX_PENDING_CELLS:
                del pending[0]
            pending.append(cell)
            cell.t0 = self._clock()
        except BaseException as exc:
            # An interrupt that lands in the hook itself is dropped, because otherwise IPython
            # would print this helper's frame into the user's output. A SystemExit is dropped
            # too: the hooks never run the cell's code, only the helper's reads, so an exit
            # raised in here is an accident of a user object's method, and letting it propagate
            # would end the kernel.
            self._problem("measuring the cell start", exc)

    def post_run_cell(self, result: Any = None) -> None:
        try:
            t1 = self._clock()
            pending = self._pending
            if not pending:
                return  # An empty cell (which gets no pre_run_cell), or the start failed.
            self._numbering.at_end(result)
            top = pending[-1]
            if result is not None and top.info_id == id(getattr(result, "info", None)):
                # remove() rather than pop(), because a subshell's cell may have started on its
                # own thread since the check above.
                pending.remove(top)
                cell = top
            else:
                found = self._running.pop_ended(result)
                if found is None:
                    return
                cell = found
            if cell.cluster is not None:
                cell.cluster.ended_at = t1
            status: CellStatus
            if (
                result is not None
                and getattr(result, "error_in_exec", None) is None
                and getattr(result, "error_before_exec", None) is None
            ):
                status, error = "ok", None  # The common case, which skips cell_outcome's two calls.
            else:
                status, error = cell_outcome(result)
            execution_count = getattr(result, "execution_count", None) if result is not None else None
            if cell.nested:
                self._running.fold_into_outer(cell)
                if status == "ok":
                    return  # The record of the cell that runs it covers it.
                # Use the count of the cell that runs it, not the next count.
                execution_count = cell.execution_count
            if not isinstance(execution_count, int) or isinstance(execution_count, bool):
                execution_count = cell.execution_count
            # torch's counters after the cell are read later (see the module docstring).
            gpus_after: GpuReading | None = None if cell.gpus_before or self._torch() is not None else {}
            oom = (
                self._diagnosis(result, error["out_of_memory"])
                if error is not None and (error["out_of_memory"] or self._cluster_error is not None)
                else None
            )
            if error is not None and oom is not None and oom.get("cluster_worker") is not None:
                # A worker that died of its memory (KilledWorker, Ray's memory monitor) makes the
                # cell's error an out-of-memory one, though its text says nothing of memory.
                error["out_of_memory"] = True
            ended = EndedCell(cell, t1, status, error, execution_count, gpus_after, oom)
            if pending:
                # It ended inside a cell that goes on running, so its figures cannot wait for
                # the sender's round.
                self._read_host_after(ended)
                if ended.gpus_after is None:
                    ended.gpus_after = self._gpu_reading("reading torch.cuda at cell end")
            self._ended.append(ended)
            if not self._round_queued:
                self._round_queued = True
                loop = self.reply_loop
                if loop is not None and not pending and _running_loop() is loop:
                    # As explained at reply_loop, the sender is woken once the reply has gone.
                    try:
                        # The loop is not None (tested above), but mypy widens the type again
                        # after the ``is`` test.
                        loop.call_soon(self._hand_off_round)  # type: ignore[union-attr]
                    except Exception:  # The loop is closed, so hand over directly.
                        self._hand_off_round()
                else:
                    self._hand_off_round()
        except BaseException as exc:  # As in pre_run_cell, SystemExit is caught too.
            self._problem("recording the cell", exc)

    # -- sampler feed (sampler thread) -------------------------------------------

    def observe(self, figures: Mapping[str, Any], started: float | None = None) -> None:
        """Fold one sampler reading into the running cell's maxima (cheap, never raises).

        ``started``: when the reading began, on this recorder's clock (the
        sampler's readings: time.perf_counter). It goes to the innermost cell
        that had started by then: figures read before a cell's start (its
        ``t0``, set once pre_run_cell is done) may be an earlier cell's peak.
        """
        try:
            if self._pending:
                self._running.observe(figures, started)
                cell_load = self._after_cell.cell_load
                if cell_load is not None:
                    cell_load.observe(tuple(self._pending))
        except Exception:
            pass

    # -- history ------------------------------------------------------------------

    def history(self) -> list[CellMemoryRecord]:
        """The kept records, oldest first."""
        self.finish_records()
        return list(self._records)

    def close(self) -> None:
        self.finish_records()
        self._pending.clear()
        self._rss.close()

    # -- internals ----------------------------------------------------------------

    def _gpus_before(self, cell: PendingCell, cuda: CellAllocators, reading: GpuReading) -> None:
        """Start the cell from ``reading`` (CUDA initialised), then reset the peaks (if the config says so)."""
        cell.cuda_was_initialized = True
        cell.gpus_before = reading
        if not self._config().reset_peak_per_cell:
            return
        if self._pending:
            self._running.keep_outer_peaks(reading)
        reset = cuda.reset_peaks  # torch's binding, called directly to save a call layer (see CellAllocators).
        for index, stats in reading.items():
            # A device with no CUDA context has peaks of 0 that stay 0, so it needs no reset.
            if stats is not NO_ALLOCATIONS:
                reset(index)
        cell.gpu_peaks_were_reset = True

    def _cell_allocators(self, torch: Any) -> CellAllocators | None:
        """torch's allocators as the hooks call them (None while CUDA is not initialised), kept once fixed."""
        cuda = self._cuda
        if cuda is not None and cuda.torch is torch:
            return cuda
        cuda = torch_cuda.cell_allocators(torch)
        self._cuda = cuda if cuda is not None and cuda.fixed else None
        return cuda

    def _gpu_reading(self, what: str) -> GpuReading:
        """torch's counters now; {} (and one problem report) if they cannot be read."""
        try:
            return gpu_reading(self._cell_allocators(self._torch()))
        except Exception as exc:
            self._problem(what, exc)
            return {}

    def _gpu_entries(self, ended: EndedCell) -> list[CellGpuMemory]:
        """The record's per-device entries ([] if they cannot be made)."""
        try:
            return gpu_records(ended.cell, ended.gpus_after or {})
        except Exception as exc:
            self._problem("recording torch.cuda's figures of the cell", exc)
            return []

    def _rss_reading(self, what: str, hold_gil: bool = True) -> tuple[int | None, int | None]:
        """RSS and VmHWM now; unknown (and one problem report) if they cannot be read."""
        try:
            return self._rss.rss_and_peak(hold_gil=hold_gil)
        except Exception as exc:
            self._problem(what, exc)
            return None, None

    def _read_host_after(self, ended: EndedCell) -> None:
        ended.rss_after, ended.rss_peak_after = self._rss_reading("reading RSS at cell end")
        ended.host_read = True

    def _diagnosis(self, result: Any, out_of_memory: bool = True) -> OomDiagnosis | None:
        try:
            exc = exception_of(result)
            if exc is not None and self._cluster_error is not None:
                # A worker's error is diagnosed from its own words, never the kernel's figures.
                found = self._cluster_error(exc)
                if found is not None:
                    return found
            if not out_of_memory or self._diagnose_oom is None:
                return None
            text = out_of_memory_text(exc, readable=oom_message_readable) if exc is not None else None
            del exc
            return self._diagnose_oom(*text) if text is not None else None
        except BaseException as exc:
            # The diagnosis sizes user objects, whose __sizeof__ may raise anything, even
            # SystemExit. If it fails, the cell's record goes out without it.
            self._problem("diagnosing the out-of-memory error", exc)
            return None

    def _hand_off_round(self) -> None:
        """Queue the sender's round (the first cell to end since the last round does)."""
        try:
            self._call_soon(self._finish_in_background)
        except BaseException as exc:
            self._round_queued = False  # The next cell that ends queues a round again.
            self._problem("handing the cell records to the sender", exc)

    def _finish_in_background(self) -> None:
        """The sender thread's round: finish every ended cell's record and send them in one message.

        The first cell to end after a round queues the next one; cells that
        end before it starts join it (background_sender.py: it starts one
        window after it was queued).
        """
        self._round_queued = False  # A cell that ends after this point queues the next round.
        self._wait_for_clusters()
        self.finish_records()
        with self._finish_lock:
            records = list(self._unsent)
            self._unsent.clear()
        if records and self._send is not None and self._has_listeners():
            self._send(cells_message(records))

    def _wait_for_clusters(self) -> None:
        """Wait, on this sender thread and for a bounded time, for the cluster reading after the ended cells.

        It is outside the finish lock, so that a cell starting meanwhile never waits for it.
        """
        clusters = self._clusters
        if clusters is None:
            return
        try:
            windows = [e.cell.cluster for e in tuple(self._ended) if e.cell.cluster is not None]
            if windows:
                clusters.wait_after(windows)
        except Exception as exc:
            self._problem("waiting for the cluster reading after the cell", exc)

    def _stamp_ended(self, reading: tuple[int | None, int | None] | None, gpus: GpuReading | None) -> None:
        """Give cells still without their end figures ``reading`` (RSS, VmHWM) and ``gpus``.

        A hook calls this just before it resets the peaks, which would lose
        those figures; ``reading`` None (the read failed) makes them unknown
        rather than wrong. Only the figures: the sender thread builds the
        records, off the cell's critical path.
        """
        with self._finish_lock:
            # Iterate over a copy, made in one C call under the GIL, because a subshell's
            # post_run_cell appends without the lock, and the deque's own iterator would raise
            # in the middle of the loop.
            for ended in tuple(self._ended):
                if not ended.host_read:
                    ended.rss_after, ended.rss_peak_after = reading if reading is not None else (None, None)
                    ended.host_read = True
                if ended.gpus_after is None:
                    ended.gpus_after = gpus if gpus is not None else {}

    def _forget_parent_state(self) -> None:
        """In a forked child: the parent's sender thread is not there, and CUDA is
        not usable there (torch's ``is_initialized()`` says False in such a child)."""
        self._round_queued = False
        self._cuda = None
        self.reply_loop = None  # The loop is the parent's, and nothing runs it in the child.
        self._running.after_fork()

    def finish_records(self) -> None:
        """Turn every ended cell into a record, oldest first.

        End figures a hook has not stamped on them are read here, once and
        only if a cell needs them, letting other threads run meanwhile (this
        is the sender thread, or a history request). A cell leaves
        ``_ended`` only once its figures are read: until then the next
        ``pre_run_cell`` sees it waiting and reads them itself before it
        resets the peaks, even while this thread is between its read and its
        record.

        The channel also calls this before it handles a request: a request
        queued behind a cell (the panel's "Free memory", a delete) runs as
        soon as the cell ends, well inside the sender's window, and what it
        frees would otherwise be read as the cell's figures after it.
        """
        with self._finish_lock:
            if not self._ended:
                return
            reading: tuple[int | None, int | None] | None = None
            gpus: GpuReading | None = None
            loads = self._after_cell.read(self._ended, self._problem)
            interval_s = self._config().interval_s
            while self._ended:
                ended = self._ended[0]
                if not ended.host_read:
                    if reading is None:
                        reading = self._rss_reading("reading RSS after the cell", hold_gil=False)
                    ended.rss_after, ended.rss_peak_after = reading
                    ended.host_read = True
                if ended.gpus_after is None:
                    if gpus is None:
                        gpus = self._gpu_reading("reading torch.cuda after the cell")
                    ended.gpus_after = gpus
                load = loads.get(id(ended.cell)) if loads is not None else None
                record = cell_record(self._next_id, ended, self._gpu_entries(ended), load, interval_s)
                if ended.cell.cluster is not None and self._clusters is not None:
                    try:
                        record["cluster"] = self._clusters.section(ended.cell.cluster)
                    except Exception as exc:
                        self._problem("recording the cluster's memory around the cell", exc)
                self._next_id += 1
                self._ended.popleft()
                self._records.append(record)
                self._unsent.append(record)

    def _problem(self, what: str, exc: BaseException) -> None:
        try:
            summary = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            text = f"per-cell accounting: {what} failed: {summary}"
            self.last_error = text
            # Each distinct failure once, not at every cell.
            if text not in self._reported_errors and len(self._reported_errors) < 32:
                self._reported_errors.add(text)
                if self._send is not None:
                    self._send(error_message("internal", text))
        except Exception:
            pass
