"""Host allocations by Python stack, as ``tracemalloc`` records them. Tracing is
started and stopped on request.

tracemalloc sees what Python's allocators hand out and what extensions report
to it. NumPy reports its data buffers (in domain 389047), but PyTorch's CPU
tensors are not reported. Each traced allocation keeps its stack up to
``frames`` frames deep. The cost is a hash-table entry per live allocation
and, at each allocation, the walk of those frames. That is tens of
microseconds for an allocation in a notebook cell at the default depth of 16,
since IPython's own frames count too, so Python code that allocates a lot runs
many times slower while recording is on (see
benchmarks/allocation_recording_cost.py; the figures are in docs/lines.md).

If something else, such as the user or a profiler, already runs tracemalloc,
the recorder reads its traces but never stops it, because stopping it would
discard what the other party measures. The recorder then cannot choose the
frame depth either.

tracemalloc cannot change its depth while it traces (``tracemalloc.start(n)``
does nothing then), so a new depth asked for while recording stops and starts
it again. The traces of earlier allocations are then gone, and
``restarted_at`` says since when the host figures count.

Someone else may stop tracemalloc while recording is on, with
``tracemalloc.stop()`` in a cell, whether the tracing was the helper's or one
it shared. It is then started again, as the helper's, at the next cell
boundary or request (:meth:`HostRecorder.notice_stopped`), because recording
that the user turned on must stay on, and ``restart_reason:
"stopped_elsewhere"`` says since when.
"""

from __future__ import annotations

import collections
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from ..cells.cell_files import CellFiles
from .site_grouping import Frame, SiteGrouper


class HostRecorder:
    """Records host allocations with their Python stacks through ``tracemalloc``."""

    def __init__(self) -> None:
        self.started_by_us = False
        self.frames: int | None = None
        # The depth asked for. Someone else's tracing may run at another.
        self.asked_frames: int | None = None
        self.started_at: float | None = None
        # When recording last restarted, which drops the earlier traces, and
        # why: "frames" for another depth, "stopped_elsewhere", or the reason
        # that the caller of untraced() gave.
        self.restarted_at: float | None = None
        self.restart_reason: str | None = None
        # The helper's tracing is stopped for a call (see untraced) and starts
        # again after it.
        self.paused = False

    @property
    def recording(self) -> bool:
        return tracemalloc.is_tracing() and (self.started_by_us or self.started_at is not None)

    def start(self, frames: int) -> None:
        self.asked_frames = frames
        # Tracing that a cell stopped since is started again at this depth, and
        # the state says so.
        self.notice_stopped()
        if tracemalloc.is_tracing():
            if self.started_by_us and tracemalloc.get_traceback_limit() != frames:
                # The helper's own tracing runs at another depth, and only a
                # restart applies the new one.
                tracemalloc.stop()
                tracemalloc.start(frames)
                self._restarted(frames, "frames")
                return
            if not self.started_by_us and self.started_at is None:
                # This is someone else's tracing, so it is read but never stopped.
                self.started_at = time.time()
            self.frames = tracemalloc.get_traceback_limit()
            return
        tracemalloc.start(frames)
        self.started_by_us = True
        self.frames = frames
        self.started_at = time.time()
        self.restarted_at = None
        self.restart_reason = None

    def notice_stopped(self) -> bool:
        """Whether the tracemalloc being read was stopped by someone else since it
        started. If so, the helper's own tracing starts, at the depth asked for
        (see the module docstring)."""
        if self.paused or tracemalloc.is_tracing() or not (self.started_by_us or self.started_at is not None):
            return False
        frames = self.asked_frames if self.asked_frames is not None else tracemalloc.get_traceback_limit()
        tracemalloc.start(frames)
        self.started_by_us = True
        self._restarted(frames, "stopped_elsewhere")
        return True

    def untraced(self, call: Callable[[], None], reason: str) -> None:
        """Run ``call`` with the helper's tracing stopped, then start it again at the
        same depth.

        The traces of earlier allocations are then gone, which ``restarted_at``
        says, with ``reason`` as the ``restart_reason``. Someone else's tracing
        is never stopped, so ``call`` then runs traced.
        """
        if not (self.started_by_us and tracemalloc.is_tracing()):
            call()
            return
        frames = tracemalloc.get_traceback_limit()
        self.paused = True
        tracemalloc.stop()
        try:
            call()
        finally:
            tracemalloc.start(frames)
            self._restarted(frames, reason)
            self.paused = False

    def _restarted(self, frames: int, reason: str) -> None:
        """Note that the helper's tracing started again at ``frames``, so the host
        figures count from this moment."""
        self.frames = frames
        self.started_at = self.restarted_at = time.time()
        self.restart_reason = reason

    def stop(self) -> None:
        if self.started_by_us and tracemalloc.is_tracing():
            # Stopping frees every trace that tracemalloc kept.
            tracemalloc.stop()
        self.started_by_us = False
        self.frames = None
        self.asked_frames = None
        self.started_at = None
        self.restarted_at = None
        self.restart_reason = None

    def state(self) -> dict[str, Any]:
        tracing = self.recording
        return {
            "state": ("recording" if self.started_by_us else "shared") if tracing else "off",
            "frames": self.frames if tracing else None,
            "started": self.started_at if tracing else None,
            "overhead_bytes": tracemalloc.get_tracemalloc_memory() if tracing else 0,
            "restarted_at": self.restarted_at if tracing else None,
            "restart_reason": self.restart_reason if tracing and self.restarted_at is not None else None,
        }

    def group(self, cells: CellFiles) -> SiteGrouper | None:
        """The live traced allocations grouped by site, or ``None`` while not recording."""
        if not self.recording:
            return None
        forget_failed_numpy_allocation()
        try:
            snapshot = tracemalloc.take_snapshot()
        except RuntimeError:
            # Tracing stopped since, because untraced() runs on the main thread.
            return None
        grouper = SiteGrouper(cells, _frame_of)
        for frames, sizes in _sizes_by_stack(snapshot).items():
            grouper.add(sum(sizes), frames, len(sizes))
        del snapshot
        return grouper


