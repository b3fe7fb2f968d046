"""The messages the helper sends, as TypedDicts: for type checkers only.

docs/protocol.md is the specification; src/*Protocol.ts read these shapes on
the other side. The helper never imports this module at run time (only under
``typing.TYPE_CHECKING``): creating two dozen TypedDicts, each of whose string
annotations typing compiles, cost every kernel start several milliseconds of
its bootstrap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypedDict

from .protocol import CellStatus, ErrorCode, SampleReason

if TYPE_CHECKING:  # oom_diagnosis.py defines the diagnosis; it needs nothing from here
    from .oom.oom_diagnosis import OomDiagnosis


# --- kernel -> frontend ----------------------------------------------------


class ConfigDict(TypedDict):
    interval_s: float
    change_threshold_bytes: int
    heartbeat_s: float
    reset_peak_per_cell: bool


class TorchInfo(TypedDict):
    version: str | None
    cuda_build: str | None
    cuda_initialized: bool


class TensorflowInfo(TypedDict):
    version: str | None
    gpus_initialized: bool


class NvmlInfo(TypedDict):
    available: bool
    driver_version: str | None
    error: str | None


class DeviceInfo(TypedDict):
    index: int
    name: str | None
    total_bytes: int | None
    uuid: str | None


class HiddenGpus(TypedDict):
    """The kernel sees no GPU because CUDA_VISIBLE_DEVICES hides the ones NVML lists."""

    count: int  # the GPUs NVML lists on the machine
    cuda_visible_devices: str  # the kernel's value, as set


class HelloMessage(TypedDict):
    type: Literal["hello"]
    protocol: int
    helper_version: str
    python: str
    pid: int
    hostname: str
    record_series: str  # changes whenever cell record ids start again at 1
    torch: TorchInfo | None
    tensorflow: TensorflowInfo | None
    nvml: NvmlInfo
    devices: list[DeviceInfo]
    # CUDA_VISIBLE_DEVICES names MIG instances: the devices show once CUDA starts
    devices_wait_for_cuda: bool
    hidden_gpus: HiddenGpus | None
    config: ConfigDict


class ContainerFigures(TypedDict):
    limit_bytes: int  # the tightest cgroup memory limit from the kernel's cgroup up
    usage_bytes: int | None  # that cgroup's memory.current / memory.usage_in_bytes
    # The reclaimable page cache in that usage (memory.stat inactive_file / total_inactive_file)
    inactive_file_bytes: int | None
    # oom_kill count: v2 that cgroup's memory.events (its subtree's); v1 the kernel's own cgroup's
    # memory.oom_control (v1 counts a kill in the victim's cgroup alone)
    oom_kill_count: int | None
    cgroup_version: int  # 1 or 2
    # The tightest swap limit on the kernel's cgroup path (v2 memory.swap.max; v1 memsw limit less the
    # memory limit), 0: no swap; None: no cgroup limits swap ("max", or no swap accounting), or unreadable.
    # Absent from older helpers.
    swap_limit_bytes: int | None
    # That cgroup's swap in use (v2 memory.swap.current; v1 memsw usage less memory usage); the
    # memory-limited cgroup's where none limits swap. None: unknown. Absent from older helpers.
    swap_usage_bytes: int | None


class HostFigures(TypedDict):
    rss_bytes: int | None
    total_bytes: int | None
    available_bytes: int | None
    container: ContainerFigures | None  # None: no cgroup memory limit, or one above MemTotal
    # The kernel's own pages in swap (VmSwap of /proc/<pid>/status): not in rss_bytes. Absent from older helpers.
    swapped_bytes: int | None
    # The machine's swap (/proc/meminfo SwapTotal, SwapFree; 0 and 0: no swap). Absent from older helpers.
    swap_total_bytes: int | None
    swap_free_bytes: int | None
    # The machine's OOM kill count, ever (/proc/vmstat oom_kill, Linux >= 4.13): None where unknown
    # (no such line or file, psutil). Only a rise causes a change sample. Absent from older helpers.
    oom_kill_count: int | None


class TorchState(TypedDict):
    imported: bool
    cuda_initialized: bool


class TensorflowState(TypedDict):
    imported: bool
    gpus_initialized: bool


class TorchGpuFigures(TypedDict):
    allocated_bytes: int | None
    reserved_bytes: int | None
    peak_allocated_bytes: int | None
    active_bytes: int | None
    inactive_split_bytes: int | None
    num_ooms: int | None
    num_alloc_retries: int | None


class NvmlProcess(TypedDict):
    pid: int
    used_bytes: int | None
    this_process: bool


class NvmlGpuFigures(TypedDict):
    used_bytes: int | None
    total_bytes: int | None
    # NVML's own free: total less used less the driver's reservation (v2)
    free_bytes: int | None
    process_used_bytes: int | None
    # None: NVML could not list them
    processes: list[NvmlProcess] | None


class TensorflowGpuFigures(TypedDict):
    # The two figures `tf.config.experimental.get_memory_info` returns, per card
    # (readers/tensorflow.py: a card split into logical devices adds their current bytes).
    current_bytes: int | None
    peak_bytes: int | None


class GpuFigures(TypedDict):
    index: int
    name: str | None
    total_bytes: int | None
    torch: TorchGpuFigures | None
    nvml: NvmlGpuFigures | None
    tensorflow: TensorflowGpuFigures | None


class SampleMessage(TypedDict):
    type: Literal["sample"]
    seq: int
    time: float
    reason: SampleReason
    host: HostFigures
    torch: TorchState
    tensorflow: TensorflowState
    gpus: list[GpuFigures]
    hidden_gpus: HiddenGpus | None


class CellError(TypedDict):
    type: str  # the exception's class name, e.g. "OutOfMemoryError"
    message_head: str  # the start of str(exception): cell_outcome.MESSAGE_HEAD_CHARS (1000) at most
    out_of_memory: bool


class CellHostMemory(TypedDict):
    rss_before_bytes: int | None
    rss_after_bytes: int | None
    rss_peak_bytes: int | None
    peak_exact: bool


class CellGpuMemory(TypedDict):
    index: int  # CUDA ordinal, as in samples
    allocated_before_bytes: int | None
    allocated_after_bytes: int | None
    allocated_peak_bytes: int | None
    reserved_before_bytes: int | None
    reserved_after_bytes: int | None
    reserved_peak_bytes: int | None
    peak_exact: bool


class CellMemoryRecord(TypedDict):
    record_id: int
    execution_count: int | None
    cell_id: str | None
    started: float
    duration_s: float
    status: CellStatus
    error: CellError | None
    peak_exact: bool
    host: CellHostMemory
    gpus: list[CellGpuMemory]
    # the out-of-memory assistant's diagnosis (oom_watch.py); None unless the cell died of OOM
    oom: OomDiagnosis | None


class TimelineGpuColumns(TypedDict):
    index: int  # CUDA ordinal, as in samples
    allocated_bytes: list[int | None]
    reserved_bytes: list[int | None]
    process_used_bytes: list[int | None]


class TimelineColumns(TypedDict):
    """The ``history`` reply's ``timeline``: the charted figures of the samples sent lately."""

    times: list[float]
    rss_bytes: list[int | None]
    gpus: list[TimelineGpuColumns]


class CellsMessage(TypedDict):
    type: Literal["cells"]
    records: list[CellMemoryRecord]


class ReplyMessage(TypedDict):
    type: Literal["reply"]
    request_id: str
    request_type: str
    result: dict[str, Any]


class ErrorMessage(TypedDict):
    type: Literal["error"]
    request_id: str | None
    code: ErrorCode
    message: str
