"""The GPU kit's estimate check, proven on the CPU: the search for the true largest
batch size on a stand-in "fits", the accuracy rows and shares, and the reference
models the kit builds (tests/estimate_kit.py, tests/estimate_reference_models.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from estimate_kit import Bracket, accuracy_row, error_percent, largest_that_fits, recommendation_share, share_within


def counting(limit: int) -> tuple[list[int], Callable[[int], bool]]:
    """A stand-in for real steps: sizes up to ``limit`` fit; every size asked is noted."""
    asked: list[int] = []

    def fits(size: int) -> bool:
        asked.append(size)
        return size <= limit

    return asked, fits


@pytest.mark.parametrize("start", [1, 100, 777, 778, 5000, 1 << 19])
def test_the_search_finds_the_exact_largest_from_any_start(start: int) -> None:
    asked, fits = counting(777)
    found = largest_that_fits(fits, start, resolution=0)
    assert (found.fits, found.fails) == (777, 778)
    assert found.tries == len(asked) <= 25
    assert min(asked) >= 1


def test_a_coarser_search_brackets_the_largest_within_its_resolution_in_fewer_tries() -> None:
    exact_asked, exact = counting(100_003)
    coarse_asked, coarse = counting(100_003)
    largest_that_fits(exact, 4096, resolution=0)
    found = largest_that_fits(coarse, 4096, resolution=0.01)
    assert found.fits <= 100_003 <= found.largest_at_most
    assert found.largest_at_most - found.fits <= 0.01 * found.fits
    assert len(coarse_asked) < len(exact_asked)


def test_the_search_stops_at_its_ceiling_and_says_nothing_failed() -> None:
    asked, fits = counting(10**9)
    found = largest_that_fits(fits, 3, ceiling=1000)
    assert found == Bracket(1000, None, len(asked)) and max(asked) == 1000
    assert found.largest_at_most == 1000


def test_where_nothing_fits_no_recommendation_can_be_judged() -> None:
    _, fits = counting(0)
    found = largest_that_fits(fits, 64)
    assert (found.fits, found.fails) == (0, 1)
    with pytest.raises(ValueError, match="no batch size fits"):
        recommendation_share(1, found)


def test_the_recommendation_is_judged_against_the_most_the_true_largest_can_be() -> None:
    # The true largest is 99 or 100: the share is taken of 100, so a bracket never flatters it.
    assert recommendation_share(85, Bracket(99, 101, 9)) == 0.85


def test_errors_are_signed_shares_of_the_measurement_and_the_tolerance_is_inclusive() -> None:
    assert error_percent(110, 100) == 10.0 and error_percent(90, 100) == -10.0
    rows = [
        accuracy_row("mlp", 8, 110, 100),
        accuracy_row("mlp", 16, 90, 100),
        accuracy_row("mlp", 32, 1000, 887),
        accuracy_row("mlp", 64, 1, 3),
    ]
    assert [r["error_percent"] for r in rows] == [10.0, -10.0, 12.74, -66.67]
    assert share_within(rows, 10.0) == 0.5
    assert share_within([], 10.0) == 0.0
