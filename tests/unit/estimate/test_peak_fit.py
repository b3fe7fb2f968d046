"""The largest batch size that fits: read off the fitted lines, traced once to confirm, and settled by the chord
between traced sizes where the peak is over the budget (a peak made of affine phases is convex)."""

from __future__ import annotations

from typing import Any

from jupyterlab_vram_helper.estimate import peak_fit
from jupyterlab_vram_helper.estimate.peak_fit import Line, PeakModel, confirmed_largest


class Traced:
    """A stand-in for a traced step: only its peak is read."""

    def __init__(self, peak: int) -> None:
        self.peak = peak


def convex_peak(size: int) -> int:
    # Two phases: a fixed 1000 with 10 per sample, and the activations,
    # which overtake it at large sizes with 30 per sample.
    return max(1000 + 10 * size, 30 * size - 2000)


def tracer(calls: list[int]) -> Any:
    def trace(size: int) -> Any:
        calls.append(size)
        return Traced(convex_peak(size))

    return trace


# Fitted from traces at 10 and 20, where the first phase makes the peak:
# the line underestimates the large sizes.
BELOW = PeakModel(Line(1000.0, 10.0), Line(0.0, 0.0))


def test_a_size_the_line_gets_right_is_traced_once() -> None:
    calls: list[int] = []
    size, peak, traced = confirmed_largest(BELOW, 2000, tracer(calls), {10: 1100, 20: 1200})
    assert (size, peak, calls) == (100, 2000, [100]) and set(traced) == {100}


def test_a_size_just_over_the_budget_is_settled_by_the_chord_without_another_trace() -> None:
    calls: list[int] = []

    def trace(size: int) -> Any:
        calls.append(size)
        return Traced(round(1000 + 10.2 * size))

    size, peak, _ = confirmed_largest(BELOW, 2000, trace, {20: 1204})
    # The line says 100, whose trace is 20 bytes over; the chord from 20
    # gives 98, under the chord and so under the budget, with no trace.
    assert (size, peak, calls) == (98, 2000, [100])


def test_far_over_the_budget_the_chords_close_in_within_three_traces() -> None:
    calls: list[int] = []
    budget = 10_000
    size, peak, _ = confirmed_largest(BELOW, budget, tracer(calls), {10: 1100, 20: 1200})
    # The line says 900; the activations' phase makes the true largest 400.
    assert calls[0] == 900 and len(calls) <= peak_fit.MAX_CONFIRMATIONS
    assert size is not None and peak is not None and convex_peak(size) <= peak <= budget
    assert size >= 0.95 * 400


def test_known_sizes_around_it_settle_it_with_no_trace() -> None:
    calls: list[int] = []
    known = {20: 1200, 91: 1910}
    size, peak, _ = confirmed_largest(BELOW, 1900, tracer(calls), known)
    assert (size, peak, calls) == (90, 1900, [])
    # Where the size over the budget is far, the lines' size is traced.
    assert confirmed_largest(BELOW, 1900, tracer(calls), {20: 1200, 400: 10000})[:2] == (90, 1900)
    assert calls == [90]


def test_when_not_even_one_fits_there_is_no_size() -> None:
    calls: list[int] = []
    assert confirmed_largest(BELOW, 500, tracer(calls), {})[:2] == (None, None)
    assert calls == []


def test_with_nothing_known_below_the_size_is_scaled_down_and_traced_again() -> None:
    calls: list[int] = []
    size, peak, _ = confirmed_largest(BELOW, 3000, tracer(calls), {})
    assert calls[0] == 200 and len(calls) <= peak_fit.MAX_CONFIRMATIONS
    assert size is not None and peak is not None and convex_peak(size) == peak <= 3000
