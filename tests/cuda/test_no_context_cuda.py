"""Monitoring never creates a CUDA context: after a minute of sampling and one
request of every type (allocation recording on, and a cell run under it, included),
cell hooks and an out-of-memory-looking error, a kernel
that imported torch but never used CUDA still has none (torch says so, and
NVML lists no process for it, while it does list a process that has one)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import pytest
from gpu_helpers import MemoryHolder, MiB, Nvml, open_helper, reply_of
from kernel_harness import CellSession, Kernel, snapshot_sample

from jupyterlab_vram_helper.protocol import REQUEST_TYPES

pytestmark = [pytest.mark.cuda, pytest.mark.kernel]

# A minute by default; VRAM_GPU_SAMPLING_S shortens it while developing the suite.
SAMPLING_S = float(os.environ.get("VRAM_GPU_SAMPLING_S", "60"))

# Looks like torch's message; raised by the user's code, not by the allocator.
FAKE_OOM = (
    "raise torch.OutOfMemoryError('CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
    "of 79.19 GiB of which 1.00 GiB is free. Of the allocated memory 70.00 GiB is allocated by PyTorch, "
    "and 6.00 GiB is reserved by PyTorch but unallocated.')"
)


def test_monitoring_creates_no_cuda_context(
    kernel: Kernel, bootstrap: str, nvml: Nvml, figures: Callable[..., Any]
) -> None:
    kernel.execute("import torch")
    pid = kernel.eval("__import__('os').getpid()")
    comm_id = open_helper(kernel, bootstrap, interval_s=0.1)
    cells = CellSession(kernel, comm_id)
    hello = kernel.comm_data(comm_id, "hello")[0]

    # cell hooks, a CPU tensor to inspect and delete, and an OOM-looking error
    cells.run("cpu_tensor = torch.ones(1000)\ncpu_tensor.sum()")
    made = cells.run(FAKE_OOM, record_timeout=30)
    assert made["reply"]["status"] == "error" and made["record"]["error"]["out_of_memory"] is True
    assert made["record"]["oom"] is not None  # diagnosed, from the message and NVML, without CUDA

    asked = set()
    for data in (
        {"type": "ping"},
        {"type": "configure", "config": {"interval_s": 0.1}},
        {"type": "history"},
        {"type": "notebook_names"},
        {"type": "free_memory", "actions": ["gc", "empty_cache"]},
    ):
        reply_of(kernel, comm_id, {"request_id": f"r-{data['type']}", **data})
        asked.add(data["type"])
    listing = reply_of(kernel, comm_id, {"type": "inspect", "request_id": "r-inspect"})
    asked.add("inspect")
    deleted = reply_of(
        kernel,
        comm_id,
        {
            "type": "delete",
            "request_id": "r-delete",
            "listing_id": listing["listing_id"],
            "names": ["cpu_tensor"],
            "hidden": ["last_traceback"],
            "free": ["gc", "empty_cache"],
        },
    )
    assert deleted["deleted"] == ["cpu_tensor"]
    asked.add("delete")
    snapshot_sample(kernel, comm_id, "r-snapshot", timeout=60)
    asked.add("snapshot")
    # Recording allocations by line: the GPU history waits for CUDA (starting it
    # would create a context), while a cell runs and is charged its host lines.
    recording = reply_of(kernel, comm_id, {"type": "record_allocations", "request_id": "r-record", "enabled": True})
    assert recording["gpu"]["state"] == "waiting", recording
    asked.add("record_allocations")
    cells.run("kept_rows = [bytearray(4096) for _ in range(256)]")
    sites = reply_of(kernel, comm_id, {"type": "allocation_sites", "request_id": "r-sites"})
    assert [d["device"] for d in sites["devices"]] == ["host"], sites["devices"]
    asked.add("allocation_sites")
    exported = reply_of(kernel, comm_id, {"type": "allocation_snapshot", "request_id": "r-export"})
    assert exported["data_base64"] is None and "not being recorded" in exported["reason"], exported
    asked.add("allocation_snapshot")
    reply_of(kernel, comm_id, {"type": "record_allocations", "request_id": "r-record-off", "enabled": False})
    assert asked == set(REQUEST_TYPES), set(REQUEST_TYPES) - asked

    deadline = time.monotonic() + SAMPLING_S
    while time.monotonic() < deadline:
        kernel.pump(0.5)
    samples = kernel.comm_data(comm_id, "sample")
    figures(sampling_seconds=SAMPLING_S, samples_received=len(samples))
    # The checks over every sample below say nothing of a sampler that sent none.
    assert len(samples) >= SAMPLING_S / 2, f"{len(samples)} samples in {SAMPLING_S} s at a 0.1 s heartbeat"

    assert kernel.eval("torch.cuda.is_initialized()") is False
    assert all(s["torch"] == {"imported": True, "cuda_initialized": False} for s in samples)
    assert all(g["torch"] is None for s in samples for g in s["gpus"])
    # the user's own error, and nothing of ours in the output
    outputs = kernel.output_messages()
    assert [m["content"]["ename"] for m in outputs if m["msg_type"] == "error"] == ["OutOfMemoryError"]
    assert [m for m in outputs if m["msg_type"] == "stream"] == []
    # The test process opened NVML (the nvml fixture): a kernel of the same interpreter on the
    # same machine that cannot is the helper's failure, not a reason to skip the NVML checks.
    assert hello["nvml"]["available"], f"NVML unavailable in the kernel: {hello['nvml']['error']}"
    assert hello["devices"] and all(d["total_bytes"] for d in hello["devices"])  # from NVML, before any CUDA
    assert all(g["nvml"]["process_used_bytes"] == 0 for g in samples[-1]["gpus"])
    listed = nvml.pids()
    figures(kernel_pid=pid, nvml_pids=sorted(listed))
    assert pid not in listed
    # The control: NVML on this machine does list a process that has a context.
    holder = MemoryHolder(64 * MiB)
    try:
        assert holder.pid in nvml.pids(), (
            "NVML lists no process with a CUDA context here: the check above proves nothing"
        )
    finally:
        holder.close()


def test_recording_allocations_where_cuda_is_initialised_without_a_context_creates_none(
    kernel: Kernel, bootstrap: str, nvml: Nvml, figures: Callable[..., Any]
) -> None:
    # Initialised, no context yet: what torch.cuda.init() or reading a device's
    # properties leaves. The history starts at once here (with the symbolizer's
    # warm-up before it), so every call of it must leave the devices alone.
    kernel.execute("import torch\ntorch.cuda.init()\n", timeout=300)
    pid = kernel.eval("__import__('os').getpid()")
    assert kernel.eval("torch.cuda.is_initialized()") is True
    if kernel.eval("torch._C._cuda_hasPrimaryContext(0)"):
        pytest.skip("torch.cuda.init() created a context on this torch: the case does not arise")
    comm_id = open_helper(kernel, bootstrap)
    cells = CellSession(kernel, comm_id)
    state = reply_of(kernel, comm_id, {"type": "record_allocations", "request_id": "r1", "enabled": True})
    figures(gpu_state=state["gpu"]["state"])
    assert state["gpu"]["state"] == "recording", state["gpu"]  # started at once: CUDA is initialised
    cells.run("kept_rows = [bytearray(4096) for _ in range(256)]")
    reply_of(kernel, comm_id, {"type": "allocation_sites", "request_id": "r2"}, timeout=300)
    reply_of(kernel, comm_id, {"type": "allocation_snapshot", "request_id": "r3"}, timeout=300)
    reply_of(kernel, comm_id, {"type": "record_allocations", "request_id": "r4", "enabled": False})
    contexts = kernel.eval("[torch._C._cuda_hasPrimaryContext(i) for i in range(torch.cuda.device_count())]")
    figures(contexts=contexts)
    assert not any(contexts)
    assert pid not in nvml.pids()
