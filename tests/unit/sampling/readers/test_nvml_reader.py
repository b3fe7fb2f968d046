"""The NVML reader: pynvml absent or failing (its deprecation warning silenced), device and
process figures cached, process lists gone stale or never naming this process, per-GPU failures,
bogus pids, and attributing usage to this process."""

import os
import sys
from typing import Any

from fakes import NVML_ERROR_NO_PERMISSION, FakeGpu, FakePynvml

from jupyterlab_vram_helper.protocol_types import NvmlGpuFigures
from jupyterlab_vram_helper.sampling.readers.nvml import (
    MAX_PROCESSES,
    MEMORY_REUSE_S,
    PROCESS_LIST_STALE_BYTES,
    UNNAMED_RETRY_S,
    NvmlReader,
    _pid_exists,
    attribute_to_pid,
    process_list,
)


def read(reader: NvmlReader, device: Any, **options: Any) -> NvmlGpuFigures:
    """``reader.read(device, ...)``, which every reading here expects to answer (None fails the test)."""
    figures = reader.read(device, **options)
    assert figures is not None
    return figures


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
    assert read(r, d0) == {
        "used_bytes": 1 << 30,
        "total_bytes": 80 << 30,
        "free_bytes": (80 << 30) - (1 << 30),
        "process_used_bytes": 500,
        "processes": [
            {"pid": 4242, "used_bytes": 500, "this_process": True},
            {"pid": 1, "used_bytes": 10, "this_process": False},
        ],
    }
    assert read(r, d1)["process_used_bytes"] == 0 and read(r, d1)["processes"] == []
    two_gpus[0].processes = [(4242, 900)]
    now[0] += 4.9
    assert read(r, d0)["process_used_bytes"] == 500  # cached: the process list is slow
    assert fake_pynvml.calls.count("processes") == 2
    now[0] += 0.2
    assert read(r, d0)["process_used_bytes"] == 900
    r.shutdown()
    assert fake_pynvml.calls[-1] == "nvmlShutdown"


def test_a_process_list_goes_stale_when_the_device_memory_moves(fake_pynvml, two_gpus) -> None:
    # The kernel initialises CUDA right after a list showed nothing: its context
    # moves the device's used memory, and the next read lists again at once.
    now = [100.0]
    r = NvmlReader(pid=4242, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True)
    r.start()
    d0, _ = r.devices()
    assert read(r, d0)["process_used_bytes"] == 0
    two_gpus[0].processes = [(4242, 500 << 20)]
    two_gpus[0].used += PROCESS_LIST_STALE_BYTES - 1
    now[0] += 1
    assert read(r, d0)["process_used_bytes"] == 0  # a small move: the cache stands
    two_gpus[0].used += 1
    assert read(r, d0)["process_used_bytes"] == 500 << 20
    assert fake_pynvml.calls.count("processes") == 2
    # Asked for fresh figures (a snapshot): listed again although nothing moved.
    two_gpus[0].processes = [(4242, 600 << 20)]
    assert read(r, d0)["process_used_bytes"] == 500 << 20
    assert read(r, d0, fresh_processes=True)["process_used_bytes"] == 600 << 20


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
    assert read(r, d0, own_state=mine)["used_bytes"] == 1 << 30
    two_gpus[0].used += 300 << 20  # another process allocates
    now[0] += 0.1
    assert read(r, d0, own_state=mine)["used_bytes"] == 1 << 30  # 0.1 s old: given again
    assert reads() == start + 1
    now[0] += 0.1
    assert read(r, d0, own_state=mine)["used_bytes"] == (1 << 30) + (300 << 20)  # 0.2 s old: read
    assert reads() == start + 2
    # The kernel's own state moved (torch reserved more): read at once.
    two_gpus[0].used += 64 << 20
    now[0] += 0.01
    assert read(r, d0, own_state=("context", 66 << 20, None))["used_bytes"] == (1 << 30) + (364 << 20)
    # A snapshot the user asked for: read at once.
    two_gpus[0].used += 1 << 20
    now[0] += 0.01
    assert read(r, d0, fresh_processes=True, own_state=("context", 66 << 20, None))["used_bytes"] == (1 << 30) + (
        365 << 20
    )
    # Each device on its own; a caller that passes no state gets a read every time.
    assert read(r, d1, own_state=mine)["used_bytes"] == 2 << 30
    before = reads()
    read(r, d0)
    read(r, d0)
    assert reads() == before + 2


