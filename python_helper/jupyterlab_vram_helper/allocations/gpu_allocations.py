"""GPU allocations by Python stack, as PyTorch's allocator history records them.

``torch.cuda.memory._record_memory_history(enabled="all", context="alloc",
stacks="python", max_entries=N)`` makes the caching allocator keep, for every
live block, the Python stack that allocated it, plus a ring buffer of the last
``N`` alloc/free events. ``torch.cuda.memory._snapshot()`` returns both
(``segments`` -> ``blocks`` with ``frames``, innermost first, and
``device_traces``), and ``memory_snapshot()`` returns the segments alone,
without building the events where it takes ``include_traces=False``.
``enabled=None`` stops recording stacks and clears the ring buffer, while
blocks still alive keep the stacks they were allocated with.

All of this is private PyTorch API, so every call is guarded, and a torch that
lacks it (one older than 2.1, or a build without CUDA) is reported as
``unavailable`` with the reason. Recording is started only once
``torch.cuda.is_initialized()`` is true, because starting it earlier would
initialise CUDA; torch is read through ``sys.modules`` and never imported.
When CUDA comes up after recording was asked for, recording starts at the next
cell boundary, and what was allocated before that has no stack, so it is
reported as ``unattributed_bytes``.

To change ``max_entries`` while recording, PyTorch's way is to call
``_record_memory_history`` again. The allocator then only sets the ring
buffer's new bound, and the stacks of live blocks are kept on the blocks, not
in the buffer. That is not safe without clearing the buffer: a smaller bound
on a full buffer lets its write index run past the new bound, beyond the
buffer's end, and some versions clear the buffer on every call anyway. So the
events are cleared (``clear_history=True``) where PyTorch's call takes that
argument, and elsewhere recording is stopped and started again, as a toggle
would, which may also lose the stacks of live blocks. Either way the state
says so (``restarted_at``, ``restart_kept_stacks``).

PyTorch's first snapshot in a process turns the recorded stacks into frames
with its symbolizer, whose first use imports ``torch._inductor``: some 900
modules and 149 MiB, taking 1.1 s on a 2-vCPU VM and 6.3 s on an H100
machine. Under tracemalloc at 16 frames, as host recording runs, that import
took 102 s on the H100 machine while holding the GIL, so the first listing
after CUDA came up froze the kernel for two minutes. The symbolizer therefore
runs once before the GPU history starts (:func:`prepare_symbolizer`), with
tracemalloc not tracing: :class:`~.allocation_sites.AllocationSites` starts
host recording after it, or restarts host recording around it
(``restarted_at``).

A history that someone else started (the user's own
``_record_memory_history`` for ``_dump_snapshot``, or a profiler) belongs to
them. Recording reads it as it is (state ``shared``) and never reconfigures,
clears or stops it, just as host recording treats someone else's tracemalloc.

Someone else may switch the history off while recording is on: PyTorch's own
recipe ends with ``_record_memory_history(enabled=None)``, and that call stops
the helper's history as well as theirs. This is noticed at the next cell
boundary or request (:meth:`GpuRecorder.notice_stopped`, which costs one C
call), and the history is started again as the helper's, because recording
that the user turned on must stay on. The blocks allocated while it was off
have no stack, and the state says since when (``restart_reason:
"stopped_elsewhere"``).
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable
from typing import Any

from ..cells.cell_files import CellFiles
from ..protocol import GPU_MAX_ENTRIES
from ..sampling.readers import torch_cuda
from .site_grouping import Frame, SiteGrouper

# The block states in a snapshot that mean live memory.
_LIVE_STATES = ("active_allocated",)


class GpuRecorder:
    """Records GPU allocations with their Python stacks through PyTorch's allocator history."""

    def __init__(self, torch_module: Callable[[], Any] = torch_cuda.loaded_torch):
        self._torch = torch_module
        self.wanted = False
        self.max_entries = GPU_MAX_ENTRIES[2]
        self.started_at: float | None = None
        # This is False while reading a history that someone else started (see
        # the module docstring).
        self.started_by_us = False
        # Why the history is not recording, to be shown to the user.
        self.reason: str | None = None
        # Recording is wanted, but this torch cannot record, so it is not tried
        # again at each cell.
        self.unavailable = False
        # The bytes the allocator held when recording started. They were
        # allocated before, so they have no stacks.
        self.allocated_at_start: int | None = None
        # When the history last restarted while recording, and whether the live
        # blocks kept their stacks through the restart.
        self.restarted_at: float | None = None
        self.restart_kept_stacks: bool | None = None
        # Why the history restarted: "max_entries" for another ring buffer size,
        # or "stopped_elsewhere" (see the module docstring).
        self.restart_reason: str | None = None
        # A history that this recorder read was found switched off by someone
        # else, so the helper's own history starts next.
        self._stopped_elsewhere = False
        # Torch's memory_snapshot, and whether it takes include_traces, looked
        # up once per torch.
        self._segments_only: tuple[Any, bool] | None = None

    @property
    def recording(self) -> bool:
        return self.started_at is not None

    def want(self, max_entries: int) -> None:
        """Start recording at once, or at the first cell boundary after CUDA is initialised."""
        # A history that someone else switched off is noticed first, so that
        # the helper's own history starts with this bound.
        self.notice_stopped()
        if self.recording and not self.started_by_us:
            # Someone else's history keeps its own bound. This one is kept for
            # a history of the helper's that may start later.
            self.max_entries = max_entries
            return
        if self.recording and max_entries != self.max_entries:
            self._restart(max_entries)
            return
        self.wanted = True
        self.max_entries = max_entries
        self.try_start()

    def _restart(self, max_entries: int) -> None:
        """Keep recording with another ring buffer size (see the module's docstring)."""
        now = time.time()
        record, clears = self._history_call()
        if record is not None and clears:
            try:
                record(enabled="all", context="alloc", stacks="python", max_entries=max_entries, clear_history=True)
            except Exception:
                pass
            else:
                self.max_entries = max_entries
                self._restarted(now, True, "max_entries")
                return
        self.stop()
        self.wanted = True
        self.max_entries = max_entries
        if self.try_start():
            self._restarted(self.started_at, False, "max_entries")

    def _restarted(self, at: float | None, kept_stacks: bool, reason: str) -> None:
        self.restarted_at, self.restart_kept_stacks, self.restart_reason = at, kept_stacks, reason

    def _history_call(self) -> tuple[Any, bool]:
        """Torch's ``_record_memory_history``, and whether it takes ``clear_history``.

        In PyTorch 2.x the public call forwards ``*args, **kwargs`` to
        ``_record_memory_history_impl``, so the parameter is looked for there
        when that function exists.
        """
        torch = self._torch()
        memory = getattr(getattr(torch, "cuda", None), "memory", None)
        record = getattr(memory, "_record_memory_history", None)
        declared = getattr(memory, "_record_memory_history_impl", record)
        return record, record is not None and _takes(declared, "clear_history")

    def needs_symbolizer(self, asked: bool = False) -> bool:
        """Whether the history would start now with PyTorch's symbolizer never run
        (see the module docstring), and the symbolizer can be run. If so, the
        caller must call :meth:`prepare_symbolizer` first.

        With ``asked``, the history counts as wanted, as it is while recording
        is being turned on.
        """
        if not (self.wanted or asked) or self.recording or self.unavailable or symbolizer_ready():
            return False
        torch = self._torch()
        if torch is None or not torch_cuda.cuda_initialized(torch) or _symbolizer_calls(torch) is None:
            return False
        memory = getattr(torch.cuda, "memory", None)
        return getattr(memory, "_record_memory_history", None) is not None and hasattr(memory, "memory_snapshot")

    def prepare_symbolizer(self) -> None:
        prepare_symbolizer(self._torch())

    def notice_stopped(self) -> bool:
        """Whether the history being read was switched off by someone else since it
        started. If so, it is not read any more, and :meth:`try_start` starts
        the helper's own (see the module docstring). A torch that cannot say is
        taken to be still recording."""
        if not self.recording:
            return False
        torch = self._torch()
        if torch is None or _history_enabled(torch) is not False:
            return False
        self._stopped_elsewhere = True
        self.started_at = None
        self.started_by_us = False
        self.allocated_at_start = None
        self.restarted_at = self.restart_kept_stacks = self.restart_reason = None
        return True

    def try_start(self) -> bool:
        """Start recording if it is wanted and possible, and return True when this
        call started it. The call is cheap when there is nothing to do, since it
        runs at every cell boundary."""
        if not self.wanted or self.recording or self.unavailable:
            return False
        torch = self._torch()
        if torch is None:
            self.reason = "torch is not imported"
            return False
        if not torch_cuda.cuda_initialized(torch):
            self.reason = "CUDA is not initialised yet: recording starts at the first cell boundary after it is"
            return False
        memory = getattr(getattr(torch, "cuda", None), "memory", None)
        record = getattr(memory, "_record_memory_history", None)
        if record is None or getattr(memory, "_snapshot", None) is None:
            return self._unavailable("this PyTorch has no allocator history (torch.cuda.memory._record_memory_history)")
        if _history_enabled(torch):
            # This is someone else's history, so it is read as it is and never
            # reconfigured or stopped. What came before it is not known here.
            self.started_by_us = False
            self.allocated_at_start = None
        else:
            try:
                record(enabled="all", context="alloc", stacks="python", max_entries=self.max_entries)
            except TypeError:
                return self._unavailable(
                    "this PyTorch's allocator history takes other arguments (PyTorch 2.1 or newer is needed)"
                )
            except Exception as exc:
                return self._unavailable(f"PyTorch refused to record: {type(exc).__name__}: {str(exc)[:200]}")
            self.started_by_us = True
            self.allocated_at_start = _allocated_total(torch)
        self.started_at = time.time()
        self.reason = None
        if self._stopped_elsewhere:
            # The blocks allocated while the history was off have no stack, so
            # the state says so, and since when.
            self._restarted(self.started_at, False, "stopped_elsewhere")
            self._stopped_elsewhere = False
        return True

    def _unavailable(self, reason: str) -> bool:
        self.unavailable = True
        self.reason = reason
        return False

    def stop(self) -> None:
        was_recording = self.recording and self.started_by_us
        self.wanted = False
        self.unavailable = False
        self.started_at = None
        self.started_by_us = False
        self.allocated_at_start = None
        self.reason = None
        self.restarted_at = None
        self.restart_kept_stacks = None
        self.restart_reason = None
        self._stopped_elsewhere = False
        if not was_recording:
            return
        torch = self._torch()
        try:
            # This stops the history and clears its events.
            torch.cuda.memory._record_memory_history(enabled=None)
        except Exception:
            pass

    def state(self) -> dict[str, Any]:
        if self.recording:
            state = "recording" if self.started_by_us else "shared"
        elif self.wanted:
            state = "unavailable" if self.unavailable else "waiting"
        else:
            state = "off"
        return {
            "state": state,
            "max_entries": self.max_entries if self.wanted and (self.started_by_us or not self.recording) else None,
            "started": self.started_at,
            "allocated_before_bytes": self.allocated_at_start,
            "reason": self.reason if self.wanted and not self.recording else None,
            "restarted_at": self.restarted_at if self.recording else None,
            "restart_kept_stacks": self.restart_kept_stacks if self.recording else None,
            "restart_reason": self.restart_reason if self.recording else None,
        }

    def snapshot(self) -> dict[str, Any] | None:
        """PyTorch's allocator snapshot (segments and history), or None while not recording."""
        if not self.recording:
            return None
        torch = self._torch()
        return torch.cuda.memory._snapshot()

    def live_segments(self) -> list[dict[str, Any]] | None:
        """The allocator's segments, whose live blocks carry their stacks, without
        the event history, or None while not recording.

        The history is costly: with 100,000 events, ``_snapshot()`` took 6.5 s
        on an H100 machine (PyTorch 2.11) while holding the GIL, where
        ``memory_snapshot(include_traces=False)`` took 0.6 ms. A torch whose
        ``memory_snapshot`` cannot leave the events out still builds them, and
        gives back the segments alone.
        """
        if not self.recording:
            return None
        snapshot = self._torch().cuda.memory.memory_snapshot
        return snapshot(include_traces=False) if self._leaves_events_out(snapshot) else snapshot()

    def reads_segments_alone(self) -> bool:
        """Whether reading the live blocks leaves the event history out, as
        PyTorch 2.11 and later can. It is True while not recording, since
        nothing is read then.

        Elsewhere each read builds the whole history, which takes seconds with
        the default bound. That is not worth paying after every cell, only when
        a listing is asked for.
        """
        if not self.recording:
            return True
        try:
            return self._leaves_events_out(self._torch().cuda.memory.memory_snapshot)
        except Exception:
            return False

    def _leaves_events_out(self, snapshot: Callable[..., Any]) -> bool:
        segments_only = self._segments_only
        if segments_only is None or segments_only[0] is not snapshot:
            # inspect.signature costs tens of microseconds, so it is asked once
            # per torch, not once per cell.
            segments_only = self._segments_only = (snapshot, _takes(snapshot, "include_traces"))
        return segments_only[1]

    def group(self, cells: CellFiles) -> list[tuple[int, SiteGrouper]]:
        """For each device index, its live blocks grouped by site, or [] while not recording."""
        segments = self.live_segments()
        if segments is None:
            return []
        groupers: dict[int, SiteGrouper] = {}
        for segment in segments:
            device = segment.get("device")
            if not isinstance(device, int):
                continue
            grouper = groupers.get(device)
            if grouper is None:
                grouper = groupers[device] = SiteGrouper(cells, _frame_of)
            for block in segment.get("blocks", ()) or ():
                if block.get("state") not in _LIVE_STATES:
                    continue
                size = block.get("size")
                if isinstance(size, int) and size > 0:
                    grouper.add(size, block.get("frames") or ())
        return sorted(groupers.items())


