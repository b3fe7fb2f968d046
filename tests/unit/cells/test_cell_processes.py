"""The kernel's processes in cell records: before, after, the sampled maximum and its spacing."""

from __future__ import annotations

import time
from typing import Any

import pytest
from cell_harness import MB, figures

from jupyterlab_vram_helper.cells.after_cell import AfterCellReadings
from jupyterlab_vram_helper.cells.cell_accounting import CellMemoryRecorder
from jupyterlab_vram_helper.cells.cell_processes import spacing_s
from jupyterlab_vram_helper.config import SamplerConfig
from jupyterlab_vram_helper.sampling.processes.process_tree import TreeTotals


class FakeTree:
    """A process tree reader: ``latest`` for the hooks, ``now`` for the reading after a cell."""

    def __init__(self) -> None:
        self.latest: TreeTotals | None = None
        self.now: TreeTotals | None = None
        self.reads = 0

    def read_now(self) -> TreeTotals | None:
        self.reads += 1
        self.latest = self.now
        return self.now


def recorder(tree: FakeTree) -> CellMemoryRecorder:
    config = SamplerConfig()
    return CellMemoryRecorder(
        config=lambda: config,
        torch_module=lambda: None,
        after_cell=AfterCellReadings(processes=tree, processes_now=tree.read_now),
    )


def run_cell(rec: CellMemoryRecorder, during: list[Any] = ()) -> Any:  # type: ignore[assignment]
    info = type("Info", (), {"cell_id": "c", "store_history": True})()
    rec.pre_run_cell(info)
    for reading in during:
        rec.observe(reading, time.perf_counter())
    rec.post_run_cell(
        type("Result", (), {"info": info, "execution_count": 1, "error_in_exec": None, "error_before_exec": None})()
    )
    return rec.history()[-1]


def tree_figures(host: int, count: int, gpu: int | None = None) -> dict:
    reading = figures(100 * MB)
    totals = {"processes_host_bytes": host, "gpus": [] if gpu is None else [{"index": 0, "processes_used_bytes": gpu}]}
    reading["processes"] = {"processes": [{}] * count, "totals": totals if count else None}
    return reading


def test_a_kernel_without_processes_keeps_nothing_and_reads_nothing() -> None:
    tree = FakeTree()
    record = run_cell(recorder(tree), [tree_figures(0, 0)])
    assert "processes" not in record
    assert tree.reads == 0


def test_the_processes_delta_and_sampled_maximum_are_in_the_record() -> None:
    tree = FakeTree()
    tree.latest = TreeTotals(10 * MB, 1, {0: 0})
    tree.now = TreeTotals(30 * MB, 2, {0: 5 * MB})
    record = run_cell(recorder(tree), [tree_figures(80 * MB, 3, gpu=9 * MB), tree_figures(40 * MB, 2, gpu=5 * MB)])
    assert record["processes"] == {
        "host_before_bytes": 10 * MB,
        "host_after_bytes": 30 * MB,
        "host_sampled_max_bytes": 80 * MB,
        "processes_before": 1,
        "processes_after": 2,
        "sample_spacing_s": 1.0,
        "samples": 4,
        "gpus": [{"index": 0, "before_bytes": 0, "after_bytes": 5 * MB, "sampled_max_bytes": 9 * MB}],
    }
    # The kernel's own figures are as before, next to them.
    assert record["host"]["peak_exact"] in (True, False)


def test_processes_that_came_during_a_cell_count_from_zero() -> None:
    tree = FakeTree()
    tree.now = TreeTotals(50 * MB, 4, {})
    record = run_cell(recorder(tree), [tree_figures(20 * MB, 2)])
    section = record["processes"]
    assert (section["host_before_bytes"], section["host_after_bytes"], section["processes_before"]) == (0, 50 * MB, 0)


def test_the_readings_spacing_follows_the_sampler_interval() -> None:
    assert [spacing_s(s) for s in (0.1, 0.5, 1.0, 2.0)] == pytest.approx([0.9, 1.0, 1.0, 2.0])
