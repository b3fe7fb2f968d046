"""The clusters' memory around one cell: the ``cluster`` section of a cell record.

The workers' memory cannot be reset or read exactly at a cell's edges: the poller
(cluster_poller.py) reads the engine's telemetry every ``cluster_interval_s``, so a record
carries the reading before the cell, the first one after it, and the largest in between, named
a sampled maximum. The cell hooks only take the last reading (one attribute read) and, where a
cluster is attached, open a window that the poller's readings fold into; the record waits for
the reading after the cell on the sender thread, for a bounded time, never in the user's cell.
This module is imported at the helper's start, so it holds only this bookkeeping.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, NamedTuple

# The longest the sender thread waits for the first reading after a cell.
MAX_AFTER_WAIT_S = 3.0


class ClusterReading(NamedTuple):
    """One poller reading, summed over the clusters (numbers and names only)."""

    at: float  # time.perf_counter() when the reading began
    names: tuple[str, ...]
    memory_bytes: int | None
    workers: int
    last_event: int  # the highest event id at the reading


class CellClusterWindow:
    """What a running cell keeps of the readings: the one before, the largest, and the one after."""

    __slots__ = ("before", "most", "samples", "names", "ended_at", "after", "first_event")

    def __init__(self, before: ClusterReading):
        self.before = before
        self.most = before.memory_bytes
        self.samples = 0
        self.names = set(before.names)
        self.ended_at: float | None = None
        self.after: ClusterReading | None = None
        self.first_event = before.last_event + 1

    def fold(self, reading: ClusterReading) -> None:
        """Count one reading: during the cell, or the first after it."""
        if reading.at < self.before.at or self.after is not None:
            return
        if self.ended_at is not None and reading.at > self.ended_at:
            self.after = reading
        else:
            self.samples += 1
        self.names.update(reading.names)
        if reading.memory_bytes is not None and (self.most is None or reading.memory_bytes > self.most):
            self.most = reading.memory_bytes


class CellClusters:
    """The link between the poller's readings and the cells: windows opened by the hooks, folded by the poller."""

    def __init__(self) -> None:
        # The last reading while a cluster is attached; None while none is (the hooks' test).
        self.latest: ClusterReading | None = None
        self.spacing_s = 2.0
        # Asks the poller for a reading now (bound by the poller when it starts).
        self.request_reading: Callable[[], None] = lambda: None
        # The ids of the cluster events from a given id on (bound by the poller).
        self.event_ids: Callable[[int], list[int]] = lambda first: []
        self._open: list[CellClusterWindow] = []
        self._changed = threading.Condition()

    def begin(self) -> CellClusterWindow | None:
        """A window for a cell that starts now, or None where no cluster is attached (pre_run_cell)."""
        latest = self.latest
        if latest is None:
            return None
        window = CellClusterWindow(latest)
        self._open.append(window)
        return window

    def observe(self, reading: ClusterReading | None) -> None:
        """The poller's reading (None: no cluster any more), folded into every open window."""
        with self._changed:
            self.latest = reading if reading is not None and reading.names else None
            if reading is not None:
                for window in tuple(self._open):
                    window.fold(reading)
            self._changed.notify_all()

    def wait_after(self, windows: list[CellClusterWindow], timeout: float = MAX_AFTER_WAIT_S) -> None:
        """Wait (the sender thread, at most ``timeout``) until each window has its reading after the cell."""
        if all(w.after is not None for w in windows):
            return
        self.request_reading()
        with self._changed:
            self._changed.wait_for(lambda: all(w.after is not None or self.latest is None for w in windows), timeout)

    def section(self, window: CellClusterWindow) -> dict[str, Any]:
        """The record's CellCluster for a finished window (the sender thread)."""
        try:
            self._open.remove(window)
        except ValueError:
            pass
        before, after = window.before, window.after
        return {
            "clusters": sorted(window.names),
            "before_bytes": before.memory_bytes,
            "after_bytes": after.memory_bytes if after is not None else None,
            "sampled_max_bytes": window.most,
            "workers_before": before.workers,
            "workers_after": after.workers if after is not None else before.workers,
            "samples": window.samples + 1 + (after is not None),
            "sample_spacing_s": self.spacing_s,
            "events": self.event_ids(window.first_event),
        }
