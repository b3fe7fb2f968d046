"""Recognising what a process of the kernel is, from the kernel's registry, its command, environment and parent."""

from __future__ import annotations

import multiprocessing
import types
from pathlib import Path

import pytest
from _fake_proc import FakeProc

from jupyterlab_vram_helper.sampling.processes import roles
from jupyterlab_vram_helper.sampling.processes.roles import OTHER, Role, command_role, recognise

KERNEL_ARGV = ["python", "-m", "ipykernel_launcher", "-f", "k.json"]
RAY_NODE = Role("ray_node", "cmdline", False)


@pytest.mark.parametrize(
    ("name", "argv", "expected"),
    [
        ("raylet", ["/x/ray/core/src/ray/raylet/raylet", "--x"], Role("raylet", "cmdline", False)),
        ("ray::IDLE", ["ray::IDLE"], Role("ray_worker", "cmdline", False)),
        ("gcs_server", ["/x/gcs_server"], Role("ray_node", "cmdline", False)),
        ("python", ["python", "/x/ray/_private/workers/default_worker.py"], Role("ray_worker", "cmdline", False)),
        ("ray::Holder", ["ray::Holder"], Role("ray_worker", "cmdline", False)),
        # What a local ray.init() starts besides its workers (ray 2.60, read from a real run).
        ("ray::DashboardA", ["ray::DashboardAgent"], Role("ray_node", "cmdline", False)),
        ("ray::RuntimeEnv", ["ray::RuntimeEnvAgent"], Role("ray_node", "cmdline", False)),
        ("ray::RuntimeEnv", [], Role("ray_node", "cmdline", False)),
        ("python", ["python", "-u", "/x/ray/autoscaler/_private/monitor.py", "--logs-dir=/t"], RAY_NODE),
        ("python", ["python", "/x/ray/dashboard/dashboard.py", "--host=127.0.0.1"], RAY_NODE),
        ("python", ["python", "-u", "/x/ray/_private/log_monitor.py", "--session-dir=/t"], RAY_NODE),
        ("ray-dashboard-J", ["ray-dashboard-JobHead-0 (python /x/dashboard.py)"], RAY_NODE),
        ("VLLM::EngineCor", ["VLLM::EngineCore"], Role("vllm_engine", "cmdline", False)),
        (
            "python",
            ["python", "-c", "from multiprocessing.resource_tracker import main;main(5)"],
            Role("mp_helper", "cmdline", False),
        ),
        (
            "python",
            [
                "python",
                "-c",
                "from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5)",
                "--multiprocessing-fork",
            ],
            Role("mp_process", "cmdline", False),
        ),
        ("dask", ["python", "/x/dask", "worker", "tcp://a:1"], Role("dask_nanny", "cmdline", True)),
        ("dask", ["python", "/x/dask", "worker", "tcp://a:1", "--no-nanny"], Role("dask_worker", "cmdline", False)),
        ("sleep", ["sleep", "5"], None),
    ],
)
def test_commands_and_titles_name_their_role(name: str, argv: list[str], expected: Role | None) -> None:
    assert command_role(name, argv) == expected


def test_the_kernels_registry_names_pool_workers_and_plain_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    made = [
        multiprocessing.Process(name="ForkPoolWorker-1"),
        multiprocessing.Process(name="Dask Worker process (from Nanny)"),
        multiprocessing.Process(name="EngineCore_0"),
        multiprocessing.Process(),
    ]
    for pid, process in enumerate(made, start=501):
        process._popen = types.SimpleNamespace(pid=pid)  # type: ignore[attr-defined]
    monkeypatch.setattr(multiprocessing.process, "_children", set(made))
    assert roles.registry_roles() == {
        501: Role("mp_pool_worker", "multiprocessing", False),
        502: Role("dask_worker", "multiprocessing", False),
        503: Role("vllm_engine", "multiprocessing", False),
        504: Role("mp_process", "multiprocessing", False),
    }


def test_a_registered_process_that_names_itself_a_dataloader_worker_is_one() -> None:
    registry = {7: Role("mp_process", "multiprocessing", False)}
    assert recognise("/proc", 7, "pt_data_worker", KERNEL_ARGV, KERNEL_ARGV, registry, None) == Role(
        "dataloader_worker", "name", False
    )


def test_a_child_of_a_nanny_or_raylet_is_guessed_from_its_parent(tmp_path: Path) -> None:
    spawned = ["python", "-c", "from multiprocessing.spawn import spawn_main; spawn_main()"]
    root = str(tmp_path)
    nanny = Role("dask_nanny", "cmdline", True)
    assert recognise(root, 7, "python", spawned, KERNEL_ARGV, {}, nanny) == Role("dask_worker", "parent", True)
    assert recognise(root, 7, "python", ["x"], KERNEL_ARGV, {}, Role("raylet", "cmdline", False)) == Role(
        "ray_worker", "parent", True
    )


def test_a_fork_of_the_kernel_outside_the_registry_is_other_and_its_environment_is_not_read(tmp_path: Path) -> None:
    fake = FakeProc(tmp_path / "proc")
    fake.add(7, 1, environ={"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "2"})
    root = str(fake.root)
    assert recognise(root, 7, "python", KERNEL_ARGV, KERNEL_ARGV, {}, None) == OTHER
    # The same environment on a command of its own: torchrun's rank, a guess.
    assert recognise(root, 7, "python", ["python", "train.py"], KERNEL_ARGV, {}, None) == Role(
        "torch_distributed_rank", "environment", True
    )
    assert recognise(root, 8, "python", ["python", "train.py"], KERNEL_ARGV, {}, None) == OTHER  # unreadable
