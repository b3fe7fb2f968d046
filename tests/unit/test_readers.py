import os
import sys
import types

import pytest

try:  # the real one, imported before the fixtures hide torch from the helper
    import torch as REAL_TORCH
except ImportError:
    REAL_TORCH = None

from fakes import NVML_ERROR_NO_PERMISSION, FakeGpu, FakePynvml, nested_stats, set_allocator
from jupyterlab_vram_helper.readers import tensorflow as tf_reader
from jupyterlab_vram_helper.readers import torch_cuda
from jupyterlab_vram_helper.readers.host import HostReader
from jupyterlab_vram_helper.sample import SampleSource
from jupyterlab_vram_helper.readers.nvml import (
    MAX_PROCESSES,
    MEMORY_REUSE_S,
    PROCESS_LIST_STALE_BYTES,
    UNNAMED_RETRY_S,
    NvmlReader,
    _pid_exists,
    attribute_to_pid,
    process_list,
)


# --- torch -----------------------------------------------------------------


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
        "allocated_bytes": 0, "reserved_bytes": 0, "peak_allocated_bytes": 0, "active_bytes": 0,
        "inactive_split_bytes": 0, "num_ooms": 0, "num_alloc_retries": 0,
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
    assert torch_cuda.cell_allocators(fake_torch).indices == ()
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


# --- NVML ------------------------------------------------------------------


def test_nvml_not_installed() -> None:
    def load():
        raise ImportError("No module named 'pynvml'")

    r = NvmlReader(load=load)
    r.start()
    assert r.info() == {"available": False, "driver_version": None, "error": "pynvml is not installed"}
    assert r.devices() == []


def test_nvml_init_failure_is_reported_once() -> None:
    fake = FakePynvml([], init_error="Driver Not Loaded")
    r = NvmlReader(load=lambda: fake)
    r.start()
    r.start()
    assert fake.calls == ["nvmlInit"]
    assert r.info()["error"] == "nvmlInit failed: Driver Not Loaded"
    assert not r.available


def test_nvml_devices_and_process_usage_cached(fake_pynvml, two_gpus) -> None:
    now = [100.0]
    two_gpus[0].processes = [(4242, 500), (1, 10)]
    r = NvmlReader(pid=4242, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True)
    r.start()
    assert r.info() == {"available": True, "driver_version": "550.54.15", "error": None}
    d0, d1 = r.devices()
    assert (d0.uuid, d0.name, d0.total_bytes) == ("GPU-aaaa-1111", "NVIDIA H100 80GB HBM3", 80 << 30)
    assert r.read(d0) == {
        "used_bytes": 1 << 30, "total_bytes": 80 << 30, "free_bytes": (80 << 30) - (1 << 30),
        "process_used_bytes": 500,
        "processes": [{"pid": 4242, "used_bytes": 500, "this_process": True},
                      {"pid": 1, "used_bytes": 10, "this_process": False}],
    }
    assert r.read(d1)["process_used_bytes"] == 0 and r.read(d1)["processes"] == []
    two_gpus[0].processes = [(4242, 900)]
    now[0] += 4.9
    assert r.read(d0)["process_used_bytes"] == 500  # cached: the process list is slow
    assert fake_pynvml.calls.count("processes") == 2
    now[0] += 0.2
    assert r.read(d0)["process_used_bytes"] == 900
    r.shutdown()
    assert fake_pynvml.calls[-1] == "nvmlShutdown"


def test_a_process_list_goes_stale_when_the_device_memory_moves(fake_pynvml, two_gpus) -> None:
    # The kernel initialises CUDA right after a list showed nothing: its context
    # moves the device's used memory, and the next read lists again at once.
    now = [100.0]
    r = NvmlReader(pid=4242, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True)
    r.start()
    d0, _ = r.devices()
    assert r.read(d0)["process_used_bytes"] == 0
    two_gpus[0].processes = [(4242, 500 << 20)]
    two_gpus[0].used += (PROCESS_LIST_STALE_BYTES - 1)
    now[0] += 1
    assert r.read(d0)["process_used_bytes"] == 0  # a small move: the cache stands
    two_gpus[0].used += 1
    assert r.read(d0)["process_used_bytes"] == 500 << 20
    assert fake_pynvml.calls.count("processes") == 2
    # Asked for fresh figures (a snapshot): listed again although nothing moved.
    two_gpus[0].processes = [(4242, 600 << 20)]
    assert r.read(d0)["process_used_bytes"] == 500 << 20
    assert r.read(d0, fresh_processes=True)["process_used_bytes"] == 600 << 20


