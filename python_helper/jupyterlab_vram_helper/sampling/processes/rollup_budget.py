"""Paces the reads of /proc/<pid>/smaps_rollup, whose cost grows with the memory a process maps.

Reading it walks the process's page tables: about 25 us per MB resident
(measured: 50 ms for a process of 2 GB), so reading every child at every tick
would cost a notebook with a few large DataLoader workers several percent of
a core. Instead the reads share a budget of CPU time: it fills at
:data:`CORE_SHARE` of a core (every second, that many seconds of reading) up
to :data:`BURST_S`, and each read spends what it took (the thread's CPU
time). So new processes, and a burst of them, are read at once, and the
steady cost is bounded whatever their size: a large process is read less
often, and its ``rollup_at`` says when it was.

Which process is read first: one never read, then one whose RSS moved by
:data:`RSS_MOVE_BYTES` since its last read, then the one read longest ago
(if at least :data:`MIN_AGE_S` ago). Copy-on-write growth (a forked worker
touching its parent's objects) moves the USS but not the RSS: only the age
catches it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# The share of one core the reads may take in the long run, and the most they may take at once (seconds).
CORE_SHARE = 0.0005
BURST_S = 0.1
# An RSS move of this much since the last read makes a process due at once.
RSS_MOVE_BYTES = 8 << 20
# A process is read again at most this often, whatever the budget.
MIN_AGE_S = 1.0


class RollupBudget:
    """The CPU time smaps_rollup reads may still spend (see the module docstring)."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, share: float = CORE_SHARE, burst_s: float = BURST_S
    ):
        self._clock = clock
        self._share = share
        self._burst_s = burst_s
        self._left = burst_s
        self._filled_at = clock()

    def available(self) -> bool:
        """Whether a read may start now (the budget refilled since the last look)."""
        now = self._clock()
        self._left = min(self._burst_s, self._left + (now - self._filled_at) * self._share)
        self._filled_at = now
        return self._left > 0

    def spend(self, seconds: float) -> None:
        """Charge one read's CPU time (the budget may go below zero: the next reads wait longer)."""
        self._left -= seconds


def read_order(candidates: list[tuple[int, float | None, int, int | None]], now: float) -> list[int]:
    """The pids to read, most due first: ``candidates`` are (pid, last read at or None, RSS now, RSS then)."""
    never, moved, stale = [], [], []
    for pid, read_at, rss, rss_then in candidates:
        if read_at is None:
            never.append(pid)
        elif rss_then is not None and abs(rss - rss_then) >= RSS_MOVE_BYTES and now - read_at >= MIN_AGE_S / 4:
            moved.append((read_at, pid))
        elif now - read_at >= MIN_AGE_S:
            stale.append((read_at, pid))
    return never + [pid for _, pid in sorted(moved)] + [pid for _, pid in sorted(stale)]


thread_cpu: Callable[[], float] = getattr(time, "thread_time", time.perf_counter)
