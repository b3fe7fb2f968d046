"""Fits a step's peak to the batch size, and names the largest batch size that fits the card.

A step's peak grows affinely with the batch in each of its phases: what
does not depend on it (parameters, gradients, optimizer state) plus a share
per sample (activations, inputs, the temporaries that scale with them). The
passes' peak and the optimizer step's peak are two such lines, and the
step's peak is the higher of the two, so a small batch whose peak is in the
optimizer step does not hide how fast the passes grow. Two traces give the
lines; the other batch sizes are read off them, marked as not traced. The
largest batch size that fits is read off them too and then traced, to
confirm it. Where the traced peak is over the budget, the size is read off
the chord to the largest traced size that fits: the peak is the higher of
affine lines, so it is convex in the batch size and never above that chord,
and a size read off it fits (see :func:`confirmed_largest`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

from .step_tracing import ROLES, TracedPeak

# The largest batch size named; the schema's bound on a requested one.
MAX_BATCH_SIZE = 1_048_576
# How many times the largest batch size is traced at most.
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
    """The largest batch size that fits; returns it, its peak and every trace made.

    ``known`` holds the peaks already traced, by batch size. A peak grows
    faster at large batches than at small ones (the activations overtake
    what the small batches' peak was made of), so a line fitted below
    underestimates above. Once a traced size is over the budget and a
    smaller one fits, the next size is read off the chord between them: the
    peak is convex, so it is at most the chord there, and that size fits.
    Where the chord's size is within :data:`CHORD_SETTLES` of the size over
    the budget, it is taken with the chord's bytes as its peak (an upper
    bound) without another trace; otherwise it is traced, and the chord
    between it and the size over the budget, which follows the peak's
    steepest phase, is read again.
    """
    points = dict(known)
    traced: dict[int, TracedPeak] = {}
    size = _next_size(model, budget, points)
    for _ in range(MAX_CONFIRMATIONS + 1):
        if size is None:
            return None, None, traced
        if size in points and points[size] <= budget:
            return size, points[size], traced
        settled = _settled(size, budget, points)
        if settled is not None or len(traced) == MAX_CONFIRMATIONS:
            return (size, settled, traced) if settled is not None else (*_best_known(budget, points), traced)
        traced[size] = trace(size)
        points[size] = traced[size].peak
        size = _next_size(model, budget, points)
    return (*_best_known(budget, points), traced)


# The chord settles a size without a trace when the size over the budget is
# at most this much larger (the true largest is between the two).
CHORD_SETTLES = 0.02


def _bracket(budget: int, points: dict[int, int]) -> tuple[int | None, int | None]:
    """The largest known size that fits, and the smallest known size above it that does not."""
    fitting = [b for b, p in points.items() if p <= budget]
    low = max(fitting) if fitting else None
    over = [b for b, p in points.items() if p > budget and (low is None or b > low)]
    return low, (min(over) if over else None)


def _next_size(model: PeakModel, budget: int, points: dict[int, int]) -> int | None:
    """The next size to settle: off the fitted lines while they point within the bracket, else off the chord, else
    scaled down."""
    low, high = _bracket(budget, points)
    fitted = largest_fitting(model, budget)
    if high is None or (fitted is not None and (low or 0) < fitted < high):
        return fitted
    if low is None:
        return _scaled_down(high, points[high], budget, model.dominant(high).fixed)
    slope = (points[high] - points[low]) / (high - low)
    return min(high - 1, low + math.floor((budget - points[low]) / slope))


def _settled(size: int, budget: int, points: dict[int, int]) -> int | None:
    """The chord's bytes at ``size`` where the sizes around it settle it (it fits, and the size over the budget is
    near); else None."""
    low, high = _bracket(budget, points)
    if low is None or high is None or not low < size < high:
        return None
    bound = math.ceil(points[low] + (points[high] - points[low]) * (size - low) / (high - low))
    return bound if bound <= budget and high - size <= max(1, CHORD_SETTLES * high) else None


def _best_known(budget: int, points: dict[int, int]) -> tuple[int | None, int | None]:
    low, _ = _bracket(budget, points)
    return (low, points[low]) if low is not None else (None, None)


def _scaled_down(size: int, peak: int, budget: int, fixed: float) -> int | None:
    """The next batch size to trace after ``size`` traced at ``peak``, over ``budget``, with nothing below it known
    to fit: the per-sample part scaled down as the trace measured it."""
    room, used = budget - fixed, peak - fixed
    smaller = min(size - 1, math.floor(size * room / used) if room > 0 and used > 0 else 0)
    return smaller if smaller >= 1 else None
