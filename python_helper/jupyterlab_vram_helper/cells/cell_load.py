"""How busy each GPU was while a cell ran: mean and peak utilisation, energy, throttling.

The figures come from the driver, read after the cell ended, so the cell hooks
pay nothing for them: the hooks already stamp each cell's start (wall clock)
and duration, and everything else happens on other threads.

- On the sampler thread, :meth:`CellLoadTracker.observe` follows each running
  cell through the load reader's readings (readers/nvml_load.py): the last
  reading before the cell's start (the energy counter's anchor), and the
  utilisation and throttle reasons of those during it. It costs a few
  comparisons per tick.
- On the sender thread, just before the records go out, :meth:`entries` asks
  the driver's own utilisation buffer (``nvmlDeviceGetSamples`` with
  ``NVML_GPU_UTILIZATION_SAMPLES``) for the samples since the earliest start of
  the round's cells (one call per device for all of them), reads the energy
  counter and the throttle reasons once, and makes each cell's figures. So a
  300 ms cell gets the driver's samples inside it, which no 1 Hz poll has.

Where the buffer does not reach back to a cell's start (a long cell: the
driver keeps a few dozen seconds), the record says so (``coverage``) and the
rest of the cell is filled from the readings the tracker saw. Energy is the
counter's difference, each end placed between the readings on either side of
it; where the board has no counter, the driver's power samples integrated.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..sampling.readers.nvml_codes import sample_value, throttle_names, unavailable_reason
from ..sampling.readers.nvml_load import DeviceLoad, LoadReading, call_device, throttle_mask

if TYPE_CHECKING:
    from ..protocol_types import CellGpuLoad
    from ..sampling.readers.nvml_load import LoadReader
    from .cell_readings import PendingCell

NVML_TOTAL_POWER_SAMPLES = 0
NVML_GPU_UTILIZATION_SAMPLES = 1
# The buffer is asked from this long before the earliest start: a sample at or
# before a cell's start proves that the buffer reaches back to it.
LOOKBACK_S = 1.0
# At most this many cells are followed at once, as nested cells and subshells
# make several. Past it, the oldest track is dropped, since its cell may never
# end.
MAX_TRACKS = 64

# The driver's sample buffer as (timestamp in seconds, value) pairs, oldest first.
Samples = list[tuple[float, float]]


class CellTrack:
    """What the sampler thread saw of one running cell, per device (CUDA ordinal)."""

    __slots__ = ("anchors", "folded", "sm", "masks")

    def __init__(self) -> None:
        # The last reading before the cell's start.
        self.anchors: dict[int, LoadReading] = {}
        # The read_at of the last reading looked at, so that none is folded twice.
        self.folded: dict[int, float] = {}
        # The readings during the cell.
        self.sm: dict[int, list[LoadReading]] = {}
        # The throttle reasons seen during the cell.
        self.masks: dict[int, int] = {}


class CellLoadTracker:
    """Follows running cells through the load readings and makes each ended cell's GPU load figures."""

    def __init__(self, reader: LoadReader, wall_clock: Callable[[], float] = time.time):
        self._reader = reader
        self._wall_clock = wall_clock
        self._tracks: dict[int, CellTrack] = {}

    # -- sampler thread -----------------------------------------------------------

    def observe(self, cells: Sequence[PendingCell]) -> None:
        """Fold the readings made since the last call into each running cell's track."""
        loads = self._reader.by_index
        if not loads:
            return
        for cell in cells:
            track = self._tracks.get(id(cell))
            if track is None:
                if len(self._tracks) >= MAX_TRACKS:
                    del self._tracks[next(iter(self._tracks))]
                track = self._tracks[id(cell)] = CellTrack()
            for index, load in loads.items():
                _fold(track, index, tuple(load.ring), cell.started)

    # -- sender thread ------------------------------------------------------------

    def entries(self, cells: Sequence[tuple[PendingCell, float]]) -> dict[int, list[CellGpuLoad]]:
        """The GPU load entries of each ``(cell, end)``, with the end in Unix
        seconds, keyed by ``id(cell)``. Each list is empty without NVML."""
        nvml = self._reader.module
        loads = self._reader.by_index
        tracks = [self._tracks.pop(id(cell), None) for cell, _ in cells]
        result: dict[int, list[CellGpuLoad]] = {id(cell): [] for cell, _ in cells}
        if nvml is None or not loads or not cells:
            return result
        since = min(cell.started for cell, _ in cells) - LOOKBACK_S
        for index, load in sorted(loads.items()):
            device = DeviceRound(nvml, load, since, self._wall_clock)
            for (cell, end), track in zip(cells, tracks, strict=True):
                result[id(cell)].append(device.entry(index, cell.started, end, track))
        return result


