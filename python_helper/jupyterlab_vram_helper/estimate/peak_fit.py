"""Fits a step's peak to the batch size, and names the largest batch size that fits the card.

A step's peak grows affinely with the batch: what does not depend on it
(parameters, gradients, optimizer state) plus a share per sample
(activations, inputs, the temporaries that scale with them). Two traces give
the line; the other batch sizes are read off it, marked as not traced. The
largest batch size that fits is read off the line too and then traced, to
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


def fit_breakdown(sizes: tuple[int, int], low: dict[str, int], high: dict[str, int]) -> dict[str, Line]:
    """One line per role of the breakdown."""
    return {role: fit(sizes, (low[role], high[role])) for role in ROLES}


def two_sizes(wanted: list[int]) -> tuple[int, int]:
    """The two batch sizes to trace: the smallest and the largest wanted, or double when only one is."""
    low, high = min(wanted), max(wanted)
    return (low, high) if high > low else (low, low * 2)


def largest_fitting(line: Line, budget: int) -> int | None:
    """The largest batch size whose fitted peak is within ``budget``; None when not even 1 fits."""
    if line.at(1) > budget:
        return None
    if line.per_sample <= 0:
        return MAX_BATCH_SIZE
    return max(1, min(MAX_BATCH_SIZE, math.floor((budget - line.fixed) / line.per_sample)))


def confirmed_largest(
    line: Line, budget: int, trace: Callable[[int], TracedPeak]
) -> tuple[int | None, int | None, dict[int, TracedPeak]]:
    """The largest batch size that fits, traced there; returns it, its traced peak and every trace made.

    When the traced peak is over the budget, the batch size is scaled down by
    the share it is over and traced again, a few times at most.
    """
    size = largest_fitting(line, budget)
    traced: dict[int, TracedPeak] = {}
    for _ in range(MAX_CONFIRMATIONS):
        if size is None:
            return None, None, traced
        traced[size] = trace(size)
        peak = traced[size].peak
        if peak <= budget:
            return size, peak, traced
        over = (peak - budget) / max(1.0, line.per_sample)
        size = size - max(1, math.ceil(over)) if size > 1 else None
    return None, None, traced
