"""What the batch-size-search snippet does, in a real kernel: it finds the exact largest batch size
and leaves the model as it was, halves on every kind of out-of-memory (host RAM, NumPy, older
torch; a real capped host memory too), and lets other errors through."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel
from snippet_cells import TORCH_SETUP, render, run_cell, snippet

pytestmark = pytest.mark.kernel


# A model with batch norm that "runs out of memory" above some batch size, after its
# forward pass has run (so a try that fails has moved the running statistics too).
FAKE_OOM = """\
model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
with torch.no_grad():
    model[1].running_mean.fill_(0.5)
    model[1].running_var.fill_(2.0)
model.eval()
_fits_up_to = 0
_real_forward = model.forward

def _out_of_memory():
    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (fake)")

def _forward(x):
    if x.shape[0] > _fits_up_to:
        if x.shape[0] > 1:  # batch norm refuses a single example in training mode
            _real_forward(x)
        _out_of_memory()
    return _real_forward(x)

model.forward = _forward
_buffers_before = {k: v.clone() for k, v in model.named_buffers()}

def _buffers_unchanged():
    return all(torch.equal(_buffers_before[k], v) for k, v in model.named_buffers())
"""


@pytest.mark.parametrize("fits_up_to", [300, 1023, 5000, 0])
def test_batch_size_search_finds_the_exact_size_and_leaves_the_model_as_it_was(fits_up_to: int) -> None:
    kernel = Kernel()
    try:
        run_cell(kernel, TORCH_SETUP + FAKE_OOM + f"_fits_up_to = {fits_up_to}\n", "setup", check_warnings=False)
        text = run_cell(kernel, render(snippet("batch-size-search")), "batch-size-search")
        assert kernel.eval("_buffers_unchanged()") is True, "the search moved batch norm's running statistics"
        assert kernel.eval("model.training") is False, "the search left the model in training mode"
        assert kernel.eval("all(p.grad is None for p in model.parameters())") is True
        if fits_up_to == 0:
            assert "not even one example fits" in text, text
        elif fits_up_to >= 1024:
            assert kernel.eval("batch_size") == 1024
            assert "at least 1024" in text, text
        else:
            assert kernel.eval("batch_size") == fits_up_to
            assert f"largest batch size that fits: {fits_up_to}" in text, text
    finally:
        kernel.shutdown()


# What each kind of out-of-memory raises, in the fake model above.
OUT_OF_MEMORY = {
    # Host RAM, CPU torch: a plain RuntimeError from its allocator.
    "torch-host": 'raise RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. '
    "DefaultCPUAllocator: can't allocate "
    'memory: you tried to allocate 3221225472 bytes. Error code 12 (Cannot allocate memory)")',
    # Host RAM, NumPy (data preparation in the forward pass): a real MemoryError.
    "numpy": "__import__('numpy').empty(2**62, dtype='uint8')",
    # PyTorch 1.13 to 2.4: torch.cuda.OutOfMemoryError, no torch.OutOfMemoryError.
    "torch-2.4": "raise torch.cuda.OutOfMemoryError('CUDA out of memory. Tried to allocate 2.00 GiB (fake)')",
    # PyTorch before 1.13: neither name; a RuntimeError.
    "torch-1.12": "raise RuntimeError('CUDA out of memory. Tried to allocate 2.00 GiB (fake)')",
}
# An older torch, as far as these names go.
WITHOUT_OOM_NAMES = {
    "torch-2.4": "del torch.OutOfMemoryError\n",
    "torch-1.12": "import torch.cuda\ndel torch.OutOfMemoryError, torch.cuda.OutOfMemoryError\n",
}


@pytest.mark.parametrize("kind", list(OUT_OF_MEMORY))
def test_batch_size_search_halves_on_every_kind_of_out_of_memory(kind: str) -> None:
    """The snippet is offered for host-RAM out-of-memory errors too, and runs on older torch."""
    kernel = Kernel()
    try:
        run_cell(
            kernel,
            TORCH_SETUP + FAKE_OOM + "_fits_up_to = 300\n"
            f"def _out_of_memory():\n    {OUT_OF_MEMORY[kind]}\n" + WITHOUT_OOM_NAMES.get(kind, ""),
            "setup",
            check_warnings=False,
        )
        text = run_cell(kernel, render(snippet("batch-size-search")), f"batch-size-search, {kind}")
        assert "largest batch size that fits: 300 (301 does not)" in text, text
        assert kernel.eval("_buffers_unchanged() and not model.training") is True
    finally:
        kernel.shutdown()


def test_batch_size_search_lets_other_errors_through_and_leaves_the_model_as_it_was() -> None:
    kernel = Kernel()
    try:
        run_cell(
            kernel,
            TORCH_SETUP + FAKE_OOM + "_fits_up_to = 300\n"
            "def _out_of_memory():\n    raise RuntimeError('mat1 and mat2 shapes cannot be multiplied')\n",
            "setup",
            check_warnings=False,
        )
        reply = kernel.execute(render(snippet("batch-size-search")), timeout=180)
        assert (reply["status"], reply.get("ename")) == ("error", "RuntimeError"), reply
        assert "shapes cannot be multiplied" in reply["evalue"], reply
        assert kernel.eval("_buffers_unchanged() and not model.training") is True
    finally:
        kernel.shutdown()


# Real host out-of-memory on CPU: a cap on the kernel's address space (2 GiB above what it uses)
# and a model that needs 256 MiB of scratch memory per example, from torch or from NumPy.
HUNGRY = """\
import resource
import numpy as np

class Hungry(nn.Module):
    def __init__(self, scratch):
        super().__init__()
        self.scratch = scratch
        self.linear = nn.Linear(8, 2)

    def forward(self, x):
        self.scratch(x.shape[0] << 28)
        return self.linear(x)

def _address_space():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))

_cap = _address_space() + 2 * 2**30
resource.setrlimit(resource.RLIMIT_AS, (_cap, resource.getrlimit(resource.RLIMIT_AS)[1]))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("scratch", ["lambda n: torch.empty(n, dtype=torch.uint8)", "lambda n: np.empty(n, np.uint8)"])
def test_batch_size_search_on_a_real_host_out_of_memory(scratch: str) -> None:
    kernel = Kernel()
    try:
        run_cell(kernel, TORCH_SETUP + HUNGRY + f"model = Hungry({scratch})\n", "setup", check_warnings=False)
        text = run_cell(kernel, render(snippet("batch-size-search")), "batch-size-search in capped host memory")
        batch_size, too_large = kernel.eval("(batch_size, too_large)")
        # 2 GiB hold at most 7 examples' scratch (and the search must have run out at least once).
        assert 1 <= batch_size <= 7 and too_large == batch_size + 1, text
        assert f"largest batch size that fits: {batch_size}" in text, text
    finally:
        kernel.shutdown()