def _fold(track: CellTrack, index: int, ring: tuple[LoadReading, ...], started: float) -> None:
    last = track.folded.get(index, float("-inf"))
    for reading in ring:
        if reading.read_at <= last:
            continue
        if reading.read_at < started:
            track.anchors[index] = reading
        else:
            track.sm.setdefault(index, []).append(reading)
            if reading.throttle_mask is not None:
                track.masks[index] = track.masks.get(index, 0) | reading.throttle_mask
    if ring:
        track.folded[index] = ring[-1].read_at


class DeviceRound:
    """One device's driver readings for a round of ended cells, made once and shared by them."""

    def __init__(self, nvml: Any, load: DeviceLoad, since: float, wall_clock: Callable[[], float]):
        self.load = load
        self.parent_figures: list[Any] = []  # the wire names of CellGpuLoadUnavailable
        self.utilization, self.utilization_reason = self._samples(
            nvml, NVML_GPU_UTILIZATION_SAMPLES, since, "sm_mean_percent"
        )
        now = wall_clock()
        self.ring = tuple(load.ring)
        energy, self.energy_reason = call_device(nvml, load, "energy", nvml.nvmlDeviceGetTotalEnergyConsumption)
        self.energy_now = LoadReading(now, None, None, int(energy)) if energy is not None else None
        self.power: Samples | None = None
        self.power_reason: str | None = None
        if energy is None:
            self.power, self.power_reason = self._samples(nvml, NVML_TOTAL_POWER_SAMPLES, since, "energy_joules")
        mask, self.throttle_reason = call_device(nvml, load, "throttle", lambda h: throttle_mask(nvml, h))
        self.mask_now: int | None = mask
        if "energy" in load.on_parent or "throttle" in load.on_parent:
            self.parent_figures += [
                n for c, n in (("energy", "energy_joules"), ("throttle", "throttle_reasons")) if c in load.on_parent
            ]

    def _samples(self, nvml: Any, kind: int, since: float, figure: str) -> tuple[Samples | None, str | None]:
        """The driver's buffer of ``kind`` since ``since``, from the instance or, where it has none, its parent."""
        handles = [self.load.handle] + ([self.load.parent] if self.load.parent is not None else [])
        reason = "not_supported"
        for handle in handles:
            try:
                value_type, samples = nvml.nvmlDeviceGetSamples(handle, kind, int(since * 1e6))
            except Exception as exc:
                reason = unavailable_reason(exc)
                if reason == "no_samples":
                    return [], None
                if reason != "not_supported":
                    return None, reason
                continue
            if handle is not self.load.handle:
                self.parent_figures.append(figure)
            values = [(int(s.timeStamp) / 1e6, sample_value(value_type, s.sampleValue)) for s in samples]
            return sorted((t, v) for t, v in values if v is not None), None
        return None, reason

    def entry(self, index: int, start: float, end: float, track: CellTrack | None) -> CellGpuLoad:
        """One cell's figures on this device."""
        unavailable: dict[str, str] = {}
        during = [r for r in self.ring if start <= r.read_at <= end]
        if track is not None:
            during = _merged(track.sm.get(index, []), during)
        mean, peak, count, coverage, covered = utilization_over(self.utilization, start, end, during)
        if mean is None:
            unavailable["sm_mean_percent"] = self.utilization_reason or "no_samples"
        energy, method = self._energy(index, start, end, track)
        if energy is None:
            unavailable["energy_joules"] = self.energy_reason or self.power_reason or "no_samples"
        reasons = self._throttle(during, track, index)
        if reasons is None:
            unavailable["throttle_reasons"] = self.throttle_reason or "no_samples"
        return {
            "index": index,
            "scope": self.load.scope,
            "parent_figures": list(dict.fromkeys(self.parent_figures)),
            "sm_mean_percent": mean,
            "sm_max_percent": peak,
            "utilization_samples": count,
            "coverage": coverage,
            "covered_s": covered,
            "energy_joules": energy,
            "energy_method": method,
            "throttle_reasons": reasons,
            "unavailable": unavailable,  # type: ignore[typeddict-item]
        }

    def _energy(self, index: int, start: float, end: float, track: CellTrack | None) -> tuple[float | None, str | None]:
        if self.energy_now is not None:
            readings = [r for r in self.ring if r.energy_mj is not None]
            anchor = track.anchors.get(index) if track is not None else None
            if anchor is not None and anchor.energy_mj is not None:
                readings = _merged([anchor], readings)
            readings.append(self.energy_now)
            joules = energy_between(readings, start, end)
            return (joules, "energy_counter") if joules is not None else (None, None)
        if self.power:
            joules = integrate_power(self.power, start, end)
            return (joules, "power_samples") if joules is not None else (None, None)
        return None, None

    def _throttle(self, during: list[LoadReading], track: CellTrack | None, index: int) -> list[str] | None:
        masks = [r.throttle_mask for r in during if r.throttle_mask is not None]
        if track is not None and index in track.masks:
            masks.append(track.masks[index])
        if self.mask_now is not None:
            masks.append(self.mask_now)
        if not masks:
            return None
        union = 0
        for mask in masks:
            union |= mask
        return throttle_names(union)


