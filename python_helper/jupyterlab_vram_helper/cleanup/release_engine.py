"""Answers the ``release_engine`` request: lists what engines started, or releases one (docs/protocol.md).

The frontend asks the user before it sends a release, so the request is the
confirmation, and it names one releasable by kind and name, as the listing
gave them: nothing is released blindly. The release runs on the kernel's main
thread, between cells, as the cleanup requests do: the engines' objects live
in the notebook's namespace, and their close methods expect the thread that
made them or their own loops.

The memory figures before and after are one reading each of the sampler's
source (the process tree and NVML's lists read anew), as for ``stop_process``.
Between the steps and the second reading the helper waits, up to the
request's timeout, for the released processes to end; those still alive are
reported, not hidden. No reference to a user object outlives the request.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..sampling.processes.proc_files import read_stat
from . import release_steps
from .releasables import find_releasables, locate, process_names, releasable, tree_processes
from .stop_process import stop_memory

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import Releasable, ReleaseEngineResult, ReleaseOutcome

# How often the released processes are looked at while waiting for them to end.
POLL_S = 0.05


class EngineRelease:
    """The ``release_engine`` request of one kernel."""

    def __init__(self, shell: Callable[[], Any], read_figures: Callable[[], Any], root: str = "/proc"):
        self._shell = shell
        self._read_figures = read_figures
        self._root = root

    def answer(self, mode: str, kind: str | None, name: str | None, timeout_s: float) -> ReleaseEngineResult:
        """The reply's result: the listing, and with mode release what releasing ``kind``/``name`` did."""
        started = time.perf_counter()
        figures = self._read_figures()
        released = None
        if mode == "release":
            assert kind is not None and name is not None
            released, figures = self._release(kind, name, timeout_s, figures)
        return {
            "mode": mode,
            "releasables": self._listing(figures),
            "released": released,
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
        }

    def _user_ns(self) -> tuple[Any, dict[str, Any]]:
        shell = self._shell()
        user_ns = getattr(shell, "user_ns", None)
        return shell, user_ns if isinstance(user_ns, dict) else {}

    def _listing(self, figures: Any) -> list[Releasable]:
        _, user_ns = self._user_ns()
        tree = figures.get("processes")
        found = [releasable(item, tree) for item in find_releasables(user_ns)]
        return sorted(found, key=lambda r: -(r["host_bytes"] or 0))

    def _release(self, kind: str, name: str, timeout_s: float, figures: Any) -> tuple[ReleaseOutcome, Any]:
        shell, user_ns = self._user_ns()
        before = stop_memory(figures)
        match = [item for item in find_releasables(user_ns) if item.kind == kind and item.name == name]
        objects = locate(kind, name, user_ns) if match else []
        if not objects:
            reason = f"no {kind} named {name!r} can be released now (it ended, or was released): nothing was done"
            return _outcome(kind, name, "refused", reason, [], [], [], 0.0, before, before), figures
        entries = tree_processes(match[0], figures.get("processes"))
        context = release_steps.ReleaseContext(shell, user_ns, entries, self._root)
        steps = release_steps.release(kind, name, objects, context, timeout_s)
        waited_started = time.monotonic()
        alive = self._wait(entries, timeout_s)
        waited = time.monotonic() - waited_started
        after_figures = self._read_figures()
        failed = [step for step in steps if not step["ok"]]
        outcome = "partial" if failed or alive else "released"
        partial = _partial_reason(failed, alive, timeout_s) if outcome == "partial" else None
        after = stop_memory(after_figures)
        return _outcome(kind, name, outcome, partial, steps, entries, alive, waited, before, after), after_figures

    def _wait(self, entries: list[dict[str, Any]], timeout_s: float) -> list[dict[str, Any]]:
        """Wait up to ``timeout_s`` for the processes to end; those still alive then."""
        deadline = time.monotonic() + timeout_s
        while True:
            alive = [entry for entry in entries if self._alive(entry)]
            if not alive or time.monotonic() >= deadline:
                return alive
            time.sleep(POLL_S)

    def _alive(self, entry: dict[str, Any]) -> bool:
        stat = read_stat(self._root, entry["pid"])
        # A zombie has ended: it holds no memory, and its owner reaps it.
        return stat is not None and stat.start_time == entry["start_time"] and stat.state not in ("Z", "X", "x")


def _partial_reason(failed: list[Any], alive: list[Any], timeout_s: float) -> str:
    parts = [f"{step['action']} failed: {step['error']}" for step in failed]
    if alive:
        pids = ", ".join(str(entry["pid"]) for entry in alive)
        parts.append(f"still alive after {timeout_s:g} s: pid {pids}")
    return "; ".join(parts)


def _outcome(kind, name, outcome, reason, steps, entries, alive, waited, before, after) -> ReleaseOutcome:
    return {
        "kind": kind,
        "name": name,
        "outcome": outcome,
        "reason": reason,
        "steps": steps,
        "processes": process_names(entries),
        "still_alive": process_names(alive),
        "waited_s": round(waited, 3),
        "before": before,
        "after": after,
    }
