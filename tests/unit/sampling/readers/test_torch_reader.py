"""The torch.cuda reader: nothing read while CUDA is untouched, figures from one stats call (torch's
C binding where it has one), devices without a context, cudaMallocAsync's unknowns, and the
bindings the cell hooks call."""

import sys
import types
from typing import Any

import pytest

try:  # the real one, imported before the fixtures hide torch from the helper
    import torch as REAL_TORCH
except ImportError:
    REAL_TORCH = None  # type: ignore[assignment]  # absent here: the tests that need it skip

from fakes import known, nested_stats, set_allocator

from jupyterlab_vram_helper.sampling.readers import torch_cuda
from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
from jupyterlab_vram_helper.sampling.sample import SampleSource


def read_initialized_device(torch, index):
    """The sampler's torch figures of one device (its context state aside)."""
    return torch_cuda.initialized_device_reading(torch, index)[0]


def test_torch_absent() -> None:
    assert torch_cuda.loaded_torch() is None
    assert torch_cuda.torch_state(None) == {"imported": False, "cuda_initialized": False}
    assert torch_cuda.torch_info(None) is None
    assert torch_cuda.cell_allocators(None) is None


def test_torch_imported_cuda_untouched_reads_nothing(fake_torch, fake_pynvml, two_gpus) -> None:
    assert torch_cuda.torch_info(fake_torch) == {"version": "2.5.1", "cuda_build": "12.4", "cuda_initialized": False}
    nvml = NvmlReader(pid=77, load=lambda: fake_pynvml, pid_exists=lambda p: True)
    nvml.start()
    figures = SampleSource(nvml=nvml, environ={}).read()
    assert figures["torch"] == {"imported": True, "cuda_initialized": False}
    assert [gpu["torch"] for gpu in figures["gpus"]] == [None, None]  # NVML sees the cards; torch is not asked
    assert torch_cuda.cell_allocators(fake_torch) is None
    assert fake_torch.calls == []


def test_torch_figures_from_one_nested_stats_call(fake_torch) -> None:
    fake_torch.initialized = True
    fake_torch.stats[1] = nested_stats(allocated=100, reserved=300, peak=250, ooms=2, retries=5)
    figures = read_initialized_device(fake_torch, 1)
    assert figures == {
        "allocated_bytes": 100,
        "reserved_bytes": 300,
        "peak_allocated_bytes": 250,
        "active_bytes": 100,
        "inactive_split_bytes": 200,
        "num_ooms": 2,
        "num_alloc_retries": 5,
    }
    # Whether the device has a context is asked once: a context stays.
    assert fake_torch.calls == [("_cuda_hasPrimaryContext", 1), ("memory_stats_as_nested_dict", 1)]
    fake_torch.calls.clear()
    assert read_initialized_device(fake_torch, 1) == figures
    assert fake_torch.calls == [("memory_stats_as_nested_dict", 1)]


def test_a_device_without_a_context_holds_nothing_and_its_stats_are_not_read(fake_torch) -> None:
    fake_torch.initialized = True
    figures = read_initialized_device(fake_torch, 1)
    assert figures == {
        "allocated_bytes": 0,
        "reserved_bytes": 0,
        "peak_allocated_bytes": 0,
        "active_bytes": 0,
        "inactive_split_bytes": 0,
        "num_ooms": 0,
        "num_alloc_retries": 0,
    }
    assert torch_cuda.allocator_counters(fake_torch, 1) == (0, 0, 0, 0)
    assert fake_torch.calls == [("_cuda_hasPrimaryContext", 1)] * 2  # asked each time: a context may come
    fake_torch.contexts.add(1)
    set_allocator(fake_torch, 1, 64, 128)
    assert read_initialized_device(fake_torch, 1)["reserved_bytes"] == 128
    # What the shared zero stats are made of is never handed out to be changed.
    assert read_initialized_device(fake_torch, 0) is not read_initialized_device(fake_torch, 0)


def test_a_torch_that_cannot_say_whether_a_device_has_a_context_has_its_stats_read(fake_torch) -> None:
    fake_torch.initialized = True
    del fake_torch._C._cuda_hasPrimaryContext
    assert read_initialized_device(fake_torch, 1)["allocated_bytes"] == 0
    assert fake_torch.calls == [("memory_stats_as_nested_dict", 1)]


def test_cuda_malloc_async_figures_it_cannot_see_are_unknown_not_zero(fake_torch) -> None:
    # That backend fills allocated and reserved; torch leaves the native
    # allocator's block figures at 0, which would read as "no fragmentation".
    fake_torch.initialized = True
    fake_torch.allocator_backend = "cudaMallocAsync"
    fake_torch.contexts = {1}
    fake_torch.stats[1] = nested_stats(allocated=100, reserved=300, peak=250)
    figures = read_initialized_device(fake_torch, 1)
    assert (figures["allocated_bytes"], figures["reserved_bytes"], figures["peak_allocated_bytes"]) == (100, 300, 250)
    assert figures["active_bytes"] is None and figures["inactive_split_bytes"] is None
    assert figures["num_alloc_retries"] is None and figures["num_ooms"] == 0
    # Device 0 has no context: not read, not reset (the fake fails if it is).
    assert read_initialized_device(fake_torch, 0) is None
    # Torch says so: nothing of torch's is there (a context made there later counts from zero).
    assert torch_cuda.allocator_counters(fake_torch, 0) == (0, 0, 0, 0)
    view = torch_cuda.cell_allocators(fake_torch)
    assert view is not None and view.indices == (0, 1)  # what the cell hooks read
    assert view.unused(0) and not view.unused(1)  # device 0 is read as NO_ALLOCATIONS, never asked
    assert torch_cuda.allocator_counters(fake_torch, 1) == (100, 250, 300, 300)
    fake_torch._C._cuda_hasPrimaryContext = None  # a torch that cannot say: left out, not guessed
    torch_cuda._allocator = None
    assert known(torch_cuda.cell_allocators(fake_torch)).indices == ()
    assert torch_cuda.allocator_counters(fake_torch, 0) is None


