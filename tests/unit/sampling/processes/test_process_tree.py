"""The sample's process tree from a fake /proc: entries, memory measures, GPU lists, totals and change."""

from __future__ import annotations

from pathlib import Path

import pytest
from _fake_proc import KB, FakeProc

from jupyterlab_vram_helper.sampling.processes.process_tree import GpuList, ProcessTreeReader, tree_differs
from jupyterlab_vram_helper.sampling.processes.rollup_budget import RollupBudget

KERNEL = 100
PAGE = 4096


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def proc(tmp_path: Path) -> FakeProc:
    fake = FakeProc(tmp_path / "proc")
    fake.add(KERNEL, 1, argv=("python", "-m", "ipykernel_launcher"))
    return fake


def reader(proc: FakeProc, clock: Clock, **kw) -> ProcessTreeReader:
    kw.setdefault("budget", RollupBudget(clock, share=1.0, burst_s=10.0))
    return ProcessTreeReader(KERNEL, str(proc.root), clock=clock, wall_clock=clock, **kw)


def test_a_kernel_without_processes_has_an_empty_tree_and_no_totals(proc: FakeProc) -> None:
    tree_reader = reader(proc, Clock())
    tree = tree_reader.read(5000, [])
    assert tree == {"method": "task_children", "read_at": 1000.0, "processes": [], "totals": None}
    assert tree_reader.latest is None
    assert tree_reader.read(6000, []) is tree  # not due: the same object, nothing read


def test_each_process_has_uss_pss_rss_and_its_gpu_memory(proc: FakeProc) -> None:
    proc.add(
        101, KERNEL, start_time=7, argv=("sleep", "60"), name="sleep", rss_pages=1000, rollup_kb=(4000, 3000, 2000, 8)
    )
    proc.add(102, KERNEL, start_time=8, argv=("cat",), name="cat", rss_pages=50, rollup_kb=None)
    proc.set_children(KERNEL, [101, 102])
    gpus = [GpuList(0, {101: 5 << 20, KERNEL: 1 << 20}, 1 << 20), GpuList(1, None, None)]
    tree = reader(proc, Clock()).read(10_000_000, gpus)
    assert tree is not None
    first, second = tree["processes"]
    assert (first["pid"], first["start_time"], first["ppid"], first["depth"], first["reparented"]) == (
        101,
        7,
        KERNEL,
        1,
        False,
    )
    assert (first["name"], first["command"], first["role"], first["role_basis"]) == ("sleep", "sleep 60", "other", None)
    assert first["host"] == {
        "measure": "uss",
        "host_bytes": 2000 * KB,
        "uss_bytes": 2000 * KB,
        "pss_bytes": 3000 * KB,
        "rss_bytes": 1000 * PAGE,
        "swap_bytes": 8 * KB,
        "rollup_at": 1000.0,
    }
    assert first["gpus"] == [{"index": 0, "used_bytes": 5 << 20}]
    # No smaps_rollup: its RSS, and said so.
    assert second["host"]["measure"] == "rss" and second["host"]["host_bytes"] == 50 * PAGE
    assert second["host"]["uss_bytes"] is None and second["gpus"] == []
    assert tree["totals"] == {
        "host_bytes": 10_000_000 + 2000 * KB + 50 * PAGE,
        "processes_host_bytes": 2000 * KB + 50 * PAGE,
        "processes_pss_bytes": None,
        "host_measure": "uss_and_rss",
        "gpus": [
            {"index": 0, "used_bytes": 6 << 20, "processes_used_bytes": 5 << 20},
            {"index": 1, "used_bytes": None, "processes_used_bytes": None},
        ],
    }


def test_the_cell_hooks_cached_totals_follow_each_reading(proc: FakeProc) -> None:
    clock = Clock()
    tree_reader = reader(proc, clock)
    tree_reader.read(1, [])
    assert tree_reader.latest is None
    proc.add(101, KERNEL, rollup_kb=(400, 300, 200, 0))
    proc.set_children(KERNEL, [101])
    totals = tree_reader.read_totals([GpuList(0, {101: 7}, 0)])
    assert totals is not None and (totals.host_bytes, totals.processes, totals.gpus) == (200 * KB, 1, {0: 7})
    assert tree_reader.latest is totals


def test_rollups_wait_for_the_budget_and_a_fresh_reading_reads_them_all(proc: FakeProc) -> None:
    clock = Clock()
    for pid in (101, 102):
        proc.add(pid, KERNEL, start_time=pid)
    proc.set_children(KERNEL, [101, 102])
    tree_reader = reader(proc, clock, budget=RollupBudget(clock, share=0.0, burst_s=1e-12))
    tree = tree_reader.read(1, [])
    assert tree is not None
    # The budget ran out after the first read: the second process shows its RSS until its turn.
    assert [p["host"]["measure"] for p in tree["processes"]] == ["uss", "rss"]
    tree = tree_reader.read(1, [], fresh=True)
    assert tree is not None and [p["host"]["measure"] for p in tree["processes"]] == ["uss", "uss"]