# The tracemalloc domain that NumPy reports its data buffers in, as
# numpy/_core/src/multiarray/alloc.c defines it.
NUMPY_TRACE_DOMAIN = 389047

_untrack: Callable[[int, int], int] | None = None
_untrack_bound = False


def forget_failed_numpy_allocation() -> None:
    """Drop the trace NumPy leaves for a data buffer it failed to allocate.

    NumPy reports each data buffer to tracemalloc right after asking for it,
    without checking that it got one. An ``np.ones((200000, 200000))`` that
    raises ``MemoryError`` leaves a 298 GiB trace at address 0 (NULL), which
    stays live until the next failure replaces it, and a listing would charge
    those bytes to the line that failed. No buffer lives at address 0, so that
    trace is always such a failure, and it is untracked before every reading.
    That costs one C call, and nothing happens where there is no such trace or
    tracemalloc is off.
    """
    global _untrack, _untrack_bound
    if not _untrack_bound:
        _untrack_bound = True
        try:
            import ctypes

            untrack = ctypes.pythonapi.PyTraceMalloc_Untrack
            untrack.argtypes = (ctypes.c_uint, ctypes.c_size_t)
            untrack.restype = ctypes.c_int
            _untrack = untrack
        except Exception:
            # There is no ctypes, or this Python does not export the C API.
            _untrack = None
    if _untrack is not None:
        try:
            _untrack(NUMPY_TRACE_DOMAIN, 0)
        except Exception:
            pass


def _frame_of(raw: tuple[str, int]) -> Frame:
    return (raw[0], raw[1], None)


def _sizes_by_stack(snapshot: Any) -> dict[Any, list[int]]:
    """The sizes of the live traces, per stack.

    It is written to allocate as little as possible per trace, because
    tracemalloc still traces while this runs, and every allocation made here
    costs a stack capture (about 50 times a plain allocation; see the
    benchmark). Summing in Python (``total += size``) allocates an int per
    trace, whereas appending the existing size objects to one list per stack
    allocates nothing per trace, and ``sum()`` of a list of ints adds in C.
    For 300,000 traces the naive way took 4.4 s, and this way takes a small
    fraction of that (benchmarks/allocation_recording_cost.py).
    """
    by_stack: dict[Any, list[int]] = collections.defaultdict(list)
    raw = _raw_trace_tuples(snapshot)
    if raw is not None:
        # Each raw trace is (domain, size, frames, total_nframe), so no tuple
        # is made per trace.
        for trace in raw:
            by_stack[trace[2]].append(trace[1])
        return by_stack
    for trace in snapshot.traces:
        by_stack[tuple((f.filename, f.lineno) for f in reversed(trace.traceback))].append(trace.size)
    return by_stack


def _raw_trace_tuples(snapshot: Any) -> list[tuple[Any, ...]] | None:
    """The raw traces in ``snapshot.traces._traces``, or None where a Python
    version lays them out otherwise.

    They are CPython's raw tuples ``(domain, size, frames, total_nframe)``,
    with the frames most recent first and one shared frames tuple per distinct
    stack. Iterating them is several times faster than building ``Trace``
    objects. Where they are not available, the caller uses the public API,
    whose frames come oldest first, and reverses them.
    """
    raw = getattr(getattr(snapshot, "traces", None), "_traces", None)
    if isinstance(raw, list) and (not raw or (isinstance(raw[0], tuple) and len(raw[0]) >= 3)):
        return raw
    return None