def test_memory_figures_are_given_again_while_the_callers_own_state_stands_still(fake_pynvml, two_gpus) -> None:
    # The driver call costs ~120 us with the caches cold: at 10 Hz every other
    # tick reads it while the kernel's own memory stands still.
    assert MEMORY_REUSE_S == 0.15
    now = [100.0]
    r = NvmlReader(pid=4242, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True)
    r.start()
    d0, d1 = r.devices()
    mine = ("context", 2 << 20, None)
    reads = lambda: fake_pynvml.calls.count("memory")  # noqa: E731
    start = reads()
    assert r.read(d0, own_state=mine)["used_bytes"] == 1 << 30
    two_gpus[0].used += 300 << 20  # another process allocates
    now[0] += 0.1
    assert r.read(d0, own_state=mine)["used_bytes"] == 1 << 30  # 0.1 s old: given again
    assert reads() == start + 1
    now[0] += 0.1
    assert r.read(d0, own_state=mine)["used_bytes"] == (1 << 30) + (300 << 20)  # 0.2 s old: read
    assert reads() == start + 2
    # The kernel's own state moved (torch reserved more): read at once.
    two_gpus[0].used += 64 << 20
    now[0] += 0.01
    assert r.read(d0, own_state=("context", 66 << 20, None))["used_bytes"] == (1 << 30) + (364 << 20)
    # A snapshot the user asked for: read at once.
    two_gpus[0].used += 1 << 20
    now[0] += 0.01
    assert r.read(d0, fresh_processes=True, own_state=("context", 66 << 20, None))["used_bytes"] == (1 << 30) + (365 << 20)
    # Each device on its own; a caller that passes no state gets a read every time.
    assert r.read(d1, own_state=mine)["used_bytes"] == 2 << 30
    before = reads()
    r.read(d0)
    r.read(d0)
    assert reads() == before + 2


def test_a_list_that_never_names_this_process_is_read_less_and_less_often(fake_pynvml, two_gpus) -> None:
    # Where NVML never names the kernel although torch holds memory there, the
    # list was read again at every tick: a driver call per tick, for good.
    assert UNNAMED_RETRY_S == 0.25  # the times below are exact binary fractions
    now = [100.0]
    r = NvmlReader(pid=4242, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True,
                   process_refresh_s=5.0)
    r.start()
    d0, _ = r.devices()
    two_gpus[0].processes = [(1, 300 << 20)]  # another process; never this one
    assert r.read(d0)["process_used_bytes"] == 0  # no memory held here yet: provably 0
    assert fake_pynvml.calls.count("processes") == 1
    listed_at = []
    for tick in range(1, 161):  # 20 s at 8 Hz, torch holding memory from the first tick
        now[0] = 100.0 + tick * 0.125
        before = fake_pynvml.calls.count("processes")
        figures = r.read(d0, holds_memory=True)
        assert figures["process_used_bytes"] is None  # unknown, never 0
        assert figures["processes"] == [{"pid": 1, "used_bytes": 300 << 20, "this_process": False}]
        if fake_pynvml.calls.count("processes") > before:
            listed_at.append(now[0] - 100.0)
    # At once (the list predates the memory), then after 0.25, 0.5, 1, 2, 4 s, then every 5 s.
    assert listed_at == [0.125, 0.375, 0.875, 1.875, 3.875, 7.875, 12.875, 17.875]

    # Named at last: the figure shows at the next retry and stands for process_refresh_s.
    two_gpus[0].processes = [(4242, 500 << 20), (1, 300 << 20)]
    now[0] = 100.0 + 22.875
    assert r.read(d0, holds_memory=True)["process_used_bytes"] == 500 << 20
    now[0] += 4.875
    assert r.read(d0, holds_memory=True)["process_used_bytes"] == 500 << 20
    assert fake_pynvml.calls.count("processes") == 10

    # Unnamed again later (say NVML drops it): the retries start again from the shortest.
    two_gpus[0].processes = [(1, 300 << 20)]
    now[0] += 0.25
    assert r.read(d0, holds_memory=True)["process_used_bytes"] is None
    now[0] += UNNAMED_RETRY_S
    two_gpus[0].processes = [(4242, 510 << 20)]
    assert r.read(d0, holds_memory=True)["process_used_bytes"] == 510 << 20
    assert fake_pynvml.calls.count("processes") == 12


