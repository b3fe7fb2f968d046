"""Fakes of torch.cuda, pynvml and the comm layer for unit tests, a polling wait, and a forked child's result."""

from __future__ import annotations

import copy
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fake_nvml_load import FakeMigInstance, LoadAnswers, LoadQueries

T = TypeVar("T")


def nested_stats(allocated: int, reserved: int, peak: int, ooms: int = 0, retries: int = 0) -> dict[str, Any]:
    return {
        "allocated_bytes": {"all": {"current": allocated, "peak": peak}},
        "reserved_bytes": {"all": {"current": reserved, "peak": reserved}},
        "active_bytes": {"all": {"current": allocated, "peak": peak}},
        "inactive_split_bytes": {"all": {"current": reserved - allocated, "peak": 0}},
        "num_ooms": ooms,
        "num_alloc_retries": retries,
    }


@dataclass
class FakeProps:
    name: str
    total_memory: int
    uuid: str


def ever_used(stats: dict[str, Any]) -> bool:
    """Whether a fake device's stats show memory allocated or reserved, now or at a peak."""
    return any(
        stats.get(name, {}).get("all", {}).get(field)
        for name in ("allocated_bytes", "reserved_bytes")
        for field in ("current", "peak")
    )


class FakeTorch(types.ModuleType):
    """A torch whose CUDA state the test controls; records every CUDA call."""

    def __init__(self, props: list[FakeProps], initialized: bool = False):
        super().__init__("torch")
        self.__version__ = "2.5.1"
        self.version = types.SimpleNamespace(cuda="12.4")
        self.calls: list[Any] = []
        self.stats: dict[int, dict[str, Any]] = {i: nested_stats(0, 0, 0) for i in range(len(props))}
        self.initialized = initialized
        # Under "cudaMallocAsync", reading a device's stats switches to it and
        # creates its context, so the helper may read only the devices listed
        # in `contexts`.
        self.allocator_backend = "native"
        self.contexts: set = set()
        torch = self

        def is_initialized() -> bool:
            return torch.initialized

        def device_count() -> int:
            torch.calls.append(("device_count",))
            return len(props)

        def get_device_properties(i: Any) -> FakeProps:
            torch.calls.append(("get_device_properties", i))
            assert isinstance(i, int), "the helper must pass explicit device indices"
            return props[i]

        def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
            torch.calls.append(("memory_stats_as_nested_dict", device))
            assert isinstance(device, int), "the helper must pass explicit device indices"
            if not torch.initialized:
                return {}
            if torch.allocator_backend == "cudaMallocAsync":
                assert device in torch.contexts, f"cudaMallocAsync stats of device {device} would create its context"
            return copy.deepcopy(torch.stats[device])

        def reset_peak_memory_stats(device: Any = None) -> None:
            torch.calls.append(("reset_peak_memory_stats", device))
            assert isinstance(device, int) and not isinstance(device, bool), (
                "the helper must pass explicit device indices"
            )
            assert torch.initialized, "reset_peak_memory_stats before CUDA is initialised"
            if torch.allocator_backend == "cudaMallocAsync":
                assert device in torch.contexts, f"a cudaMallocAsync reset on device {device} would create its context"
            for stat in ("allocated_bytes", "reserved_bytes", "active_bytes"):
                entry = torch.stats[device][stat]["all"]
                entry["peak"] = entry["current"]

        def forbidden(name: str) -> Callable[..., Any]:
            def call(*a: Any, **k: Any) -> Any:
                raise AssertionError(f"the helper called torch.cuda.{name}, which can create a context")

            return call

        memory = types.SimpleNamespace(memory_stats_as_nested_dict=memory_stats_as_nested_dict)

        def has_primary_context(device: Any) -> bool:
            # Real torch counts the devices first, which runs cuInit before CUDA is initialised.
            torch.calls.append(("_cuda_hasPrimaryContext", device))
            # Memory on a device means a context there: allocating creates it first.
            return device in torch.contexts or ever_used(torch.stats[device])

        self._C = types.SimpleNamespace(_cuda_hasPrimaryContext=has_primary_context)
        self.cuda = types.SimpleNamespace(
            get_allocator_backend=lambda: torch.allocator_backend,
            is_initialized=is_initialized,
            device_count=device_count,
            get_device_properties=get_device_properties,
            memory=memory,
            memory_stats_as_nested_dict=memory_stats_as_nested_dict,
            reset_peak_memory_stats=reset_peak_memory_stats,
            is_available=forbidden("is_available"),
            mem_get_info=forbidden("mem_get_info"),
            init=forbidden("init"),
            current_device=forbidden("current_device"),
            memory_stats=forbidden("memory_stats"),
        )


