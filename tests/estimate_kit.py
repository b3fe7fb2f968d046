"""The arithmetic of the GPU kit's estimate check, kept free of torch so that it is proven on the CPU.

The GPU side (tests/cuda/estimate_on_gpu.py) measures; this module searches
for the true largest batch size, turns predictions and measurements into the
report's rows, and says which rows miss the tolerance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

# Above this the search stops growing: four times the largest batch size an estimate may name.
LARGEST_TRIED = 1 << 22


class Bracket(NamedTuple):
    """Where the search left the true largest batch size: ``fits`` ran, ``fails`` did not (None: never failed)."""

    fits: int
    fails: int | None
    tries: int

    @property
    def largest_at_most(self) -> int:
        """The most the true largest can be: one below the smallest size that failed."""
        return self.fits if self.fails is None else self.fails - 1


def largest_that_fits(
    fits: Callable[[int], bool], start: int, resolution: float = 0.01, ceiling: int = LARGEST_TRIED
) -> Bracket:
    """Bracket the largest batch size for which ``fits`` is true, starting from a guess.

    Doubles from ``start`` until a size fails (or halves until one fits),
    then bisects until the bracket is within ``resolution`` of its lower end,
    so that a search over a card costs tens of tries, not hundreds. Assumes
    that what fits at one size fits at every smaller one.
    """
    low, high, tries = 0, None, 0
    size = max(1, min(start, ceiling))
    # First a size that fits below one that fails: doubling up from a start that
    # fits, or halving down from one that fails.
    while high is None or low == 0:
        tries += 1
        if fits(size):
            low = size
            if high is None and size >= ceiling:
                return Bracket(low, None, tries)
            size = min(ceiling, size * 2)
        else:
            high = size
            if size == 1:
                return Bracket(0, 1, tries)
            size = max(1, size // 2)
    assert high is not None  # the loop above ends only with both ends found
    while high - low > max(1, resolution * low):
        middle = (low + high) // 2
        tries += 1
        if fits(middle):
            low = middle
        else:
            high = middle
    return Bracket(low, high, tries)


def error_percent(predicted: int, measured: int) -> float:
    """How far the prediction is from the measurement, in percent of the measurement (positive: over)."""
    return 100.0 * (predicted - measured) / measured


def accuracy_row(model: str, batch_size: int, predicted: int, measured: int) -> dict[str, Any]:
    """One row of the report's accuracy table: the batch size's predicted and measured peak and the error."""
    return {
        "model": model,
        "batch_size": batch_size,
        "predicted_bytes": predicted,
        "measured_bytes": measured,
        "error_percent": round(error_percent(predicted, measured), 2),
    }


def share_within(rows: list[dict[str, Any]], tolerance_percent: float) -> float:
    """The share of rows whose error is within plus or minus ``tolerance_percent`` (0 for no rows)."""
    if not rows:
        return 0.0
    return sum(abs(r["error_percent"]) <= tolerance_percent for r in rows) / len(rows)


def recommendation_share(recommended: int, bracket: Bracket) -> float:
    """The recommended batch size as a share of the most the true largest can be (the harshest reading)."""
    if bracket.largest_at_most < 1:
        raise ValueError("no batch size fits, so no recommendation can be judged")
    return recommended / bracket.largest_at_most