def test_while_a_list_does_not_name_this_process_a_move_or_a_request_still_lists_at_once(
    fake_pynvml, two_gpus
) -> None:
    now = [100.0]
    r = NvmlReader(pid=4242, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True)
    r.start()
    d0, _ = r.devices()
    assert r.read(d0, holds_memory=True)["process_used_bytes"] is None  # the first list: retry in 0.25 s
    now[0] += 0.125
    two_gpus[0].used += PROCESS_LIST_STALE_BYTES  # memory moved: listed now, not at the retry
    two_gpus[0].processes = [(4242, 600 << 20)]
    assert r.read(d0, holds_memory=True)["process_used_bytes"] == 600 << 20
    assert fake_pynvml.calls.count("processes") == 2
    two_gpus[0].processes = []
    assert r.read(d0, fresh_processes=True, holds_memory=True)["process_used_bytes"] is None  # a request
    two_gpus[0].processes = [(4242, 610 << 20)]
    assert r.read(d0, fresh_processes=True, holds_memory=True)["process_used_bytes"] == 610 << 20
    assert fake_pynvml.calls.count("processes") == 4


def test_a_list_that_fails_during_the_retries_is_unknown_until_the_refresh(fake_pynvml, two_gpus) -> None:
    now = [100.0]
    r = NvmlReader(pid=4242, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True)
    r.start()
    d0, _ = r.devices()
    assert r.read(d0, holds_memory=True)["process_used_bytes"] is None  # unnamed: retry in 0.25 s
    listing = fake_pynvml.nvmlDeviceGetComputeRunningProcesses

    def failing(handle):
        fake_pynvml.calls.append("processes")
        raise RuntimeError("NVML_ERROR_UNKNOWN")

    fake_pynvml.nvmlDeviceGetComputeRunningProcesses = failing
    now[0] += 0.25
    assert r.read(d0, holds_memory=True)["processes"] is None  # the retry failed: nothing known
    fake_pynvml.nvmlDeviceGetComputeRunningProcesses = listing
    two_gpus[0].processes = [(4242, 500 << 20)]
    now[0] += 4.875
    assert r.read(d0, holds_memory=True)["process_used_bytes"] is None  # a failure stands for the refresh
    now[0] += 0.125
    assert r.read(d0, holds_memory=True)["process_used_bytes"] == 500 << 20
    assert fake_pynvml.calls.count("processes") == 3


def test_the_first_retry_is_no_later_than_the_refresh(fake_pynvml, two_gpus) -> None:
    now = [100.0]
    r = NvmlReader(pid=4242, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True,
                   process_refresh_s=0.125)
    r.start()
    d0, _ = r.devices()
    assert r.read(d0, holds_memory=True)["process_used_bytes"] is None
    now[0] += 0.125
    assert r.read(d0, holds_memory=True)["process_used_bytes"] is None
    assert fake_pynvml.calls.count("processes") == 2


def test_device_used_memory_leaves_out_the_drivers_reservation_like_nvidia_smi(two_gpus) -> None:
    two_gpus[0].driver_reserved = 480 << 20
    for memory_v2, used in ((True, 1 << 30), (False, (1 << 30) + (480 << 20))):
        fake = FakePynvml(two_gpus, memory_v2=memory_v2)
        r = NvmlReader(pid=4242, load=lambda: fake, pid_exists=lambda p: True)
        r.start()
        figures = r.read(r.devices()[0])
        assert (figures["used_bytes"], figures["total_bytes"]) == (used, 80 << 30)


def test_a_passing_failure_of_one_gpu_does_not_switch_every_gpu_to_v1(two_gpus) -> None:
    for gpu in two_gpus:
        gpu.driver_reserved = 480 << 20
    fake = FakePynvml(two_gpus)
    r = NvmlReader(pid=4242, load=lambda: fake, pid_exists=lambda p: True)
    r.start()
    first, second = r.devices()
    two_gpus[1].memory_failures = 1  # GPU_IS_LOST, once
    assert r.read(second)["used_bytes"] is None  # unknown this once
    # v2 goes on, for both: no step of the driver's reservation into "used"
    assert r.read(first)["used_bytes"] == two_gpus[0].used
    assert r.read(second)["used_bytes"] == two_gpus[1].used


def test_a_gpu_the_process_may_not_open_leaves_the_others_readable() -> None:
    """Slurm's ConstrainDevices: NVML counts every GPU of the node, and refuses some handles."""
    gpus = [
        FakeGpu(f"GPU-{i}", "NVIDIA A100", 40 << 30, i << 30, handle_error=NVML_ERROR_NO_PERMISSION if i < 2 else None)
        for i in range(4)
    ]
    r = NvmlReader(pid=4242, load=lambda: FakePynvml(gpus), pid_exists=lambda p: True)
    r.start()
    assert [d.nvml_index for d in r.devices()] == [2, 3]  # their own NVML indices
    assert r.read(r.devices()[0])["used_bytes"] == 2 << 30
    info = r.info()
    assert info["available"] is True and "device 0" in info["error"] and "Insufficient Permissions" in info["error"]


