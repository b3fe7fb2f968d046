"""Pacing smaps_rollup reads: new processes first, then moved, then stale, within a CPU budget."""

from __future__ import annotations

from jupyterlab_vram_helper.sampling.processes.rollup_budget import RSS_MOVE_BYTES, RollupBudget, read_order


def test_new_processes_come_first_then_moved_then_the_stalest() -> None:
    now = 100.0
    candidates = [
        (1, 90.0, 10, 10),  # stale
        (2, None, 10, None),  # never read
        (3, 99.5, RSS_MOVE_BYTES * 2, 0),  # moved
        (4, 99.9, 10, 10),  # read just now: not due
        (5, 80.0, 10, 10),  # staler
    ]
    assert read_order(candidates, now) == [2, 3, 5, 1]


def test_the_budget_refills_at_its_share_up_to_its_burst() -> None:
    t = [0.0]
    budget = RollupBudget(lambda: t[0], share=0.001, burst_s=0.01)
    assert budget.available()
    budget.spend(0.05)  # one large read: in debt
    assert not budget.available()
    t[0] = 30.0  # 30 ms refilled, 40 ms owed
    assert not budget.available()
    t[0] = 41.0
    assert budget.available()
    t[0] = 10_000.0
    budget.available()
    budget.spend(0.0105)  # the burst caps what an idle time saves
    assert not budget.available()
