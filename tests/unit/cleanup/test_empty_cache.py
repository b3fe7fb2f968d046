"""Cleanup's empty_cache never initialises CUDA: skipped without torch or before CUDA is
initialised, and run on each device that reserves memory."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import pytest
from fakes import FakeTorch, set_allocator

from jupyterlab_vram_helper.cleanup import cleanup as cleanup_mod

real_torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
pytestmark = pytest.mark.usefixtures("real_torch")


def _with_empty_cache(torch: FakeTorch) -> list[Any]:
    calls: list[Any] = []

    @contextlib.contextmanager
    def device(i: Any) -> Any:
        calls.append(("device", i))
        yield

    torch.cuda.device = device
    torch.cuda.empty_cache = lambda: calls.append(("empty_cache",))
    return calls


def test_empty_cache_without_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "torch")
    assert cleanup_mod.empty_cuda_cache() == "skipped_torch_not_imported"


def test_empty_cache_before_cuda_is_initialised(fake_torch: FakeTorch) -> None:
    calls = _with_empty_cache(fake_torch)
    assert cleanup_mod.empty_cuda_cache() == "skipped_cuda_not_initialized"
    assert calls == [] and fake_torch.calls == []


def test_empty_cache_on_devices_that_reserve_memory(fake_torch: FakeTorch) -> None:
    calls = _with_empty_cache(fake_torch)
    fake_torch.initialized = True
    set_allocator(fake_torch, 1, allocated=10, reserved=100)
    assert cleanup_mod.empty_cuda_cache() == "done"
    assert calls == [("device", 1), ("empty_cache",)]