def test_bogus_pids_in_nvmls_process_list_leave_the_kernels_figure_unknown() -> None:
    """A driver and bindings that disagree on the struct list pids such as 0 and 2**32 - 1."""
    assert _pid_exists(0) is False and _pid_exists(-1) is False
    assert _pid_exists(3221225472) is False and _pid_exists(2**32 - 1) is False
    assert _pid_exists(os.getpid()) is True
    listed = [(1, 1 << 30), (3221225472, 123), (0, 5)]
    assert attribute_to_pid(listed, os.getpid(), _pid_exists) is None  # not provably 0
    gpu = FakeGpu("GPU-0", "NVIDIA H100", 80 << 30, 1 << 30, processes=listed)
    r = NvmlReader(load=lambda: FakePynvml([gpu]))
    r.start()
    figures = r.read(r.devices()[0], fresh_processes=True)
    assert figures["used_bytes"] == 1 << 30 and figures["process_used_bytes"] is None


def test_process_list_merges_pids_largest_first_and_bounds_the_list() -> None:
    listed = [(5, 100), (7, 300), (5, 50), (9, None), (11, 2**64 - 1)]
    assert process_list(listed, 7) == [
        {"pid": 7, "used_bytes": 300, "this_process": True},
        {"pid": 5, "used_bytes": 150, "this_process": False},
        {"pid": 9, "used_bytes": None, "this_process": False},
        {"pid": 11, "used_bytes": None, "this_process": False},
    ]
    assert len(process_list([(p, p) for p in range(1000)], 1)) == MAX_PROCESSES


def test_attribute_to_pid() -> None:
    exists = {1, 2}.__contains__
    assert attribute_to_pid([(7, 10), (7, 5)], 7, exists) == 15
    assert attribute_to_pid([], 7, exists) == 0
    assert attribute_to_pid([(1, 10)], 7, exists) == 0  # visible pids, we have none
    assert attribute_to_pid([(99999, 10)], 7, exists) is None  # host pids (container)
    assert attribute_to_pid([(7, None)], 7, exists) is None
    assert attribute_to_pid([(7, 2**64 - 1)], 7, exists) is None


# --- host ------------------------------------------------------------------


def test_host_psutil_without_proc(tmp_path) -> None:
    pytest.importorskip("psutil")
    r = HostReader(proc_root=str(tmp_path / "no-proc-here"))
    assert r.backend == "psutil"
    figures = r.read()
    assert figures["rss_bytes"] > 1 << 20
    assert 0 < figures["available_bytes"] <= figures["total_bytes"]


def test_host_proc_fallback(tmp_path) -> None:
    (tmp_path / "123").mkdir()
    (tmp_path / "123" / "statm").write_text("1000 250 30 1 0 100 0\n")
    (tmp_path / "meminfo").write_text("MemTotal:       16000 kB\nMemFree:  100 kB\nMemAvailable:    8000 kB\n")
    r = HostReader(pid=123, proc_root=str(tmp_path), use_psutil=False)
    assert r.backend == "proc"
    import os

    assert r.read() == {"rss_bytes": 250 * os.sysconf("SC_PAGE_SIZE"), "total_bytes": 16000 * 1024, "available_bytes": 8000 * 1024, "container": None,
                        # a meminfo without swap lines and no status file: unknown, not 0; no vmstat either
                        "swapped_bytes": None, "swap_total_bytes": None, "swap_free_bytes": None,
                        "oom_kill_count": None}


def test_host_machine_figures_are_read_at_most_once_a_second(tmp_path) -> None:
    (tmp_path / "5").mkdir()
    (tmp_path / "5" / "statm").write_text("1000 250 30 1 0 100 0\n")
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16000 kB\nMemFree:  100 kB\nMemAvailable:    8000 kB\n")
    now = [10.0]
    r = HostReader(pid=5, proc_root=str(tmp_path), use_psutil=False, clock=lambda: now[0])
    assert r.read()["available_bytes"] == 8000 * 1024
    meminfo.write_text("MemTotal:       16000 kB\nMemFree:  100 kB\nMemAvailable:    6000 kB\n")
    (tmp_path / "5" / "statm").write_text("1000 260 30 1 0 100 0\n")
    now[0] += 0.9
    figures = r.read()
    assert figures["available_bytes"] == 8000 * 1024  # within the second: as read before
    assert figures["rss_bytes"] == 260 * __import__("os").sysconf("SC_PAGE_SIZE")  # the kernel's own: every time
    now[0] += 0.1
    assert r.read()["available_bytes"] == 6000 * 1024