def test_a_list_that_never_names_this_process_is_read_less_and_less_often(fake_pynvml, two_gpus) -> None:
    # Where NVML never names the kernel although torch holds memory there, the
    # list was read again at every tick: a driver call per tick, for good.
    assert UNNAMED_RETRY_S == 0.25  # the times below are exact binary fractions
    now = [100.0]
    r = NvmlReader(
        pid=4242, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True, process_refresh_s=5.0
    )
    r.start()
    d0, _ = r.devices()
    two_gpus[0].processes = [(1, 300 << 20)]  # another process; never this one
    assert read(r, d0)["process_used_bytes"] == 0  # no memory held here yet: provably 0
    assert fake_pynvml.calls.count("processes") == 1
    listed_at = []
    for tick in range(1, 161):  # 20 s at 8 Hz, torch holding memory from the first tick
        now[0] = 100.0 + tick * 0.125
        before = fake_pynvml.calls.count("processes")
        figures = read(r, d0, holds_memory=True)
        assert figures["process_used_bytes"] is None  # unknown, never 0
        assert figures["processes"] == [{"pid": 1, "used_bytes": 300 << 20, "this_process": False}]
        if fake_pynvml.calls.count("processes") > before:
            listed_at.append(now[0] - 100.0)
    # At once (the list predates the memory), then after 0.25, 0.5, 1, 2, 4 s, then every 5 s.
    assert listed_at == [0.125, 0.375, 0.875, 1.875, 3.875, 7.875, 12.875, 17.875]

    # Named at last: the figure shows at the next retry and stands for process_refresh_s.
    two_gpus[0].processes = [(4242, 500 << 20), (1, 300 << 20)]
    now[0] = 100.0 + 22.875
    assert read(r, d0, holds_memory=True)["process_used_bytes"] == 500 << 20
    now[0] += 4.875
    assert read(r, d0, holds_memory=True)["process_used_bytes"] == 500 << 20
    assert fake_pynvml.calls.count("processes") == 10

    # Unnamed again later (say NVML drops it): the retries start again from the shortest.
    two_gpus[0].processes = [(1, 300 << 20)]
    now[0] += 0.25
    assert read(r, d0, holds_memory=True)["process_used_bytes"] is None
    now[0] += UNNAMED_RETRY_S
    two_gpus[0].processes = [(4242, 510 << 20)]
    assert read(r, d0, holds_memory=True)["process_used_bytes"] == 510 << 20
    assert fake_pynvml.calls.count("processes") == 12


def test_while_a_list_does_not_name_this_process_a_move_or_a_request_still_lists_at_once(fake_pynvml, two_gpus) -> None:
    now = [100.0]
    r = NvmlReader(pid=4242, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True)
    r.start()
    d0, _ = r.devices()
    assert read(r, d0, holds_memory=True)["process_used_bytes"] is None  # the first list: retry in 0.25 s
    now[0] += 0.125
    two_gpus[0].used += PROCESS_LIST_STALE_BYTES  # memory moved: listed now, not at the retry
    two_gpus[0].processes = [(4242, 600 << 20)]
    assert read(r, d0, holds_memory=True)["process_used_bytes"] == 600 << 20
    assert fake_pynvml.calls.count("processes") == 2
    two_gpus[0].processes = []
    assert read(r, d0, fresh_processes=True, holds_memory=True)["process_used_bytes"] is None  # a request
    two_gpus[0].processes = [(4242, 610 << 20)]
    assert read(r, d0, fresh_processes=True, holds_memory=True)["process_used_bytes"] == 610 << 20
    assert fake_pynvml.calls.count("processes") == 4