def test_a_process_whose_rss_grew_is_read_again_by_the_pacing_clock_not_the_wall_clock(proc: FakeProc) -> None:
    # The sample's rollup_at is wall-clock time, far from the monotonic clock that paces the reads:
    # comparing the two made a process read once never due again (its USS stayed at its first read).
    clock, wall = Clock(), Clock()
    wall.now = 1_700_000_000.0
    proc.add(101, KERNEL, start_time=101, rss_pages=100, rollup_kb=(400, 300, 200, 0))
    proc.set_children(KERNEL, [101])
    tree_reader = ProcessTreeReader(
        KERNEL, str(proc.root), clock=clock, wall_clock=wall, budget=RollupBudget(clock, share=1.0, burst_s=10.0)
    )
    tree = tree_reader.read(1, [])
    assert tree is not None and tree["processes"][0]["host"]["uss_bytes"] == 200 * KB
    proc.add(101, KERNEL, start_time=101, rss_pages=100 + 300 * 256, rollup_kb=(300_000, 300_000, 300_000, 0))
    clock.now += 1.0
    wall.now += 1.0
    tree = tree_reader.read(1, [])
    assert tree is not None
    host = tree["processes"][0]["host"]
    assert (host["uss_bytes"], host["rollup_at"]) == (300_000 * KB, wall.now)


def test_find_checks_pid_and_start_time(proc: FakeProc) -> None:
    proc.add(101, KERNEL, start_time=7)
    proc.set_children(KERNEL, [101])
    tree_reader = reader(proc, Clock())
    assert tree_reader.find(101, 7)[0]
    assert not tree_reader.find(101, 8)[0]
    assert not tree_reader.find(KERNEL, 1000)[0]


def test_every_process_a_local_ray_init_starts_has_a_ray_role(proc: FakeProc) -> None:
    # The tree of a real ray.init(num_cpus=1, include_dashboard=False) in a kernel (ray 2.60),
    # with an actor: what the kernel starts, then what its raylet starts.
    site = "/v/lib/python3.11/site-packages/ray"
    started = {
        101: ("gcs_server", (f"{site}/core/src/ray/gcs/gcs_server", "--log_dir=/t")),
        102: ("python", ("/v/bin/python", "-u", f"{site}/autoscaler/_private/monitor.py", "--logs-dir=/t")),
        103: ("python", ("/v/bin/python", f"{site}/dashboard/dashboard.py", "--host=127.0.0.1")),
        104: ("python", ("/v/bin/python", "-u", f"{site}/_private/log_monitor.py", "--session-dir=/t")),
        105: ("raylet", (f"{site}/core/src/ray/raylet/raylet", "--raylet_socket_name=/t/raylet")),
    }
    by_raylet = {
        106: ("ray::DashboardA", ("ray::DashboardAgent",)),
        107: ("ray::RuntimeEnv", ("ray::RuntimeEnvAgent",)),
        108: ("ray::Holder", ("ray::Holder",)),
    }
    for pid, (name, argv) in started.items():
        proc.add(pid, KERNEL, start_time=pid, name=name, argv=argv)
    for pid, (name, argv) in by_raylet.items():
        proc.add(pid, 105, start_time=pid, name=name, argv=argv)
    proc.set_children(KERNEL, list(started))
    proc.set_children(105, list(by_raylet))
    tree = reader(proc, Clock()).read(10_000_000, [])
    assert tree is not None
    assert {p["pid"]: p["role"] for p in tree["processes"]} == {
        **dict.fromkeys((101, 102, 103, 104), "ray_node"),
        105: "raylet",
        106: "ray_node",
        107: "ray_node",
        108: "ray_worker",
    }


def test_a_fork_read_before_its_exec_is_recognised_once_it_runs_its_own_python_script(proc: FakeProc) -> None:
    # Ray starts its dashboard as a Python process: between the fork and the exec it has the
    # kernel's command line, and after the exec it keeps the kernel's name ("python3" here).
    clock = Clock()
    proc.add(101, KERNEL, start_time=101, argv=("python", "-m", "ipykernel_launcher"))
    proc.set_children(KERNEL, [101])
    tree_reader = reader(proc, clock, min_interval_s=0.0)
    tree = tree_reader.read(10_000_000, [], fresh=True)
    assert tree is not None and tree["processes"][0]["role"] == "other"

    dashboard = ("/v/bin/python", "/v/lib/python3.11/site-packages/ray/dashboard/dashboard.py", "--port=8265")
    proc.add(101, KERNEL, start_time=101, argv=dashboard)
    clock.now += 1.0
    tree = tree_reader.read(10_000_001, [], fresh=True)
    assert tree is not None
    assert [(p["role"], p["command"].split()[1]) for p in tree["processes"]] == [
        ("ray_node", dashboard[1]),
    ]


def test_not_linux_means_no_tree(tmp_path: Path) -> None:
    assert ProcessTreeReader(KERNEL, str(tmp_path / "none")).read(1, []) is None


def _tree(*entries: tuple[int, int]) -> dict:
    return {
        "processes": [
            {"pid": pid, "start_time": 1, "role": "other", "host": {"host_bytes": host, "measure": "uss"}, "gpus": []}
            for pid, host in entries
        ]
    }


def test_a_sample_is_due_when_a_process_comes_goes_or_moves_beyond_the_threshold() -> None:
    before = _tree((1, 1000))
    assert not tree_differs(before, _tree((1, 1500)), 1000)
    assert tree_differs(before, _tree((1, 2500)), 1000)
    assert tree_differs(before, _tree((1, 1000), (2, 5)), 1000)
    assert tree_differs(before, None, 1000) and not tree_differs(None, None, 1000)