def _history_enabled(torch: Any) -> bool | None:
    """Whether PyTorch's allocator history is on, or None where this torch cannot
    say. It is asked only once CUDA is initialised."""
    enabled = getattr(getattr(torch, "_C", None), "_cuda_isHistoryEnabled", None)
    if enabled is None:
        return None
    try:
        return bool(enabled())
    except Exception:
        return None


# This is set once this process ran the symbolizer. A fork inherits it along
# with the imported modules, which is right, since they are imported there too.
_symbolizer_ran = False


def symbolizer_ready() -> bool:
    """Whether PyTorch's symbolizer ran here, or what it imports on first use is imported already."""
    return _symbolizer_ran or "torch._inductor" in sys.modules


def _symbolizer_calls(torch: Any) -> tuple[Callable[..., Any], Callable[..., Any]] | None:
    profiler = getattr(getattr(torch, "_C", None), "_profiler", None)
    gather = getattr(profiler, "gather_traceback", None)
    symbolize = getattr(profiler, "symbolize_tracebacks", None)
    return None if gather is None or symbolize is None else (gather, symbolize)


def prepare_symbolizer(torch: Any) -> None:
    """Run PyTorch's stack symbolizer once on a stack of this thread, as a snapshot
    would, so that what it imports on first use is imported at this moment (see
    the module docstring).

    Nothing of CUDA is touched, and a torch without these calls is left alone.
    It counts as run even when it fails, so that a failing import is not tried
    again at every cell.
    """
    global _symbolizer_ran
    calls = _symbolizer_calls(torch)
    if calls is None:
        return
    gather, symbolize = calls
    try:
        symbolize([gather(python=True, script=True, cpp=False)])
    except Exception:
        pass
    _symbolizer_ran = True


def _frame_of(raw: Any) -> Frame:
    if isinstance(raw, dict):
        line = raw.get("line")
        return (str(raw.get("filename", "?")), line if isinstance(line, int) else 0, raw.get("name"))
    return ("?", 0, None)


def _takes(function: Any, name: str) -> bool:
    """Whether ``function`` has a parameter called ``name``, rather than merely ``**kwargs``."""
    try:
        return name in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def _allocated_total(torch: Any) -> int | None:
    try:
        total = 0
        for index in range(torch_cuda.initialized_device_count(torch)):
            reading = torch_cuda.allocator_counters(torch, index)
            if reading is not None:
                if reading.allocated is None:
                    # One device is unknown, so the total is unknown.
                    return None
                total += reading.allocated
        return total
    except Exception:
        return None
