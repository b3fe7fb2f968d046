"""Turns what happened to a cluster's workers between two readings into ClusterEvents.

Paused and resumed come from the worker's status, spilling from its spilled bytes starting to
grow, memory_restart from the nanny's own log line (engine_logs.py), left from a worker gone
without one. Errors a cell raised on a worker (killed_worker, oom_killed, cuda_oom) are added
by cluster_errors.py through :meth:`ClusterEvents.add`. Each event carries the worker's last
figures before it, so that the user sees how close to its limit the worker was.
"""

from __future__ import annotations

import collections
import itertools
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from .engine_logs import EngineLogCatcher

MAX_EVENTS = 50
# The last figures of this many workers that left are kept, for an error that names one later
# (a KilledWorker is raised after its worker is gone).
MAX_DEPARTED = 256


def last_figures(worker: Mapping[str, Any], read_at: float) -> dict[str, Any]:
    """The ClusterLastFigures of a worker as one reading gave it."""
    gpus = [gpu["used_bytes"] for gpu in worker["gpus"] if gpu["used_bytes"] is not None]
    return {
        "read_at": read_at,
        "memory_bytes": worker["memory_bytes"],
        "memory_limit_bytes": worker["memory_limit_bytes"],
        "spilled_bytes": worker["spilled_bytes"],
        "gpu_used_bytes": sum(gpus) if gpus else None,
    }


class ClusterEvents:
    """The helper's cluster events: the latest MAX_EVENTS, numbered 1, 2, 3..."""

    def __init__(self, logs: EngineLogCatcher | None = None) -> None:
        self.logs = logs if logs is not None else EngineLogCatcher()
        self.events: collections.deque[dict[str, Any]] = collections.deque(maxlen=MAX_EVENTS)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        # The last figures of each (cluster, worker id) seen, for the events that come after.
        self._last: dict[tuple[str, str], tuple[dict[str, Any], int | None]] = {}
        self._departed: collections.OrderedDict[tuple[str, str], tuple[dict[str, Any], int | None]] = (
            collections.OrderedDict()
        )
        # Workers whose spilled bytes grew at the last reading, and those already explained.
        self._spilling: set[tuple[str, str]] = set()
        self._explained: set[tuple[str, str]] = set()

    def add(
        self,
        kind: str,
        engine: str,
        cluster: str,
        worker: str | None,
        pid: int | None,
        message: str | None,
        now: float,
    ) -> dict[str, Any]:
        """Record one event (with the worker's last figures where it was read) and return it."""
        last = self._last_of(cluster, worker)
        if pid is None and last is not None:
            pid = last[1]
        event = {
            "id": 0,
            "time": now,
            "engine": engine,
            "cluster": cluster[:1024],
            "worker": worker[:1024] if worker else None,
            "pid": pid if isinstance(pid, int) and pid > 0 else None,
            "kind": kind,
            "engine_message": message[:1000] if message else None,
            "last": dict(last[0]) if last is not None else None,
        }
        with self._lock:
            event["id"] = next(self._ids)
            self.events.append(event)
        return event

    def _last_of(self, cluster: str, worker: str | None) -> tuple[dict[str, Any], int | None] | None:
        """A worker's last figures and pid, where it was read (still there, or gone lately)."""
        key = (cluster, worker or "")
        return self._last.get(key) or self._departed.get(key)

    def latest(self) -> list[dict[str, Any]]:
        """The kept events, oldest first."""
        with self._lock:
            return list(self.events)

    def compare(
        self,
        engine: str,
        cluster: str,
        before: Sequence[Mapping[str, Any]] | None,
        now: Sequence[Mapping[str, Any]],
        read_at: float,
        since: float,
    ) -> list[dict[str, Any]]:
        """The events between the reading ``before`` and the reading ``now`` (taken at ``read_at``).

        ``since`` is when the reading before began, so that the engine's log lines that came
        in between explain the workers that went.
        """
        found: list[dict[str, Any]] = []
        old = {w["id"]: w for w in before} if before is not None else {}
        for line in self.logs.since(since):
            if line.worker is not None and (cluster, line.worker) not in self._explained:
                self._explained.add((cluster, line.worker))
                found.append(self.add("memory_restart", engine, cluster, line.worker, line.pid, line.text, read_at))
        for worker in now:
            found.extend(self._changes(engine, cluster, old.get(worker["id"]), worker, read_at))
        current = {w["id"] for w in now}
        for worker_id in old.keys() - current:
            key = (cluster, worker_id)
            if key not in self._explained:
                found.append(self.add("left", engine, cluster, worker_id, None, None, read_at))
            self._explained.discard(key)
            self._spilling.discard(key)
            departed = self._last.pop(key, None)
            if departed is not None:
                self._departed[key] = departed
                while len(self._departed) > MAX_DEPARTED:
                    self._departed.popitem(last=False)
        for worker in now:
            self._last[(cluster, worker["id"])] = (last_figures(worker, read_at), worker["pid"])
        return found

    def _changes(
        self, engine: str, cluster: str, before: Mapping[str, Any] | None, now: Mapping[str, Any], read_at: float
    ) -> list[dict[str, Any]]:
        if before is None:
            return []
        found = []
        wid = now["id"]
        if before["status"] != "paused" and now["status"] == "paused":
            found.append(self.add("paused", engine, cluster, wid, now["pid"], self._pause_line(), read_at))
        elif before["status"] == "paused" and now["status"] == "running":
            found.append(self.add("resumed", engine, cluster, wid, now["pid"], None, read_at))
        key = (cluster, wid)
        grew = before["spilled_bytes"] is not None and (now["spilled_bytes"] or 0) > before["spilled_bytes"]
        if grew and key not in self._spilling:
            found.append(self.add("spilling", engine, cluster, wid, now["pid"], None, read_at))
        if grew:
            self._spilling.add(key)
        else:
            self._spilling.discard(key)
        return found

    def _pause_line(self) -> str | None:
        """The worker memory monitor's "Pausing worker" line, heard only for thread workers."""
        for line in reversed(tuple(self.logs.lines)):
            if "Pausing worker" in line.text:
                return line.text
        return None
