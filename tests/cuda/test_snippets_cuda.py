"""The out-of-memory playbook's snippets on the GPU, with a tiny model: each
runs cleanly (no error, no warning) on CUDA and does there what it says."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from kernel_harness import Kernel
from snippet_cells import default_snippets, render, run_cell, run_snippet, snippet

pytestmark = [pytest.mark.cuda, pytest.mark.kernel]

# The names the snippets expect, on the GPU.
CUDA_SETUP = """\
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
train_loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,))), batch_size=16)
val_loader = DataLoader(TensorDataset(torch.randn(32, 8), torch.randint(0, 2, (32,))), batch_size=16)
criterion = nn.CrossEntropyLoss()
"""

# What each snippet must have done on the GPU, as (expression, expected value).
EFFECTS = {
    # float16 autocast with an enabled scaler; the loss itself comes out in float32
    "amp": ("(scaler.is_enabled(), str(amp_dtype), str(batch_loss.dtype))", (True, "torch.float16", "torch.float32")),
    "bf16-autocast": ("use_bf16", True),
    "memory-fraction": ("_memory_cap_refuses", True),
    "batch-size-search": ("batch_size", 1024),  # the tiny model fits the largest size tried
    "dataloader-pinning": ("(train_loader.pin_memory, train_loader.batch_size)", (True, 16)),
    "inference-mode": ("predictions.is_cuda", True),
    "no-grad-eval": ("torch.is_grad_enabled()", True),  # switched back on after the block
}
# After memory-fraction: more than the cap must be refused although the card has it.
PROBE_CAP = """\
try:
    _over = torch.empty(int(0.6 * torch.cuda.get_device_properties(0).total_memory), dtype=torch.uint8, device="cuda:0")
    _memory_cap_refuses = False
    del _over
except torch.OutOfMemoryError:
    _memory_cap_refuses = True
"""
TORCH_BELOW = [s["id"] for s in default_snippets() if s.get("framework") == "torch" and s.get("placement") == "below"]


@pytest.mark.parametrize("snippet_id", TORCH_BELOW)
def test_snippet_runs_on_the_gpu(snippet_id: str, figures: Callable[..., Any]) -> None:
    # Each expected effect names a snippet run here: a renamed one would lose its check below silently.
    assert set(EFFECTS) <= set(TORCH_BELOW), set(EFFECTS) - set(TORCH_BELOW)
    kernel = run_snippet(snippet(snippet_id), CUDA_SETUP)
    try:
        assert kernel.eval("next(model.parameters()).is_cuda") is True
        if snippet_id == "memory-fraction":
            run_cell(kernel, PROBE_CAP, "probe the cap")
        if snippet_id in EFFECTS:
            expression, expected = EFFECTS[snippet_id]
            assert kernel.eval(expression) == expected, expression
        # The notebook still trains on the GPU afterwards.
        run_cell(
            kernel,
            "for _x, _y in train_loader:\n"
            "    optimizer.zero_grad()\n"
            "    criterion(model(_x.cuda()), _y.cuda()).backward()\n"
            "    optimizer.step()\n"
            "    break\n",
            "a training step after the snippet",
        )
        figures(peak_allocated_bytes=kernel.eval("torch.cuda.max_memory_allocated(0)"))
    finally:
        kernel.shutdown()


EXPANDABLE = "[s['is_expandable'] for s in torch.cuda.memory_snapshot()]"


def test_allocator_config_after_a_restart_really_makes_segments_expandable(figures: Callable[..., Any]) -> None:
    code = render(snippet("allocator-config"))
    plain = Kernel()
    try:
        # Inserted into a kernel whose CUDA already runs: no effect, which is why it asks for a restart.
        run_cell(plain, CUDA_SETUP, "setup", check_warnings=False)
        run_cell(plain, code, "allocator-config too late")
        too_late = plain.eval(EXPANDABLE)
    finally:
        plain.shutdown()
    # After the restart the frontend runs it first, as here.
    restarted = run_snippet(snippet("allocator-config"), CUDA_SETUP)
    try:
        run_cell(restarted, "x = torch.empty(64 * 2**20, device='cuda:0')", "an allocation")
        after_restart = restarted.eval(EXPANDABLE)
    finally:
        restarted.shutdown()
    figures(segments_expandable_too_late=too_late, segments_expandable_after_restart=after_restart)
    assert too_late and not any(too_late)
    assert after_restart and all(after_restart)
