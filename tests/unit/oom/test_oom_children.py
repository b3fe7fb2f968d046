"""The kernel's own processes in the OOM diagnosis: a child on the failing GPU or holding host RAM,
and DataLoader workers killed."""

from __future__ import annotations

from typing import Any

from jupyterlab_vram_helper.oom.oom_children import dataloader_workers, gpu_children, host_children
from jupyterlab_vram_helper.oom.oom_diagnosis import diagnose
from jupyterlab_vram_helper.oom.oom_message import parse_oom_message
from jupyterlab_vram_helper.oom.oom_watch import OomWatch
from jupyterlab_vram_helper.sampling.processes.process_tree import Seen

MIB = 1 << 20
GIB = 1 << 30

# torch 2.x's message when the kernel's spawned child holds most of an 80 GiB card.
TORCH_OOM = (
    "CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which "
    "3.50 GiB is free. Process 4312 has 70.00 GiB memory in use. Including non-PyTorch memory, this process "
    "has 5.60 GiB memory in use. Of the allocated memory 5.00 GiB is allocated by PyTorch, and 100.00 MiB "
    "is reserved by PyTorch but unallocated."
)
# As torch's SIGCHLD handler words it (torch/csrc/DataLoader.cpp).
WORKER_KILLED = "DataLoader worker (pid 5001) is killed by signal: Killed. "


def seen(pid: int, role: str, uss: int | None = None, first: int | None = None, gpus=(), ended=None) -> Seen:
    return Seen(pid, pid * 7, role, uss, uss, first, 1700000000.0 if uss is not None else None, tuple(gpus), ended)


def state(children: dict[int, Any]) -> dict[str, Any]:
    return {
        "device_index": 0,
        "total_bytes": None,
        "free_bytes": None,
        "allocated_bytes": None,
        "reserved_bytes": None,
        "num_alloc_retries": None,
        "process_in_use_bytes": None,
        "other_processes": None,
        "stale_bytes": 0,
        "stale_holders": [],
        "in_use_holders": [],
        "children": children,
    }


def test_a_child_holding_the_card_is_named_as_the_kernels_with_stop_and_release() -> None:
    children = gpu_children(
        [seen(4312, "mp_process", gpus=[(0, 70 * GIB)]), seen(4400, "other", gpus=[(1, GIB)])],
        0,
        {4312: {"kind": "mp_pool", "name": "pool"}},
    )
    assert list(children) == [4312]
    diagnosis = diagnose(parse_oom_message("OutOfMemoryError", TORCH_OOM), state(children))  # type: ignore[arg-type]
    (child,) = diagnosis["other_processes"]
    assert child == {
        "pid": 4312,
        "used_bytes": 70 * GIB,
        "child_of_kernel": True,
        "start_time": 4312 * 7,
        "role": "mp_process",
        "remedies": ["release_engine", "stop_process"],
        "release": {"kind": "mp_pool", "name": "pool"},
    }
    assert diagnosis["causes"][0] == {"cause": "child_processes", "gain_bytes": 70 * GIB}
    assert all(c["cause"] not in ("other_processes", "too_big") for c in diagnosis["causes"])


def test_a_stranger_on_the_card_stays_other_processes() -> None:
    diagnosis = diagnose(parse_oom_message("OutOfMemoryError", TORCH_OOM), state({}))  # type: ignore[arg-type]
    assert diagnosis["other_processes"] == [{"pid": 4312, "used_bytes": 70 * GIB}]
    # Someone else's memory is out of this kernel's reach: the request is too big for what it can get.
    assert [c["cause"] for c in diagnosis["causes"]] == ["too_big", "other_processes"]


def test_a_child_that_ended_is_not_offered() -> None:
    assert gpu_children([seen(4312, "mp_process", gpus=[(0, GIB)], ended=5.0)], 0, {}) == {}


