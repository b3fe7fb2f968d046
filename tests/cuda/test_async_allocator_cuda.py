"""Under PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync the figures are still
true: allocated, reserved and peak equal torch.cuda, per-cell peaks are exact,
and what that backend does not count is sent as unknown, not as 0."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from gpu_helpers import open_helper
from kernel_harness import CellSession, Kernel, snapshot_sample

pytestmark = [pytest.mark.cuda, pytest.mark.kernel]

ASYNC = {"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"}


def test_cuda_malloc_async_figures(
    kernel_with_env: Callable[..., Kernel], bootstrap: str, figures: Callable[..., Any]
) -> None:
    kernel = kernel_with_env(ASYNC)
    comm_id = open_helper(kernel, bootstrap)
    cells = CellSession(kernel, comm_id)
    cells.run(
        "import torch\nkeep = torch.empty(96 * 2**20, dtype=torch.uint8, device='cuda:0')",
        timeout=300,
        record_timeout=30,
    )
    assert kernel.eval("torch.cuda.get_allocator_backend()") == "cudaMallocAsync"
    record = cells.run(
        "t = torch.empty(200 * 2**20, dtype=torch.uint8, device='cuda:0'); del t\n"
        "torch.cuda.synchronize()\n"
        "truth_peak = torch.cuda.max_memory_allocated(0)",
        record_timeout=30,
    )["record"]
    g = next(g for g in record["gpus"] if g["index"] == 0)
    truth_peak = kernel.eval("truth_peak")
    figures(cell_peak_bytes=g["allocated_peak_bytes"], torch_peak_in_cell_bytes=truth_peak, peak_exact=g["peak_exact"])
    assert g["allocated_peak_bytes"] == truth_peak and g["peak_exact"] is True
    assert truth_peak >= 296 * 2**20

    sample = snapshot_sample(kernel, comm_id, "s1", timeout=60)
    t = sample["gpus"][0]["torch"]
    allocated, reserved, peak = kernel.eval(
        "(torch.cuda.memory_allocated(0), torch.cuda.memory_reserved(0), torch.cuda.max_memory_allocated(0))"
    )
    figures(
        allocated_bytes=t["allocated_bytes"],
        reserved_bytes=t["reserved_bytes"],
        peak_allocated_bytes=t["peak_allocated_bytes"],
        torch_allocated_bytes=allocated,
        torch_reserved_bytes=reserved,
        torch_peak_bytes=peak,
        inactive_split_bytes=t["inactive_split_bytes"],
    )
    assert (t["allocated_bytes"], t["reserved_bytes"], t["peak_allocated_bytes"]) == (allocated, reserved, peak)
    # The driver's pool does the caching: torch does not count these there.
    assert t["active_bytes"] is None and t["inactive_split_bytes"] is None and t["num_alloc_retries"] is None

    made = cells.run("too_big = torch.empty(2**50, dtype=torch.uint8, device='cuda:0')", record_timeout=30)
    oom = made["record"]["oom"]
    figures(oom_causes=[c["cause"] for c in oom["causes"]], oom_message=made["record"]["error"]["message_head"][:200])
    assert made["record"]["error"]["out_of_memory"] is True
    assert oom["causes"] and oom["causes"][0]["cause"] == "too_big"
    assert kernel.output_messages() == [m for m in kernel.output_messages() if m["msg_type"] == "error"]