def _merged(first: list[LoadReading], second: list[LoadReading]) -> list[LoadReading]:
    """Both lists' readings once each, oldest first."""
    by_time = {r.read_at: r for r in first}
    by_time.update({r.read_at: r for r in second})
    return [by_time[t] for t in sorted(by_time)]


def utilization_over(
    samples: Samples | None, start: float, end: float, readings: list[LoadReading]
) -> tuple[float | None, float | None, int, str, float]:
    """The GPU's utilisation from ``start`` to ``end``, as (mean, max, samples used, coverage, seconds covered).

    A sample is the utilisation over the driver's sample period that ends at
    its timestamp, so the samples inside the cell are its figures. The buffer
    reaches back to the start if it holds a sample at or before it, or its
    first sample is within one sample period of it; otherwise the part it does
    not cover comes from ``readings`` (the helper's own, about 2 s apart).
    """
    duration = max(end - start, 0.0)
    if not samples:
        return _from_readings(readings) + (0, "none", 0.0)
    inside = [v for t, v in samples if start < t <= end]
    period = _period(samples)
    if not inside:
        after = [(t, v) for t, v in samples if t > end and t - period <= end]
        inside = [after[0][1]] if after else []
    if not inside:
        return _from_readings(readings) + (0, "none", 0.0)
    first = samples[0][0]
    if first <= start or first - period <= start:
        return round(sum(inside) / len(inside), 1), max(inside), len(inside), "full", round(duration, 3)
    covered = max(end - first, 0.0)
    buffer_mean = sum(inside) / len(inside)
    earlier = [r for r in readings if r.read_at < first and r.sm_percent is not None]
    if not earlier or duration <= 0:
        return round(buffer_mean, 1), max(inside), len(inside), "partial", round(covered, 3)
    earlier_mean = sum(r.sm_percent for r in earlier) / len(earlier)  # type: ignore[misc]
    mean = (buffer_mean * covered + earlier_mean * (duration - covered)) / duration
    peak = max(max(inside), max(r.sm_percent for r in earlier))  # type: ignore[type-var]
    return round(mean, 1), peak, len(inside), "partial", round(covered, 3)


def _from_readings(readings: list[LoadReading]) -> tuple[float | None, float | None]:
    known = [r.sm_percent for r in readings if r.sm_percent is not None]
    return (round(sum(known) / len(known), 1), max(known)) if known else (None, None)


def _period(samples: Samples) -> float:
    """The driver's sample period, taken as the median gap between samples, or a
    second where there is only one sample."""
    gaps = sorted(b[0] - a[0] for a, b in zip(samples, samples[1:], strict=False) if b[0] > a[0])
    return gaps[len(gaps) // 2] if gaps else 1.0


def energy_between(readings: list[LoadReading], start: float, end: float) -> float | None:
    """The joules between ``start`` and ``end`` from energy counter readings,
    oldest first, with each end placed linearly between the readings on either
    side of it. It is None where one end has no reading beyond it."""
    at_start, at_end = _counter_at(readings, start), _counter_at(readings, end)
    if at_start is None or at_end is None:
        return None
    return round(max(at_end - at_start, 0.0) / 1000.0, 3)


def _counter_at(readings: list[LoadReading], when: float) -> float | None:
    for before, after in zip(readings, readings[1:], strict=False):
        if before.read_at <= when <= after.read_at and before.energy_mj is not None and after.energy_mj is not None:
            span = after.read_at - before.read_at
            share = (when - before.read_at) / span if span > 0 else 0.0
            return before.energy_mj + share * (after.energy_mj - before.energy_mj)
    return None


def integrate_power(samples: Samples, start: float, end: float) -> float | None:
    """The joules from power samples in milliwatts, each held until the next. It
    is None unless a sample is at or before ``start``, since the start would
    otherwise be unknown."""
    if not samples or samples[0][0] > start:
        return None
    total = 0.0
    for (t, milliwatts), (t_next, _) in zip(samples, [*samples[1:], (end, 0.0)], strict=True):
        lo, hi = max(t, start), min(t_next, end)
        if hi > lo:
            total += milliwatts * (hi - lo)
    return round(total / 1000.0, 3)
