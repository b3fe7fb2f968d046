"""Per-cell memory against torch.cuda read inside the cell: the peak to the
byte (the helper resets the allocator's peak at cell start), and the badge's
delta equal to the allocated difference."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from gpu_helpers import open_helper
from kernel_harness import CellSession, Kernel

pytestmark = [pytest.mark.cuda, pytest.mark.kernel]


def _gpu0(record: dict) -> dict:
    return next(g for g in record["gpus"] if g["index"] == 0)


def test_cell_peak_and_delta_equal_torch_cuda_to_the_byte(
    kernel: Kernel, bootstrap: str, figures: Callable[..., Any]
) -> None:
    cells = CellSession(kernel, open_helper(kernel, bootstrap))
    cells.run(
        "import torch\nkeep = torch.empty(64 * 2**20, dtype=torch.uint8, device='cuda:0')",
        timeout=300,
        record_timeout=30,
    )
    # A transient peak below the earlier one: only a per-cell reset shows it.
    # The cell records its own ground truth.
    made = cells.run(
        "start_allocated = torch.cuda.memory_allocated(0)\n"
        "t = torch.empty(48 * 2**20 + 7, dtype=torch.uint8, device='cuda:0')\n"
        "u = torch.empty(16 * 2**20, dtype=torch.uint8, device='cuda:0')\n"
        "del t\n"
        "truth_peak = torch.cuda.max_memory_allocated(0)\n"
        "truth_delta = torch.cuda.memory_allocated(0) - start_allocated\n",
        record_timeout=30,
    )
    reply, record = made["reply"], made["record"]
    assert reply["status"] == "ok", reply
    truth_peak, truth_delta = kernel.eval("(truth_peak, truth_delta)")
    g = _gpu0(record)
    delta = g["allocated_after_bytes"] - g["allocated_before_bytes"]
    figures(
        cell_peak_bytes=g["allocated_peak_bytes"],
        torch_peak_in_cell_bytes=truth_peak,
        cell_delta_bytes=delta,
        torch_delta_in_cell_bytes=truth_delta,
    )
    assert g["peak_exact"] is True and record["peak_exact"] is True
    assert g["allocated_peak_bytes"] == truth_peak
    assert delta == truth_delta
    assert g["allocated_after_bytes"] == kernel.eval("torch.cuda.memory_allocated(0)")
    assert g["reserved_after_bytes"] == kernel.eval("torch.cuda.memory_reserved(0)")
    assert kernel.output_messages() == []


def test_cell_peak_without_reset_leaves_the_users_counter_alone(kernel: Kernel, bootstrap: str) -> None:
    comm_id = open_helper(kernel, bootstrap)
    cells = CellSession(kernel, comm_id)
    kernel.request(comm_id, {"type": "configure", "request_id": "c", "config": {"reset_peak_per_cell": False}})
    cells.run(
        "import torch\nbig = torch.empty(256 * 2**20, dtype=torch.uint8, device='cuda:0'); del big",
        timeout=300,
        record_timeout=30,
    )
    user_peak = kernel.eval("torch.cuda.max_memory_allocated(0)")
    record = cells.run("small = torch.empty(8 * 2**20, dtype=torch.uint8, device='cuda:0')", record_timeout=30)[
        "record"
    ]
    assert kernel.eval("torch.cuda.max_memory_allocated(0)") == user_peak  # not reset
    g = _gpu0(record)
    assert g["peak_exact"] is False
    assert g["allocated_peak_bytes"] >= g["allocated_after_bytes"] == kernel.eval("torch.cuda.memory_allocated(0)")


def test_a_peak_reset_by_the_user_inside_the_cell_is_not_called_exact(kernel: Kernel, bootstrap: str) -> None:
    cells = CellSession(kernel, open_helper(kernel, bootstrap))
    cells.run(
        "import torch\nkeep = torch.empty(256 * 2**20, dtype=torch.uint8, device='cuda:0')",
        timeout=300,
        record_timeout=30,
    )
    # The cell frees, then starts its own measurement: torch's counter now
    # says less than what the cell held when it started.
    record = cells.run("del keep\ntorch.cuda.reset_peak_memory_stats(0)", record_timeout=30)["record"]
    g = _gpu0(record)
    assert g["peak_exact"] is False and record["peak_exact"] is False
    assert g["allocated_peak_bytes"] >= g["allocated_before_bytes"] >= 256 * 2**20


def test_cell_that_initialises_cuda_counts_from_zero(kernel: Kernel, bootstrap: str) -> None:
    cells = CellSession(kernel, open_helper(kernel, bootstrap))
    cells.run("import torch", record_timeout=30)
    record = cells.run(
        "x = torch.empty(32 * 2**20, dtype=torch.uint8, device='cuda:0')\n"
        "truth_peak = torch.cuda.max_memory_allocated(0)",
        timeout=300,
        record_timeout=30,
    )["record"]
    g = _gpu0(record)
    assert g["allocated_before_bytes"] == 0 and g["reserved_before_bytes"] == 0
    assert g["allocated_peak_bytes"] == kernel.eval("truth_peak") and g["peak_exact"] is True


def test_a_device_without_a_context_at_cell_start_counts_from_zero(
    kernel: Kernel, bootstrap: str, figures: Callable[..., Any]
) -> None:
    # CUDA initialised, no context on the device yet: the helper reads nothing
    # there (torch's allocator holds nothing without a context) and resets
    # nothing; the cell that makes the context must still match torch exactly.
    cells = CellSession(kernel, open_helper(kernel, bootstrap))
    cells.run("import torch\ntorch.cuda.init()", timeout=300, record_timeout=30)
    initialized, context = kernel.eval("(torch.cuda.is_initialized(), bool(torch._C._cuda_hasPrimaryContext(0)))")
    figures(cuda_initialized=initialized, context_after_init=context)
    if context:
        pytest.skip("this torch makes a context when CUDA is initialised: there is no context-free start to check")
    assert initialized
    record = cells.run(
        "x = torch.empty(40 * 2**20 + 3, dtype=torch.uint8, device='cuda:0')\n"
        "y = torch.empty(24 * 2**20, dtype=torch.uint8, device='cuda:0'); del y\n"
        "truth = (torch.cuda.memory_allocated(0), torch.cuda.max_memory_allocated(0), torch.cuda.memory_reserved(0))",
        record_timeout=30,
    )["record"]
    g = _gpu0(record)
    allocated, peak, reserved = kernel.eval("truth")
    figures(cell=g, torch_allocated=allocated, torch_peak=peak, torch_reserved=reserved)
    assert (g["allocated_before_bytes"], g["reserved_before_bytes"]) == (0, 0)
    assert (g["allocated_after_bytes"], g["allocated_peak_bytes"], g["reserved_after_bytes"]) == (
        allocated,
        peak,
        reserved,
    )
    assert g["peak_exact"] is True
    # The next cell reads and resets the device as usual: its peak is its own.
    later = _gpu0(
        cells.run(
            "z = torch.empty(8 * 2**20, dtype=torch.uint8, device='cuda:0')\n"
            "truth = torch.cuda.max_memory_allocated(0)",
            record_timeout=30,
        )["record"]
    )
    assert later["allocated_before_bytes"] == allocated
    assert later["allocated_peak_bytes"] == kernel.eval("truth") < peak
    assert kernel.output_messages() == []
