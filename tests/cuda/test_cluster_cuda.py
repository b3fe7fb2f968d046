"""A Dask cluster's GPU memory on a real card: a LocalCluster worker that allocates CUDA memory with
torch is shown with the driver's per-process figure for its pid (scope process), within 64 MiB of
NVML's own reading from this test process, and empty_cache across the workers gives back what its
allocator had cached, in the worker's own figures and the driver's.

Ray is checked on the CPU only (tests/e2e/test_cluster_e2e.py): its wheels are too large for the
GPU kit's offline wheels, so the kit has no Ray.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from gpu_helpers import GiB, MiB, Nvml, open_helper, reply_of
from kernel_harness import Kernel

# The worker fills a share of the card and the check reads the driver's per-process list: alone.
pytestmark = [pytest.mark.cuda, pytest.mark.kernel, pytest.mark.gpu_exclusive]

# The worker keeps 512 MiB in a tensor, and its allocator 1 GiB more in its cache (a tensor
# allocated and deleted): what empty_cache gives back. Kept on the sys module, which outlives
# the function that client.run unpickles and drops.
WORKER_CELL = """
import os, time
from dask.distributed import Client, LocalCluster
cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None)
client = Client(cluster)
def _allocate():
    import os, sys, torch
    sys._vram_block = torch.empty(512 << 20, dtype=torch.uint8, device="cuda:0")
    cached = torch.empty(1 << 30, dtype=torch.uint8, device="cuda:0")
    del cached
    torch.cuda.synchronize()
    return os.getpid()
(worker_pid,) = client.run(_allocate).values()
"""


def latest_worker(kernel: Kernel, comm_id: str, pid: int) -> dict[str, Any] | None:
    for data in reversed(kernel.comm_data(comm_id, "cluster")):
        for cluster in data["clusters"]:
            for worker in cluster["workers"]:
                if worker["pid"] == pid and worker["gpus"]:
                    return worker
    return None


def test_a_worker_s_cuda_memory_is_the_driver_s_per_process_figure_and_empty_cache_returns_its_cache(
    kernel: Kernel, bootstrap: str, nvml: Nvml, figures: Callable[..., None]
) -> None:
    pytest.importorskip("distributed")
    comm_id = open_helper(kernel, bootstrap, interval_s=0.5)
    reply_of(kernel, comm_id, {"type": "configure", "request_id": "c", "config": {"cluster_interval_s": 1}})
    reply = kernel.execute(WORKER_CELL, timeout=300)
    assert reply["status"] == "ok", reply
    pid = kernel.eval("worker_pid")
    assert "torch" not in kernel.eval("sorted(__import__('sys').modules)")  # the kernel never imported it
    worker = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        kernel.pump(0.5)
        worker = latest_worker(kernel, comm_id, pid)
        driver = nvml.process_bytes(pid)
        if worker is not None and driver is not None and abs(worker["gpus"][0]["used_bytes"] - driver) <= 64 * MiB:
            break
    assert worker is not None, "the worker's GPU was never shown"
    (gpu,) = worker["gpus"]
    driver = nvml.process_bytes(pid)
    figures(shown=gpu["used_bytes"], nvml=driver)
    assert gpu["scope"] == "process" and gpu["index"] == 0 and gpu["total_bytes"] > 0
    assert driver is not None and abs(gpu["used_bytes"] - driver) <= 64 * MiB
    assert gpu["used_bytes"] >= 1536 * MiB

    name = kernel.comm_data(comm_id, "cluster")[-1]["clusters"][0]["name"]
    answer = reply_of(
        kernel,
        comm_id,
        {"type": "cluster_action", "request_id": "e", "engine": "dask", "cluster": name, "action": "empty_cache"},
    )
    (done,) = answer["workers"]
    figures(reserved_before=done["gpu_reserved_before_bytes"], reserved_after=done["gpu_reserved_after_bytes"])
    assert answer["done"] is True and done["ok"] and done["torch"] is True
    assert done["gpu_reserved_before_bytes"] >= 1536 * MiB
    assert done["gpu_reserved_after_bytes"] <= 512 * MiB + 64 * MiB
    assert done["allocator"]["cuda_initialized"] is True
    assert done["allocator"]["devices"][0]["allocated_bytes"] == 512 * MiB
    after = nvml.process_bytes(pid)
    figures(nvml_after=after)
    assert after is not None and driver - after >= GiB - 64 * MiB
    kernel.execute("client.close(); cluster.close()", timeout=120)