def test_killed_workers_are_explained_with_their_last_figures_and_copy_on_write() -> None:
    workers = [
        seen(5001, "dataloader_worker", uss=900 * MIB, first=100 * MIB, ended=3.0),
        seen(5002, "dataloader_worker", uss=850 * MIB, first=100 * MIB),
        seen(5003, "mp_pool_worker", uss=10 * MIB),
    ]
    explained = dataloader_workers([5001], "Killed", workers)
    assert [w["pid"] for w in explained["workers"]] == [5001, 5002]
    assert explained["workers"][0]["killed"] is True and explained["workers"][1]["killed"] is False
    assert explained["workers_host_bytes"] == 1750 * MIB
    assert explained["uss_growth_bytes"] == 1550 * MIB
    assert explained["copy_on_write"] is True
    assert explained["snippet"] == "dataloader-worker-memory"


def test_workers_that_did_not_grow_are_not_called_copy_on_write() -> None:
    explained = dataloader_workers([5001], "Killed", [seen(5001, "dataloader_worker", uss=900 * MIB, first=880 * MIB)])
    assert explained["copy_on_write"] is False


def test_the_watch_puts_the_workers_first_among_the_causes() -> None:
    figures = {"host": {"total_bytes": 8 * GIB, "available_bytes": 100 * MIB, "rss_bytes": GIB}, "gpus": []}
    watch = OomWatch(
        read_figures=lambda: figures,
        inspect=lambda: {"entries": [], "hidden": []},
        processes=lambda: [seen(5001, "dataloader_worker", uss=3 * GIB, first=GIB, ended=1.0)],
        names_in_use=lambda t, m: frozenset(),
    )
    diagnosis: Any = watch.diagnose("RuntimeError", WORKER_KILLED)
    assert diagnosis is not None
    assert diagnosis["kind"] == "host"
    assert diagnosis["causes"][0] == {"cause": "dataloader_workers", "gain_bytes": 3 * GIB}
    assert diagnosis["dataloader_workers"]["killed_pids"] == [5001]


def test_only_sigkill_reads_as_running_out_of_host_memory() -> None:
    assert parse_oom_message("RuntimeError", WORKER_KILLED)["killed_worker_pids"] == [5001]  # type: ignore[index]
    assert parse_oom_message("RuntimeError", "DataLoader worker (pid 5001) is killed by signal: Bus error. ") is None


# NumPy's words when the kernel cannot get the memory of an array.
NUMPY_OOM = "Unable to allocate 4.00 GiB for an array with shape (536870912,) and data type float64"


def test_a_host_oom_names_the_children_that_hold_ram_with_stop_and_release() -> None:
    figures = {"host": {"total_bytes": 16 * GIB, "available_bytes": GIB, "rss_bytes": 2 * GIB}, "gpus": []}
    watch = OomWatch(
        read_figures=lambda: figures,
        inspect=lambda: {"entries": [], "hidden": []},
        processes=lambda: [
            seen(6001, "mp_pool_worker", uss=5 * GIB),
            seen(6002, "mp_pool_worker", uss=5 * GIB),
            seen(6003, "other", uss=4 * MIB),  # too small to name
            seen(6004, "other", uss=3 * GIB, ended=2.0),  # gone: gives nothing back
        ],
        names_in_use=lambda t, m: frozenset(),
        releases=lambda tree: {6001: {"kind": "mp_pool", "name": "pool"}, 6002: {"kind": "mp_pool", "name": "pool"}},
    )
    diagnosis: Any = watch.diagnose("MemoryError", NUMPY_OOM)
    assert diagnosis is not None and diagnosis["kind"] == "host"
    assert [p["pid"] for p in diagnosis["other_processes"]] == [6001, 6002]
    assert diagnosis["other_processes"][0]["remedies"] == ["release_engine", "stop_process"]
    assert diagnosis["other_processes"][0]["used_bytes"] == 5 * GIB
    # The rest of the machine (13 GiB in use besides the kernel) holds the children's 10 GiB.
    assert diagnosis["other_processes_bytes"] == 13 * GIB
    assert diagnosis["causes"][0] == {"cause": "child_processes", "gain_bytes": 10 * GIB}


def test_host_children_leave_out_small_and_ended_processes() -> None:
    children = host_children([seen(1, "other", uss=15 * MIB), seen(2, "other", uss=16 * MIB), seen(3, "other")], {})
    assert list(children) == [2]