def test_a_list_that_fails_during_the_retries_is_unknown_until_the_refresh(fake_pynvml, two_gpus) -> None:
    now = [100.0]
    r = NvmlReader(pid=4242, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True)
    r.start()
    d0, _ = r.devices()
    assert read(r, d0, holds_memory=True)["process_used_bytes"] is None  # unnamed: retry in 0.25 s
    listing = fake_pynvml.nvmlDeviceGetComputeRunningProcesses

    def failing(handle):
        fake_pynvml.calls.append("processes")
        raise RuntimeError("NVML_ERROR_UNKNOWN")

    fake_pynvml.nvmlDeviceGetComputeRunningProcesses = failing
    now[0] += 0.25
    assert read(r, d0, holds_memory=True)["processes"] is None  # the retry failed: nothing known
    fake_pynvml.nvmlDeviceGetComputeRunningProcesses = listing
    two_gpus[0].processes = [(4242, 500 << 20)]
    now[0] += 4.875
    assert read(r, d0, holds_memory=True)["process_used_bytes"] is None  # a failure stands for the refresh
    now[0] += 0.125
    assert read(r, d0, holds_memory=True)["process_used_bytes"] == 500 << 20
    assert fake_pynvml.calls.count("processes") == 3


def test_the_first_retry_is_no_later_than_the_refresh(fake_pynvml, two_gpus) -> None:
    now = [100.0]
    r = NvmlReader(
        pid=4242, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True, process_refresh_s=0.125
    )
    r.start()
    d0, _ = r.devices()
    assert read(r, d0, holds_memory=True)["process_used_bytes"] is None
    now[0] += 0.125
    assert read(r, d0, holds_memory=True)["process_used_bytes"] is None
    assert fake_pynvml.calls.count("processes") == 2


def test_device_used_memory_leaves_out_the_drivers_reservation_like_nvidia_smi(two_gpus) -> None:
    two_gpus[0].driver_reserved = 480 << 20
    for memory_v2, used in ((True, 1 << 30), (False, (1 << 30) + (480 << 20))):
        fake = FakePynvml(two_gpus, memory_v2=memory_v2)
        # start() calls load in this very iteration, so the late binding B023 warns of is harmless.
        r = NvmlReader(pid=4242, load=lambda: fake, pid_exists=lambda p: True)  # noqa: B023
        r.start()
        figures = read(r, r.devices()[0])
        assert (figures["used_bytes"], figures["total_bytes"]) == (used, 80 << 30)


def test_a_passing_failure_of_one_gpu_does_not_switch_every_gpu_to_v1(two_gpus) -> None:
    for gpu in two_gpus:
        gpu.driver_reserved = 480 << 20
    fake = FakePynvml(two_gpus)
    r = NvmlReader(pid=4242, load=lambda: fake, pid_exists=lambda p: True)
    r.start()
    first, second = r.devices()
    two_gpus[1].memory_failures = 1  # GPU_IS_LOST, once
    assert read(r, second)["used_bytes"] is None  # unknown this once
    # v2 goes on, for both: no step of the driver's reservation into "used"
    assert read(r, first)["used_bytes"] == two_gpus[0].used
    assert read(r, second)["used_bytes"] == two_gpus[1].used


def test_a_gpu_the_process_may_not_open_leaves_the_others_readable() -> None:
    """Slurm's ConstrainDevices: NVML counts every GPU of the node, and refuses some handles."""
    gpus = [
        FakeGpu(f"GPU-{i}", "NVIDIA A100", 40 << 30, i << 30, handle_error=NVML_ERROR_NO_PERMISSION if i < 2 else None)
        for i in range(4)
    ]
    r = NvmlReader(pid=4242, load=lambda: FakePynvml(gpus), pid_exists=lambda p: True)
    r.start()
    assert [d.nvml_index for d in r.devices()] == [2, 3]  # their own NVML indices
    assert read(r, r.devices()[0])["used_bytes"] == 2 << 30
    info = r.info()
    error = info["error"]
    assert info["available"] is True and error is not None
    assert "device 0" in error and "Insufficient Permissions" in error


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
    figures = read(r, r.devices()[0], fresh_processes=True)
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


def test_deprecated_pynvml_package_warning_is_silenced(tmp_path, monkeypatch) -> None:
    import warnings

    from jupyterlab_vram_helper.sampling.readers import nvml

    (tmp_path / "pynvml.py").write_text(
        "import warnings\nwarnings.warn('The pynvml package is deprecated.', FutureWarning)\nMARK = 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "pynvml", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning reaching the kernel's output would raise here
        module = nvml._import_pynvml()
    assert module.MARK == 1