def test_missing_stat_keys_are_null_not_zero(fake_torch) -> None:
    fake_torch.initialized = True
    fake_torch.stats[0] = {"allocated_bytes": {"all": {"current": 5}}}
    figures = read_initialized_device(fake_torch, 0)
    assert figures["allocated_bytes"] == 5
    assert figures["reserved_bytes"] is None and figures["num_ooms"] is None


def test_without_torchs_binding_the_peak_reset_is_its_public_function(fake_torch) -> None:
    fake_torch.initialized = True
    view = torch_cuda.cell_allocators(fake_torch)
    assert view is not None
    view.reset_peaks(1)
    assert fake_torch.calls[-1] == ("reset_peak_memory_stats", 1)
    del fake_torch.cuda.reset_peak_memory_stats  # a torch with neither: the figures are still read
    view = torch_cuda.cell_allocators(fake_torch)
    assert view is not None and view.stats(0) is not None
    with pytest.raises(AttributeError, match="no reset_peak_memory_stats"):
        view.reset_peaks(0)


def test_the_cell_hooks_view_binds_torchs_c_functions_once_cuda_is_initialised(fake_torch) -> None:
    assert torch_cuda.cell_allocators(fake_torch) is None  # CUDA not initialised: nothing to read
    assert torch_cuda.cell_allocators(None) is None
    fake_torch.initialized = True
    fake_torch._C._cuda_memoryStats = lambda index: fake_torch.stats[index]
    fake_torch._C._cuda_resetPeakMemoryStats = lambda index: None
    view = torch_cuda.cell_allocators(fake_torch)
    assert view is not None and view.fixed and view.indices == (0, 1)
    assert view.stats is fake_torch._C._cuda_memoryStats
    assert view.reset_peaks is fake_torch._C._cuda_resetPeakMemoryStats
    fake_torch.allocator_backend = "cudaMallocAsync"
    torch_cuda._allocator = None  # a torch module binds its backend once: here, the new one
    fake_torch.contexts = {1}
    view = torch_cuda.cell_allocators(fake_torch)
    assert view is not None and not view.fixed and view.indices == (0, 1) and view.unused(0)


def test_counters_come_from_stats_as_read_and_are_none_where_nothing_was_read() -> None:
    assert torch_cuda.counters_from_stats({}) is None and torch_cuda.counters_from_stats(None) is None
    assert torch_cuda.counters_from_stats(nested_stats(allocated=10, reserved=30, peak=20)) == (10, 20, 30, 30)
    assert torch_cuda.counters_from_stats({"allocated_bytes": {"all": {"current": 5}}}) == (5, None, None, None)
    assert torch_cuda.counters_from_stats(nested_stats(allocated=True, reserved=30, peak=20)) == (None, 20, 30, 30)


@pytest.mark.skipif(REAL_TORCH is None, reason="torch is not installed")
def test_the_torch_bindings_the_hooks_call_exist_under_their_names() -> None:
    # Only looked up, never called: there is no GPU here. A rename in torch
    # would silently send every call through the slower public wrappers.
    allocator = torch_cuda._bound(REAL_TORCH)
    try:
        assert allocator.stats is REAL_TORCH._C._cuda_memoryStats
        assert allocator.reset_peaks is REAL_TORCH._C._cuda_resetPeakMemoryStats
        assert allocator.has_context is REAL_TORCH._C._cuda_hasPrimaryContext
    finally:
        torch_cuda._allocator = None


def test_half_imported_torch_is_not_initialized(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))  # no .cuda yet
    t = torch_cuda.loaded_torch()
    assert torch_cuda.torch_state(t) == {"imported": True, "cuda_initialized": False}


def test_torch_stats_come_from_the_c_binding_where_torch_has_it(fake_torch) -> None:
    # The wrapper's own checks cost a third of each read; the helper has made them.
    fake_torch.initialized = True
    fake_torch.stats[0] = nested_stats(allocated=7, reserved=9, peak=8)
    direct: list[int] = []

    def memory_stats(index: int) -> Any:
        direct.append(index)
        return fake_torch.stats[index]

    fake_torch._C._cuda_memoryStats = memory_stats
    assert read_initialized_device(fake_torch, 0)["allocated_bytes"] == 7
    assert torch_cuda.allocator_counters(fake_torch, 0) == (7, 8, 9, 9)
    assert direct == [0, 0] and fake_torch.calls == [("_cuda_hasPrimaryContext", 0)]
