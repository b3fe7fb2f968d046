"""Fits a step's peak to the batch size, and names the largest batch size that fits the card.

A step's peak grows affinely with the batch in each of its phases: what
does not depend on it (parameters, gradients, optimizer state) plus a share
per sample (activations, inputs, the temporaries that scale with them). The
passes' peak and the optimizer step's peak are two such lines, and the
step's peak is the higher of the two, so a small batch whose peak is in the
optimizer step does not hide how fast the passes grow. Two traces give the
lines; the other batch sizes are read off them, marked as not traced. The
largest batch size that fits is read off them too and then traced, to
confirm it, and stepped down while the traced peak is over the budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

from .step_tracing import ROLES, TracedPeak

# The largest batch size named; the schema's bound on a requested one.
MAX_BATCH_SIZE = 1_048_576
# How many times the largest batch size is traced and stepped down at most.
MAX_CONFIRMATIONS = 3


class Line(NamedTuple):
    """An affine fit: ``fixed + per_sample * batch_size`` bytes."""

    fixed: float
    per_sample: float

    def at(self, size: int) -> int:
        """The fitted bytes at ``size``, never below zero."""
        return max(0, round(self.fixed + self.per_sample * size))


def fit(sizes: tuple[int, int], peaks: tuple[int, int]) -> Line:
    """The line through two (batch size, bytes) points; flat when the sizes are equal."""
    (low, high), (p_low, p_high) = sizes, peaks
    if high == low:
        return Line(float(p_low), 0.0)
    per_sample = max(0.0, (p_high - p_low) / (high - low))
    return Line(p_low - per_sample * low, per_sample)


class PeakModel(NamedTuple):
    """A step's peak as the higher of two lines: its passes' and its optimizer step's."""

    passes: Line
    step: Line

    def at(self, size: int) -> int:
        """The fitted peak at ``size``."""
        return max(self.passes.at(size), self.step.at(size))

    def dominant(self, size: int) -> Line:
        """The line that makes the peak at ``size``."""
        return self.passes if self.passes.at(size) >= self.step.at(size) else self.step


def fit_peaks(sizes: tuple[int, int], low: TracedPeak, high: TracedPeak) -> PeakModel:
    """The two lines through the traces at the two sizes."""
    return PeakModel(fit(sizes, (low.passes, high.passes)), fit(sizes, (low.step, high.step)))


def fit_breakdown(sizes: tuple[int, int], low: dict[str, int], high: dict[str, int]) -> dict[str, Line]:
    """One line per role of the breakdown."""
    return {role: fit(sizes, (low[role], high[role])) for role in ROLES}


def two_sizes(wanted: list[int]) -> tuple[int, int]:
    """The two batch sizes to trace: the smallest and the largest wanted, or double when only one is."""
    low, high = min(wanted), max(wanted)
    return (low, high) if high > low else (low, low * 2)


def largest_fitting(model: PeakModel, budget: int) -> int | None:
    """The largest batch size whose fitted peak is within ``budget``; None when not even 1 fits."""
    if model.at(1) > budget:
        return None
    bounds = [
        math.floor((budget - line.fixed) / line.per_sample)
        for line in (model.passes, model.step)
        if line.per_sample > 0
    ]
    return max(1, min([MAX_BATCH_SIZE, *bounds]))


def confirmed_largest(
    model: PeakModel, budget: int, trace: Callable[[int], TracedPeak], known: dict[int, int]
) -> tuple[int | None, int | None, dict[int, TracedPeak]]:
    """The largest batch size that fits, traced there; returns it, its traced peak and every trace made.

    ``known`` holds the peaks already traced, by batch size. A peak grows
    faster at large batches than at small ones (the activations overtake
    what the small batches' peak was made of), so a line fitted below
    underestimates above. When the traced peak is over the budget, the next
    try is read off the line between the largest known size that fits and
    the one just traced, which runs above the true peak between them, and
    so errs on the side of fitting.
    """
    size = largest_fitting(model, budget)
    points = dict(known)
    traced: dict[int, TracedPeak] = {}
    for _ in range(MAX_CONFIRMATIONS):
        if size is None:
            return None, None, traced
        traced[size] = trace(size)
        peak = points[size] = traced[size].peak
        if peak <= budget:
            return size, peak, traced
        size = _stepped_down(size, peak, budget, points, model.dominant(size).fixed)
    return None, None, traced


def _stepped_down(size: int, peak: int, budget: int, points: dict[int, int], fixed: float) -> int | None:
    """The next batch size to try after ``size`` traced at ``peak``, over ``budget``."""
    below = [b for b, p in points.items() if b < size and p <= budget]
    if below:
        low = max(below)
        slope = (peak - points[low]) / (size - low)
        smaller = low + math.floor((budget - points[low]) / slope) if slope > 0 else low
    else:
        # Nothing traced below fits: scale the per-sample part down as the trace measured it.
        room, used = budget - fixed, peak - fixed
        smaller = math.floor(size * room / used) if room > 0 and used > 0 else 0
    smaller = min(size - 1, smaller)
    return smaller if smaller >= 1 else None
