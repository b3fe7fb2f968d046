"""Stops one process the kernel started, on the user's request (``stop_process``, docs/protocol.md).

The process is named by its pid and its start time, as the tree listed it: a
pid is reused, and the user confirmed stopping that process, not whatever
has its pid now. So at the moment of the signal the helper checks again that
the process is in the kernel's tree (a descendant, or one re-parented away
that is followed) with that start time, and that it is not the kernel
itself. Where Linux gives a process handle (``os.pidfd_open``, Linux 5.3),
the start time is checked after the handle is open and the signal goes
through it: no other process can receive it. Elsewhere the check comes right
before ``os.kill``.

SIGTERM first, then SIGKILL once ``timeout_s`` ran out. The helper never
reaps a child (``waitpid``): its owner (multiprocessing, subprocess) would
lose its exit status. A child of the kernel that ended stays a zombie,
holding no memory, until its owner waits for it.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..sampling.processes.proc_files import ProcStat, read_stat

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import StopMemory, StopProcessResult

# How often the process is looked at while waiting for it to end.
POLL_S = 0.02


class StopRequest:
    """One stop: the process, and how the helper reads its memory and the tree."""

    def __init__(self, tree: Any, snapshot: Callable[[], StopMemory], pid: int, start_time: int, timeout_s: float):
        self.tree = tree
        self.snapshot = snapshot
        self.pid = pid
        self.start_time = start_time
        self.timeout_s = timeout_s
        self.started = time.perf_counter()

    def refused(self, refusal: str, reason: str, process: Any = None) -> StopProcessResult:
        """The reply when nothing was signalled."""
        memory = self.snapshot()
        return self.result("refused", refusal, reason, [], 0.0, process, False, memory, memory)

    def result(self, outcome, refusal, reason, signals, waited, process, zombie, before, after) -> StopProcessResult:
        """The reply."""
        return {
            "pid": self.pid,
            "start_time": self.start_time,
            "outcome": outcome,
            "refusal": refusal,
            "reason": reason,
            "signals": signals,
            "waited_s": round(waited, 3),
            "process": process,
            "still_zombie": zombie,
            "before": before,
            "after": after,
            "elapsed_ms": round((time.perf_counter() - self.started) * 1000, 1),
        }


def stop_process(
    tree: Any, snapshot: Callable[[], StopMemory], pid: int, start_time: int, timeout_s: float
) -> StopProcessResult:
    """Stop that process (see the module docstring) and say what happened, with memory before and after."""
    request = StopRequest(tree, snapshot, pid, start_time, timeout_s)
    if pid == tree.pid:
        return request.refused("kernel", f"pid {pid} is the kernel itself: stop it with the kernel's own controls")
    in_tree, process = tree.find(pid, start_time)
    if not in_tree:
        return _not_in_tree(request)
    before = snapshot()
    handle = _open_handle(pid)
    try:
        # The check at the moment of the signal: the handle (where there is one) now holds this very process.
        problem = _identity_problem(request)
        if problem is not None:
            return request.refused(*problem, process=process)
        signals: list[str] = []
        refusal = _signal(handle, pid, signal.SIGTERM, signals)
        if refusal is not None:
            return request.refused("permission", refusal, process=process)
        waited_started = time.monotonic()
        ended = _wait(request, timeout_s)
        outcome = "terminated"
        if not ended:
            _signal(handle, pid, signal.SIGKILL, signals)
            ended = _wait(request, timeout_s)
            outcome = "killed" if ended else "survived"
        waited = time.monotonic() - waited_started
    finally:
        if handle is not None:
            os.close(handle)
    zombie = _is_zombie(request)
    reason = _outcome_reason(outcome, timeout_s, zombie)
    return request.result(outcome, None, reason, signals, waited, process, zombie, before, snapshot())


def _not_in_tree(request: StopRequest) -> StopProcessResult:
    stat = read_stat(request.tree.root, request.pid)
    if stat is None:
        return request.refused("gone", f"no process has pid {request.pid} now: it ended; nothing was signalled")
    if stat.start_time != request.start_time:
        return request.refused(
            "reused",
            f"pid {request.pid} is another process now (started at tick {stat.start_time}, not "
            f"{request.start_time}): the one listed ended; nothing was signalled",
        )
    return request.refused(
        "not_descendant", f"pid {request.pid} was not started by the kernel (nor followed): nothing was signalled"
    )


def _identity_problem(request: StopRequest) -> tuple[str, str] | None:
    stat = read_stat(request.tree.root, request.pid)
    if stat is None or _ended(stat):
        return "gone", f"pid {request.pid} ended before the signal: nothing was signalled"
    if stat.start_time != request.start_time:
        return "reused", f"pid {request.pid} became another process before the signal: nothing was signalled"
    return None


def _open_handle(pid: int) -> int | None:
    """A pidfd for ``pid`` (Linux 5.3, Python 3.9), or None where there is none."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return opener(pid)
    except OSError:
        return None


def _signal(handle: int | None, pid: int, signum: int, sent: list[str]) -> str | None:
    """Send ``signum``; None once sent, else why it could not be."""
    try:
        sender = getattr(signal, "pidfd_send_signal", None)
        if handle is not None and sender is not None:
            sender(handle, signum)
        else:
            os.kill(pid, signum)
    except ProcessLookupError:
        return None  # it ended just now: as good as sent
    except PermissionError as exc:
        return f"the system refused to signal pid {pid}: {exc.strerror or exc}"
    sent.append(signal.Signals(signum).name)
    return None


def _ended(stat: ProcStat) -> bool:
    return stat.state in ("Z", "X", "x")


def _wait(request: StopRequest, timeout_s: float) -> bool:
    """Wait up to ``timeout_s`` for the process to end (a zombie has); True once it has."""
    deadline = time.monotonic() + timeout_s
    while True:
        stat = read_stat(request.tree.root, request.pid)
        if stat is None or stat.start_time != request.start_time or _ended(stat):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)


def _is_zombie(request: StopRequest) -> bool:
    stat = read_stat(request.tree.root, request.pid)
    return stat is not None and stat.start_time == request.start_time and stat.state == "Z"


def _outcome_reason(outcome: str, timeout_s: float, zombie: bool) -> str | None:
    if outcome == "killed":
        text = f"it did not end within {timeout_s:g} s of SIGTERM: SIGKILL ended it"
    elif outcome == "survived":
        return (
            f"it did not end within {timeout_s:g} s of SIGKILL (uninterruptible sleep: waiting on the disk or a driver)"
        )
    else:
        text = None
    if zombie:
        note = "it ended; its parent has not reaped it yet (it holds no memory)"
        return note if text is None else f"{text}; {note}"
    return text


def stop_memory(figures: Any) -> StopMemory:
    """A stop's before or after figures, from one reading of the sampler's source (NVML's lists read anew)."""
    processes = figures.get("processes")
    return {
        "totals": processes["totals"] if processes else None,
        "available_bytes": figures["host"]["available_bytes"],
        "gpus": [
            {"index": gpu["index"], "used_bytes": gpu["nvml"]["used_bytes"] if gpu["nvml"] else None}
            for gpu in figures["gpus"]
        ],
    }