@dataclass
class FakeGpu:
    uuid: str
    name: str
    total: int
    used: int
    # The processes on the GPU, as (pid, used) pairs.
    processes: list[Any] = field(default_factory=list)
    # What NVML's v1 "used" counts and v2, like nvidia-smi, leaves out.
    driver_reserved: int = 0
    # The NVML code that its handle is refused with, such as no permission or
    # a lost GPU.
    handle_error: int | None = None
    # How many memory queries fail (with GPU_IS_LOST) before it answers again.
    memory_failures: int = 0
    # Its answers to the load queries. With None, it answers NOT_SUPPORTED to
    # each.
    load: LoadAnswers | None = None


class FakeNvmlError(Exception):
    """As pynvml's NVMLError: the message, and the NVML return code in ``value``."""

    def __init__(self, message: str, value: int = 999) -> None:
        super().__init__(message)
        self.value = value


NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_GPU_IS_LOST = 15


class FakePynvml(LoadQueries, types.ModuleType):
    # pynvml's version tag for nvmlMemory_v2_t.
    nvmlMemory_v2 = 0x02000028

    def __init__(self, gpus: list[FakeGpu], init_error: str | None = None, memory_v2: bool = True):
        super().__init__("pynvml")
        self.gpus = gpus
        self.init_error = init_error
        # False stands for a driver older than 510, which answers the v2 query
        # with NVML_ERROR_FUNCTION_NOT_FOUND.
        self.memory_v2 = memory_v2
        self.calls: list[str] = []
        self.mig_instances: list[FakeMigInstance] = []

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> Any:
        handles: list[Any] = [*self.gpus, *self.mig_instances]
        for handle in handles:
            if handle.uuid == uuid:
                return handle
        raise FakeNvmlError("Not Found", 6)

    def nvmlDeviceGetDeviceHandleFromMigDeviceHandle(self, handle: Any) -> Any:
        if not isinstance(handle, FakeMigInstance):
            raise FakeNvmlError("Invalid Argument", 2)
        return handle.parent

    def nvmlInit(self) -> None:
        self.calls.append("nvmlInit")
        if self.init_error:
            raise FakeNvmlError(self.init_error)

    def nvmlShutdown(self) -> None:
        self.calls.append("nvmlShutdown")

    def nvmlSystemGetDriverVersion(self) -> str:
        return "550.54.15"

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, i: int) -> FakeGpu:
        gpu = self.gpus[i]
        if gpu.handle_error is not None:
            raise FakeNvmlError("Insufficient Permissions", gpu.handle_error)
        return gpu

    def nvmlDeviceGetUUID(self, h: FakeGpu) -> str:
        return h.uuid

    def nvmlDeviceGetName(self, h: FakeGpu) -> bytes:
        # Old pynvml returned bytes, so the fake does too.
        return h.name.encode()

    def nvmlDeviceGetMemoryInfo(self, h: FakeGpu, version: int | None = None) -> Any:
        """``used`` is what processes hold; v1 adds the driver's reservation to it, v2 does not."""
        self.calls.append("memory")
        if h.memory_failures > 0:
            h.memory_failures -= 1
            raise FakeNvmlError("GPU is lost", NVML_ERROR_GPU_IS_LOST)
        free = h.total - h.used - h.driver_reserved
        if version is None:
            return types.SimpleNamespace(total=h.total, used=h.used + h.driver_reserved, free=free)
        assert version == self.nvmlMemory_v2
        if not self.memory_v2:
            raise FakeNvmlError("Function Not Found", NVML_ERROR_FUNCTION_NOT_FOUND)
        return types.SimpleNamespace(total=h.total, used=h.used, free=free, reserved=h.driver_reserved)

    def nvmlDeviceGetComputeRunningProcesses(self, h: FakeGpu) -> list[Any]:
        self.calls.append("processes")
        return [types.SimpleNamespace(pid=p, usedGpuMemory=u) for p, u in h.processes]