def test_host_unreadable_is_null(tmp_path) -> None:
    r = HostReader(pid=1, proc_root=str(tmp_path), use_psutil=False)
    assert r.read() == {"rss_bytes": None, "total_bytes": None, "available_bytes": None, "container": None,
                        "swapped_bytes": None, "swap_total_bytes": None, "swap_free_bytes": None,
                        "oom_kill_count": None}


def test_real_proc_matches_psutil() -> None:
    psutil = pytest.importorskip("psutil")
    if not __import__("os").path.exists("/proc/self/statm"):
        pytest.skip("no /proc")
    reader = HostReader()
    assert reader.backend == "proc"  # /proc wins where it exists: far cheaper per tick
    proc = reader.read()
    assert abs(proc["rss_bytes"] - psutil.Process().memory_info().rss) < 32 << 20
    assert proc["total_bytes"] == psutil.virtual_memory().total
    assert abs(proc["available_bytes"] - psutil.virtual_memory().available) < 256 << 20
    reader.close()
    assert reader.read() == {"rss_bytes": None, "total_bytes": None, "available_bytes": None, "container": None,
                             "swapped_bytes": None, "swap_total_bytes": None, "swap_free_bytes": None,
                             "oom_kill_count": None}


# --- TensorFlow --------------------------------------------------------------


def test_tensorflow_absent_or_not_initialised(monkeypatch) -> None:
    assert tf_reader.tensorflow_info(None) is None
    tf = types.ModuleType("tensorflow")
    tf.__version__ = "2.17.0"
    monkeypatch.setitem(sys.modules, "tensorflow", tf)
    assert tf_reader.tensorflow_info(tf) == {"version": "2.17.0", "gpus_initialized": False}
    ctx_mod = types.ModuleType("tensorflow.python.eager.context")
    ctx_mod._context = None  # never created
    monkeypatch.setitem(sys.modules, "tensorflow.python.eager.context", ctx_mod)
    assert tf_reader.gpus_initialized() is False
    ctx_mod._context = types.SimpleNamespace(_context_handle=None)  # created, not initialised
    assert tf_reader.gpus_initialized() is False
    assert tf_reader.read_gpus(tf) == {}


def test_tensorflow_initialised_reads_memory_info(monkeypatch) -> None:
    tf = types.ModuleType("tensorflow")
    asked = []

    def get_memory_info(name):
        asked.append(name)
        return {"current": 10, "peak": 20}

    tf.config = types.SimpleNamespace(experimental=types.SimpleNamespace(get_memory_info=get_memory_info))
    ctx_mod = types.ModuleType("tensorflow.python.eager.context")
    ctx_mod._context = types.SimpleNamespace(
        _context_handle=object(),
        list_logical_devices=lambda kind: [types.SimpleNamespace(name="/job:localhost/replica:0/task:0/device:GPU:1")],
    )
    monkeypatch.setitem(sys.modules, "tensorflow", tf)
    monkeypatch.setitem(sys.modules, "tensorflow.python.eager.context", ctx_mod)
    assert tf_reader.read_gpus(tf) == {1: {"current_bytes": 10, "peak_bytes": 20}}
    assert asked == ["GPU:1"]


def test_deprecated_pynvml_package_warning_is_silenced(tmp_path, monkeypatch) -> None:
    import warnings

    from jupyterlab_vram_helper.readers import nvml

    (tmp_path / "pynvml.py").write_text(
        "import warnings\nwarnings.warn('The pynvml package is deprecated.', FutureWarning)\nMARK = 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "pynvml", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning reaching the kernel's output would raise here
        module = nvml._import_pynvml()
    assert module.MARK == 1


def test_torch_stats_come_from_the_c_binding_where_torch_has_it(fake_torch) -> None:
    # The wrapper's own checks cost a third of each read; the helper has made them.
    fake_torch.initialized = True
    fake_torch.stats[0] = nested_stats(allocated=7, reserved=9, peak=8)
    direct = []
    fake_torch._C._cuda_memoryStats = lambda index: direct.append(index) or fake_torch.stats[index]
    assert read_initialized_device(fake_torch, 0)["allocated_bytes"] == 7
    assert torch_cuda.allocator_counters(fake_torch, 0) == (7, 8, 9, 9)
    assert direct == [0, 0] and fake_torch.calls == [("_cuda_hasPrimaryContext", 0)]
