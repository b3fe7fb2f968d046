"""Host allocations by Python stack, as ``tracemalloc`` records them; it is started and stopped on request.

tracemalloc sees what Python's allocators hand out and what extensions report
to it: NumPy reports its data buffers (domain 389047), PyTorch's CPU tensors
are not reported. Each traced allocation keeps its stack up to ``frames``
frames deep; the cost is a hash-table entry per live allocation and, at each
allocation, the walk of those frames: tens of microseconds for an allocation
in a notebook cell at the default 16 (IPython's own frames count), so that
Python code that allocates a lot runs many times slower while recording is
on (benchmarks/allocation_recording_cost.py; the figures are in docs/lines.md).

If something else (the user, a profiler) already runs tracemalloc, the
recorder reads its traces but never stops it: stopping it would discard what
the other party measures. It then cannot choose the frame depth either.

tracemalloc cannot change its depth while it traces (``tracemalloc.start(n)``
does nothing then), so a new depth asked for while recording stops and starts
it again: the traces of earlier allocations are gone, and ``restarted_at``
says since when the host figures count.

A tracemalloc stopped by someone else while recording is on (``tracemalloc.stop()``
in a cell, ours or the one we shared) is started again, as ours, at the next
cell boundary or request (:meth:`HostRecorder.notice_stopped`): recording on
means on, and ``restart_reason: "stopped_elsewhere"`` says since when.
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
        self.asked_frames: int | None = None  # the depth asked for (someone else's may differ)
        self.started_at: float | None = None
        # When recording last restarted with another depth, or around a call
        # (untraced): earlier traces dropped; and why ("frames" or the caller's reason).
        self.restarted_at: float | None = None
        self.restart_reason: str | None = None
        # Our tracing is stopped for a call (untraced), to start again after it.
        self.paused = False

    @property
    def recording(self) -> bool:
        return tracemalloc.is_tracing() and (self.started_by_us or self.started_at is not None)

    def start(self, frames: int) -> None:
        self.asked_frames = frames
        self.notice_stopped()  # stopped in a cell since: started again at this depth, and said so
        if tracemalloc.is_tracing():
            if self.started_by_us and tracemalloc.get_traceback_limit() != frames:
                # Our own tracing at another depth: only a restart applies the new one.
                tracemalloc.stop()
                tracemalloc.start(frames)
                self._restarted(frames, "frames")
                return
            if not self.started_by_us and self.started_at is None:
                self.started_at = time.time()  # someone else's tracing: read it, never stop it
            self.frames = tracemalloc.get_traceback_limit()
            return
        tracemalloc.start(frames)
        self.started_by_us = True
        self.frames = frames
        self.started_at = time.time()
        self.restarted_at = None
        self.restart_reason = None

    def notice_stopped(self) -> bool:
        """Whether the tracemalloc being read was stopped by someone else since:
        then ours starts, at the depth asked for (see the module docstring)."""
        if self.paused or tracemalloc.is_tracing() or not (self.started_by_us or self.started_at is not None):
            return False
        frames = self.asked_frames if self.asked_frames is not None else tracemalloc.get_traceback_limit()
        tracemalloc.start(frames)
        self.started_by_us = True
        self._restarted(frames, "stopped_elsewhere")
        return True

    def untraced(self, call: Callable[[], None], reason: str) -> None:
        """Run ``call`` with our tracing stopped, then start it again at the same depth:
        the traces of earlier allocations are gone (``restarted_at``, ``restart_reason``
        = ``reason``). Someone else's tracing is never stopped: ``call`` then runs traced."""
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
        """Our tracing started again at ``frames``: the host figures count from now."""
        self.frames = frames
        self.started_at = self.restarted_at = time.time()
        self.restart_reason = reason

    def stop(self) -> None:
        if self.started_by_us and tracemalloc.is_tracing():
            tracemalloc.stop()  # frees every trace it kept
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
        """The live traced allocations grouped by site; ``None`` while not recording."""
        if not self.recording:
            return None
        forget_failed_numpy_allocation()
        try:
            snapshot = tracemalloc.take_snapshot()
        except RuntimeError:  # stopped since (untraced, on the main thread)
            return None
        grouper = SiteGrouper(cells, _frame_of)
        for frames, sizes in _sizes_by_stack(snapshot).items():
            grouper.add(sum(sizes), frames, len(sizes))
        del snapshot
        return grouper


# The tracemalloc domain NumPy reports its data buffers in (numpy/_core/src/multiarray/alloc.c).
NUMPY_TRACE_DOMAIN = 389047

_untrack: Callable[[int, int], int] | None = None
_untrack_bound = False


def forget_failed_numpy_allocation() -> None:
    """Drop the trace NumPy leaves for a data buffer it failed to allocate.

    NumPy reports each data buffer to tracemalloc right after asking for it,
    without checking that it got one: an ``np.ones((200000, 200000))`` that
    raises ``MemoryError`` leaves a 298 GiB trace at address 0 (NULL), live
    until the next failure replaces it, and a listing would charge those
    bytes to the line that failed. No buffer lives at address 0, so that
    trace is always such a failure: untracked before every reading (one C
    call; nothing happens where there is none, or tracemalloc is off).
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
        except Exception:  # no ctypes, or a Python without the C API exported
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

    Written to allocate as little as possible per trace: tracemalloc still
    traces while this runs, and every allocation made here costs a stack
    capture (about 50 times a plain allocation, see the benchmark). Summing
    in Python (``total += size``) allocates an int per trace; appending the
    existing size objects to one list per stack allocates nothing per trace,
    and ``sum()`` of a list of ints adds in C. 300,000 traces: 4.4 s the naive
    way, a small fraction of that this way (benchmarks/allocation_recording_cost.py).
    """
    by_stack: dict[Any, list[int]] = collections.defaultdict(list)
    raw = _raw_trace_tuples(snapshot)
    if raw is not None:
        for trace in raw:  # (domain, size, frames, total_nframe): no tuple made per trace
            by_stack[trace[2]].append(trace[1])
        return by_stack
    for trace in snapshot.traces:
        by_stack[tuple((f.filename, f.lineno) for f in reversed(trace.traceback))].append(trace.size)
    return by_stack


def _raw_trace_tuples(snapshot: Any) -> list[tuple[Any, ...]] | None:
    """``snapshot.traces._traces``: CPython's raw tuples ``(domain, size, frames,
    total_nframe)`` with frames most recent first, one shared tuple per distinct
    stack; iterating them is several times faster than building ``Trace``
    objects. None where a Python version lays them out otherwise (the public
    API, oldest frame first, is used then)."""
    raw = getattr(getattr(snapshot, "traces", None), "_traces", None)
    if isinstance(raw, list) and (not raw or (isinstance(raw[0], tuple) and len(raw[0]) >= 3)):
        return raw
    return None
