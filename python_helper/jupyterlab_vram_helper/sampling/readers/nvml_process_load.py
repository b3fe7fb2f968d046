"""Reads each process's share of a GPU's activity from the driver's per-process utilisation samples.

The memory figures say who holds a card; these say who keeps it busy. The
driver keeps, per process, samples of its SM, memory, encoder and decoder
utilisation; ``nvmlDeviceGetProcessUtilization(handle, lastSeen)`` returns
those taken after ``lastSeen`` (microseconds of the wall clock). Each reading
asks from the previous one on, so a process's figure is its mean over the time
between two readings, and one that ran no kernel meanwhile is not listed.

The call walks every process's samples under a driver lock and costs about as
much as the process list (about 250 us on an H200), so it is made every
:data:`PROCESS_LOAD_S` seconds rather than at every tick.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .nvml_codes import unavailable_reason

# The message shapes (protocol_types.py) are imported for annotations only.
if TYPE_CHECKING:
    from ...protocol_types import GpuProcessLoad

# How often the per-process samples are read, in seconds.
PROCESS_LOAD_S = 10.0
# At most this many processes are listed per device, because a shared card can
# run hundreds.
MAX_PROCESS_LOADS = 32
# This is NVML_VALUE_NOT_AVAILABLE for an unsigned int, which the driver gives
# when it has no figure.
_NOT_AVAILABLE_UINT = 0xFFFFFFFF
# The first reading asks for this much of the past, in microseconds.
_FIRST_LOOKBACK_US = int(PROCESS_LOAD_S * 1e6)


def _percent(value: Any) -> float | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return None if number == _NOT_AVAILABLE_UINT else float(number)


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(sum(known) / len(known), 1) if known else None


def process_loads(samples: list[Any], own_pid: Callable[[list[int]], int | None]) -> list[GpuProcessLoad]:
    """The driver's per-process samples, averaged per pid, busiest first.

    ``own_pid`` is given the pids listed and says which of them is this kernel's
    process.
    """
    by_pid: dict[int, list[tuple[float | None, float | None, float | None, float | None]]] = {}
    for sample in samples:
        pid = int(sample.pid)
        figures = (
            _percent(sample.smUtil),
            _percent(sample.memUtil),
            _percent(sample.encUtil),
            _percent(sample.decUtil),
        )
        by_pid.setdefault(pid, []).append(figures)
    ours = own_pid(list(by_pid))
    loads: list[GpuProcessLoad] = [
        {
            "pid": pid,
            "sm_percent": _mean([f[0] for f in rows]),
            "memory_percent": _mean([f[1] for f in rows]),
            "encoder_percent": _mean([f[2] for f in rows]),
            "decoder_percent": _mean([f[3] for f in rows]),
            "this_process": pid == ours,
        }
        for pid, rows in by_pid.items()
    ]
    loads.sort(key=lambda load: (-(load["sm_percent"] or 0.0), -(load["memory_percent"] or 0.0), load["pid"]))
    return loads[:MAX_PROCESS_LOADS]


class ProcessLoadReader:
    """Reads one device's per-process utilisation since the previous reading."""

    __slots__ = ("_last_seen_us",)

    def __init__(self) -> None:
        self._last_seen_us: int | None = None

    def read(
        self, nvml: Any, handle: Any, now_s: float, own_pid: Callable[[list[int]], int | None]
    ) -> list[GpuProcessLoad]:
        """The processes' loads since the previous reading.

        NVML's error is raised where the driver refuses, except NOT_FOUND, which
        only means that no process ran a kernel since then.
        """
        since = self._last_seen_us if self._last_seen_us is not None else int(now_s * 1e6) - _FIRST_LOOKBACK_US
        try:
            samples = list(nvml.nvmlDeviceGetProcessUtilization(handle, since))
        except Exception as exc:
            if unavailable_reason(exc) != "no_samples":
                raise
            samples = []  # No process ran a kernel since the last reading.
        newest = max((int(s.timeStamp) for s in samples), default=None)
        self._last_seen_us = newest if newest is not None else int(now_s * 1e6)
        return process_loads(samples, own_pid)