class FakeComm:
    _count = 0

    def __init__(self, fail: bool = False, comm_id: str | None = None):
        FakeComm._count += 1
        self.comm_id = comm_id if comm_id is not None else f"comm-{FakeComm._count}"
        self.sent: list[dict[str, Any]] = []
        self.closed = False
        self.fail = fail
        self.msg_cb: Callable[[Any], None] | None = None
        self.close_cb: Callable[[Any], None] | None = None

    def send(self, data: Any = None, **_: Any) -> None:
        if self.fail:
            raise RuntimeError("socket gone")
        self.sent.append(data)

    def on_msg(self, cb: Callable[[Any], None]) -> None:
        self.msg_cb = cb

    def on_close(self, cb: Callable[[Any], None]) -> None:
        self.close_cb = cb

    def close(self) -> None:
        self.closed = True

    # The methods below act as the frontend's side of the comm.
    def deliver(self, data: Any) -> None:
        assert self.msg_cb is not None
        self.msg_cb({"content": {"comm_id": "x", "data": data}})

    def types(self) -> list[str]:
        return [m["type"] for m in self.sent]


class FakeCommManager:
    def __init__(self) -> None:
        self.targets: dict[str, Callable[..., None]] = {}

    def register_target(self, name: str, f: Callable[..., None]) -> None:
        self.targets[name] = f

    def unregister_target(self, name: str, f: Callable[..., None]) -> Callable[..., None]:
        return self.targets.pop(name)

    def open(self, data: Any, comm: FakeComm | None = None) -> FakeComm:
        comm = comm or FakeComm()
        self.targets["jupyterlab-vram"](
            comm, {"content": {"comm_id": "x", "target_name": "jupyterlab-vram", "data": data}}
        )
        return comm


def set_allocator(
    torch: FakeTorch,
    device: int,
    allocated: int,
    reserved: int,
    peak: int | None = None,
    reserved_peak: int | None = None,
) -> None:
    """Set a fake device's allocator state; peaks only ever rise, as torch's do."""
    stats = torch.stats[device]
    for stat, current, explicit in (("allocated_bytes", allocated, peak), ("reserved_bytes", reserved, reserved_peak)):
        entry = stats[stat]["all"]
        entry["current"] = current
        entry["peak"] = max(entry["peak"], current, explicit or 0)


def inner_frame(tb: types.TracebackType | None) -> types.FrameType:
    """The frame one level into a traceback: the function the test called, where the error was raised."""
    return known(known(tb).tb_next).tb_frame


def known(value: T | None) -> T:
    """``value``, which the test expects to be known: None fails the test here."""
    assert value is not None
    return value


def wait_until(predicate: Callable[[], Any], timeout: float = 5.0) -> None:
    """Poll ``predicate`` until it is true; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def in_forked_child(function: Callable[[], Any]) -> Any:
    """Run ``function`` in a forked child and return what it returned (JSON-able); the child always exits."""
    import json
    import os

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write_end, json.dumps(function()).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        # The read lasts until the child exits and closes its end.
        data = reader.read()
    os.waitpid(pid, 0)
    return json.loads(data)


class CountsFirstShell:
    """A shell whose ``run_cell_async`` counts a stored cell before ``pre_run_cell``,
    as IPython's has since late 2025 (execution_counts.py reads only its code)."""

    def __init__(self, execution_count: int = 1) -> None:
        self.execution_count = execution_count

    async def run_cell_async(self, raw_cell: str, store_history: bool = False) -> Any:
        execution_count = self.execution_count
        if store_history:
            self.execution_count += 1
        # The closure makes execution_count a cell variable, as IPython's
        # run_cell_async has it.
        return lambda: execution_count


class CountsAfterShell:
    """A shell whose ``run_cell_async`` counts a stored cell only after it ran (IPython 8)."""

    def __init__(self, execution_count: int = 1) -> None:
        self.execution_count = execution_count

    async def run_cell_async(self, raw_cell: str, store_history: bool = False) -> Any:
        result = types.SimpleNamespace(execution_count=self.execution_count)
        if store_history:
            self.execution_count += 1
        return result
