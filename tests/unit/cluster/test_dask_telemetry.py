"""A Dask scheduler's answer read into workers: the recorded 64 workers, older versions' keys, GPUs."""

from typing import Any

from cluster_fakes import recorded_identity

from jupyterlab_vram_helper.cluster.cluster_state import totals
from jupyterlab_vram_helper.cluster.dask_telemetry import dashboard_link, dask_unseen, dask_workers
from jupyterlab_vram_helper.cluster.local_figures import EMPTY, LocalFigures

MIB = 1 << 20


def test_the_recorded_64_workers_are_read_with_their_limits_and_memory() -> None:
    identity = recorded_identity()
    workers = dask_workers(identity, {}, EMPTY)
    assert len(workers) == 64
    for worker in workers:
        info = identity["workers"][worker["id"]]
        assert worker["memory_bytes"] == info["metrics"]["memory"]
        assert worker["memory_limit_bytes"] == 512 * MIB and worker["nthreads"] == 1
        assert worker["status"] == "running" and worker["managed_bytes"] == 0 and worker["spilled_bytes"] == 0
        assert worker["host"] == info["host"] and worker["pid"] is None and worker["gpus"] == []
    summed = totals(workers)
    assert summed["workers"] == 64 and summed["memory_limit_bytes"] == 64 * 512 * MIB
    assert summed["memory_bytes"] == sum(w["metrics"]["memory"] for w in identity["workers"].values())
    assert dashboard_link(identity) is not None or "dashboard" not in identity.get("services", {})


def test_missing_and_older_keys_cost_only_their_figures() -> None:
    identity: dict[str, Any] = {
        "workers": {
            "tcp://10.1.1.1:1": {"host": "10.1.1.1", "metrics": {"spilled_nbytes": 5, "managed_in_memory": 7}},
            "tcp://10.1.1.1:2": {"metrics": None, "memory_limit": 0, "status": "paused"},
            "tcp://10.1.1.1:3": "not a dict",
        }
    }
    first, second = dask_workers(identity, {}, EMPTY)
    assert (first["spilled_bytes"], first["managed_bytes"], first["memory_bytes"]) == (5, 7, None)
    assert first["local"] is False and first["status"] == "unknown"
    assert second["memory_limit_bytes"] is None and second["host"] == "10.1.1.1" and second["status"] == "paused"
    assert totals([first, second])["memory_bytes"] is None and totals([first, second])["paused"] == 1
    assert dask_workers({"workers": None}, {}, EMPTY) == []


def test_a_local_worker_gets_the_driver_s_per_process_figure_and_a_remote_one_the_device_s() -> None:
    gpu_metrics = {"memory": 100, "gpu": {"utilization": 40, "memory-used": 3 * MIB}}
    identity = {
        "workers": {
            "tcp://127.0.0.1:5": {
                "host": "127.0.0.1",
                "metrics": gpu_metrics,
                "gpu": {"name": "H200", "memory-total": 8 * MIB},
            },
            "tcp://10.9.9.9:5": {
                "host": "10.9.9.9",
                "metrics": gpu_metrics,
                "gpu": {"name": "H200", "memory-total": 8 * MIB},
            },
        }
    }
    tree = {4321: {"pid": 4321, "gpus": [{"index": 0, "used_bytes": 2 * MIB}], "host": {"rss_bytes": 9}}}
    local = LocalFigures(tree, {0: ("H200", 8 * MIB)})
    local_worker, remote = sorted(dask_workers(identity, {"tcp://127.0.0.1:5": 4321}, local), key=lambda w: w["local"])[
        ::-1
    ]
    assert local_worker["pid"] == 4321
    assert local_worker["gpus"] == [
        {
            "index": 0,
            "name": "H200",
            "used_bytes": 2 * MIB,
            "total_bytes": 8 * MIB,
            "scope": "process",
            "utilization_percent": None,
        }
    ]
    assert remote["gpus"] == [
        {
            "index": None,
            "name": "H200",
            "used_bytes": 3 * MIB,
            "total_bytes": 8 * MIB,
            "scope": "device",
            "utilization_percent": 40.0,
        }
    ]


def test_unseen_names_the_workers_without_a_pid_or_gpu_figures_and_nothing_when_all_are_seen() -> None:
    workers = dask_workers(recorded_identity(), {}, EMPTY)
    assert dask_unseen(workers) == [
        "64 workers not started by this kernel: Dask's scheduler does not report a worker's pid, so their "
        "figures cannot be checked against the process itself.",
        "64 workers without GPU figures: a Dask worker reports its GPU only where pynvml works in it, and a "
        "worker without a GPU looks the same.",
    ]
    seen = [dict(workers[0], pid=4321, gpus=[{"index": 0}])]
    assert dask_unseen(seen) == []
    assert dask_unseen([dict(workers[0], pid=4321)])[0].startswith("1 worker without GPU figures")
