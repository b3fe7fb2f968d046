from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest
from cleanup_harness import FakeShell, Figures
from fakes import FakeGpu, FakeProps, FakePynvml, FakeTorch, set_allocator

from jupyterlab_vram_helper.allocations import gpu_allocations
from jupyterlab_vram_helper.cleanup.cleanup import Cleanup

GB = 1 << 30

# The real (CPU) torch and NumPy, where they are installed, are imported once
# here, because no_real_frameworks takes torch out of sys.modules before each
# test, and torch cannot be imported twice.
try:
    import numpy as _REAL_NUMPY
    import torch as _REAL_TORCH
except ImportError:
    # They are absent here, so the tests that need them skip.
    _REAL_NUMPY = _REAL_TORCH = None  # type: ignore[assignment]


@pytest.fixture(autouse=True)
def no_real_frameworks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unit tests see neither the real torch nor TensorFlow, whatever is installed."""
    for name in ("torch", "tensorflow", "tensorflow.python.eager.context"):
        monkeypatch.delitem(sys.modules, name, raising=False)


@pytest.fixture
def real_torch(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The real (CPU) torch and NumPy back in sys.modules, as in a kernel that imported
    them (torch imports its own submodules lazily: it must stay findable). A module of
    tests takes it for each test: ``pytestmark = pytest.mark.usefixtures("real_torch")``."""
    if _REAL_TORCH is None or _REAL_NUMPY is None:
        pytest.skip("needs torch and numpy")
    monkeypatch.setitem(sys.modules, "torch", _REAL_TORCH)
    monkeypatch.setitem(sys.modules, "numpy", _REAL_NUMPY)
    return _REAL_TORCH


@pytest.fixture
def two_gpus() -> list:
    return [
        FakeGpu("GPU-aaaa-1111", "NVIDIA H100 80GB HBM3", 80 << 30, 1 << 30),
        FakeGpu("GPU-bbbb-2222", "NVIDIA H100 80GB HBM3", 80 << 30, 2 << 30),
    ]


@pytest.fixture
def fake_pynvml(two_gpus: list) -> FakePynvml:
    return FakePynvml(two_gpus)


@pytest.fixture
def fake_torch(two_gpus: list, monkeypatch: pytest.MonkeyPatch) -> FakeTorch:
    torch = FakeTorch([FakeProps(g.name, g.total, g.uuid[4:]) for g in two_gpus])
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


@pytest.fixture
def cuda(fake_torch: FakeTorch) -> FakeTorch:
    """The fake torch with CUDA initialised: device 0 holds 1 GB (2 GB reserved, an old 5 GB peak),
    device 1 has a context and nothing allocated (so both are read; a device without a context is not)."""
    fake_torch.initialized = True
    set_allocator(fake_torch, 0, 1 * GB, 2 * GB, peak=5 * GB)  # an old peak, from before this cell
    set_allocator(fake_torch, 1, 0, 0)
    fake_torch.contexts.add(1)
    return fake_torch


# --- clean-up -----------------------------------------------------------------

_SYS_LAST = ("last_type", "last_value", "last_traceback", "last_exc")


@pytest.fixture
def sys_last_restored() -> Iterator[None]:
    """sys.last_* as they were before the test (clearing the traceback removes them)."""
    saved = {attr: getattr(sys, attr) for attr in _SYS_LAST if hasattr(sys, attr)}
    yield
    for attr in _SYS_LAST:
        if attr in saved:
            setattr(sys, attr, saved[attr])
        elif hasattr(sys, attr):
            delattr(sys, attr)


@pytest.fixture
def shell() -> FakeShell:
    return FakeShell()


@pytest.fixture
def cleanup(shell: FakeShell) -> Cleanup:
    return Cleanup(source=None, shell=lambda: shell, read_figures=Figures())


# --- allocation recording --------------------------------------------------------------


@pytest.fixture
def symbolizer_never_ran(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Each test starts in a process where PyTorch's symbolizer has not run (the
    fake's marks it run as the real one does: torch._inductor imported). The
    allocation-recording tests take it for every test: pytest.mark.usefixtures."""
    monkeypatch.setattr(gpu_allocations, "_symbolizer_ran", False)
    real = sys.modules.pop("torch._inductor", None)
    yield
    sys.modules.pop("torch._inductor", None)
    if real is not None:
        sys.modules["torch._inductor"] = real
