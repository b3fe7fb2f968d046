"""The execution count a cell runs under, as pre_run_cell sees it, in both IPython
orderings: counted before pre_run_cell (IPython since late 2025) or after the cell
ran (IPython 8 and the 9.x releases before). The e2e tests run a real kernel with
the interpreter in VRAM_TEST_KERNEL_PYTHON (an IPython 8 environment, say)."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import pytest
from cell_harness import Harness
from fakes import CountsAfterShell, CountsFirstShell

from jupyterlab_vram_helper.allocations.allocation_sites import AllocationSites
from jupyterlab_vram_helper.cells.execution_counts import CellNumbering


class UnknownShell:
    """No run_cell_async to read: the first cell's number is a guess."""

    def __init__(self, counts_first: bool) -> None:
        self.execution_count = 1
        self.counts_first = counts_first


Hook = Callable[[Any], None]


def run_cell(
    shell: Any,
    cell_id: str,
    pre: list[Hook],
    post: list[Hook],
    during: Callable[[], None] = lambda: None,
    store_history: bool = True,
) -> int:
    """Fire the hooks in the order of ``shell``'s IPython; returns the cell's number."""
    counts_first = getattr(shell, "counts_first", isinstance(shell, CountsFirstShell))
    info = types.SimpleNamespace(cell_id=cell_id, store_history=store_history, raw_cell="x = 1")
    count = shell.execution_count
    result = types.SimpleNamespace(
        info=info,
        execution_count=count if store_history else None,
        error_in_exec=None,
        error_before_exec=None,
        result=None,
    )
    if store_history and counts_first:
        shell.execution_count += 1
    for hook in pre:
        hook(info)
    during()
    if store_history and not counts_first:
        shell.execution_count += 1
    for hook in post:
        hook(result)
    return count


SHELLS = [CountsFirstShell, CountsAfterShell, lambda: UnknownShell(True), lambda: UnknownShell(False)]


@pytest.mark.parametrize("make_shell", SHELLS, ids=["counts-first", "counts-after", "unknown-first", "unknown-after"])
def test_every_cell_is_noted_under_its_own_number(make_shell: Callable[[], Any]) -> None:
    shell = make_shell()
    shell.events = None
    sites = AllocationSites(shell=lambda: shell, broadcast=lambda m: None)
    sites._hooked = shell
    seen: list[str | None] = []
    counts = []
    for cell_id in ("a", "b", "c"):
        number = shell.execution_count  # the number this cell runs under
        # looked up while the cell runs (an out-of-memory diagnosis at its end lists its lines)
        during = lambda number=number: seen.append(sites.cells.cell_id_of(number))  # noqa: E731
        counts.append(run_cell(shell, cell_id, [sites.pre_run_cell], [sites.post_run_cell], during))
    # after the cells: each number names its own cell, whatever the ordering
    assert [sites.cells.cell_id_of(c) for c in counts] == ["a", "b", "c"]
    if isinstance(shell, UnknownShell):
        assert seen[1:] == ["b", "c"]  # learned from the first cell's end
    else:
        assert seen == ["a", "b", "c"]  # known from the shell's code


@pytest.mark.parametrize("make_shell", [CountsFirstShell, CountsAfterShell], ids=["counts-first", "counts-after"])
def test_a_cancelled_cell_is_recorded_under_its_own_number(make_shell: Callable[[int], Any]) -> None:
    h = Harness()
    h.recorder.shell = shell = make_shell(7)
    recorder = h.recorder
    run_cell(shell, "a", [recorder.pre_run_cell], [recorder.post_run_cell])
    # ipykernel hands post_run_cell None when an async cell's coroutine is cancelled
    count = run_cell(shell, "b", [recorder.pre_run_cell], [lambda result: recorder.post_run_cell(None)])
    records = recorder.history()
    assert [r["execution_count"] for r in records] == [7, count] == [7, 8]


def test_a_cell_not_stored_in_history_keeps_the_count_as_it_is() -> None:
    numbering = CellNumbering()
    for shell in (CountsFirstShell(5), CountsAfterShell(5)):
        assert numbering.at_start(shell, types.SimpleNamespace(store_history=False)) == 5


def test_odd_shells_and_results_never_raise() -> None:
    numbering = CellNumbering()
    assert numbering.at_start(None, None) is None
    assert numbering.at_start(types.SimpleNamespace(execution_count="3"), None) is None
    numbering.at_end(None)
    numbering.at_end(types.SimpleNamespace(info=None, execution_count=True))
