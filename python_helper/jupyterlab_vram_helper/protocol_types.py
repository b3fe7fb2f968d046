"""The messages the helper sends, as TypedDicts: for type checkers only.

docs/protocol.md is the specification; src/*Protocol.ts read these shapes on
the other side. The helper never imports this module at run time (only under
``typing.TYPE_CHECKING``): creating two dozen TypedDicts, each of whose string
annotations typing compiles, cost every kernel start several milliseconds of
its bootstrap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Literal, Optional, TypedDict

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
    version: Optional[str]
    cuda_build: Optional[str]
    cuda_initialized: bool


class TensorflowInfo(TypedDict):
    version: Optional[str]
    gpus_initialized: bool


class NvmlInfo(TypedDict):
    available: bool
    driver_version: Optional[str]
    error: Optional[str]


class DeviceInfo(TypedDict):
    index: int
    name: Optional[str]
    total_bytes: Optional[int]
    uuid: Optional[str]


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
    torch: Optional[TorchInfo]
    tensorflow: Optional[TensorflowInfo]
    nvml: NvmlInfo
    devices: List[DeviceInfo]
    # CUDA_VISIBLE_DEVICES names MIG instances: the devices show once CUDA starts
    devices_wait_for_cuda: bool
    hidden_gpus: Optional[HiddenGpus]
    config: ConfigDict


class ContainerFigures(TypedDict):
    limit_bytes: int  # the tightest cgroup memory limit from the kernel's cgroup up
    usage_bytes: Optional[int]  # that cgroup's memory.current / memory.usage_in_bytes
    # The reclaimable page cache in that usage (memory.stat inactive_file / total_inactive_file)
    inactive_file_bytes: Optional[int]
    # oom_kill count: v2 that cgroup's memory.events (its subtree's); v1 the kernel's own cgroup's
    # memory.oom_control (v1 counts a kill in the victim's cgroup alone)
    oom_kill_count: Optional[int]
    cgroup_version: int  # 1 or 2
    # The tightest swap limit on the kernel's cgroup path (v2 memory.swap.max; v1 memsw limit less the
    # memory limit), 0: no swap; None: no cgroup limits swap ("max", or no swap accounting), or unreadable.
    # Absent from older helpers.
    swap_limit_bytes: Optional[int]
    # That cgroup's swap in use (v2 memory.swap.current; v1 memsw usage less memory usage); the
    # memory-limited cgroup's where none limits swap. None: unknown. Absent from older helpers.
    swap_usage_bytes: Optional[int]


class HostFigures(TypedDict):
    rss_bytes: Optional[int]
    total_bytes: Optional[int]
    available_bytes: Optional[int]
    container: Optional[ContainerFigures]  # None: no cgroup memory limit, or one above MemTotal
    # The kernel's own pages in swap (VmSwap of /proc/<pid>/status): not in rss_bytes. Absent from older helpers.
    swapped_bytes: Optional[int]
    # The machine's swap (/proc/meminfo SwapTotal, SwapFree; 0 and 0: no swap). Absent from older helpers.
    swap_total_bytes: Optional[int]
    swap_free_bytes: Optional[int]
    # The machine's OOM kill count, ever (/proc/vmstat oom_kill, Linux >= 4.13): None where unknown
    # (no such line or file, psutil). Only a rise causes a change sample. Absent from older helpers.
    oom_kill_count: Optional[int]


class TorchState(TypedDict):
    imported: bool
    cuda_initialized: bool


class TensorflowState(TypedDict):
    imported: bool
    gpus_initialized: bool


class TorchGpuFigures(TypedDict):
    allocated_bytes: Optional[int]
    reserved_bytes: Optional[int]
    peak_allocated_bytes: Optional[int]
    active_bytes: Optional[int]
    inactive_split_bytes: Optional[int]
    num_ooms: Optional[int]
    num_alloc_retries: Optional[int]


class NvmlProcess(TypedDict):
    pid: int
    used_bytes: Optional[int]
    this_process: bool


class NvmlGpuFigures(TypedDict):
    used_bytes: Optional[int]
    total_bytes: Optional[int]
    # NVML's own free: total less used less the driver's reservation (v2)
    free_bytes: Optional[int]
    process_used_bytes: Optional[int]
    # None: NVML could not list them
    processes: Optional[List[NvmlProcess]]


class TensorflowGpuFigures(TypedDict):
    # The two figures `tf.config.experimental.get_memory_info` returns, per card
    # (readers/tensorflow.py: a card split into logical devices adds their current bytes).
    current_bytes: Optional[int]
    peak_bytes: Optional[int]


class GpuFigures(TypedDict):
    index: int
    name: Optional[str]
    total_bytes: Optional[int]
    torch: Optional[TorchGpuFigures]
    nvml: Optional[NvmlGpuFigures]
    tensorflow: Optional[TensorflowGpuFigures]


class SampleMessage(TypedDict):
    type: Literal["sample"]
    seq: int
    time: float
    reason: SampleReason
    host: HostFigures
    torch: TorchState
    tensorflow: TensorflowState
    gpus: List[GpuFigures]
    hidden_gpus: Optional[HiddenGpus]




class CellError(TypedDict):
    type: str  # the exception's class name, e.g. "OutOfMemoryError"
    message_head: str  # the start of str(exception): cell_outcome.MESSAGE_HEAD_CHARS (1000) at most
    out_of_memory: bool


class CellHostMemory(TypedDict):
    rss_before_bytes: Optional[int]
    rss_after_bytes: Optional[int]
    rss_peak_bytes: Optional[int]
    peak_exact: bool


class CellGpuMemory(TypedDict):
    index: int  # CUDA ordinal, as in samples
    allocated_before_bytes: Optional[int]
    allocated_after_bytes: Optional[int]
    allocated_peak_bytes: Optional[int]
    reserved_before_bytes: Optional[int]
    reserved_after_bytes: Optional[int]
    reserved_peak_bytes: Optional[int]
    peak_exact: bool


class CellMemoryRecord(TypedDict):
    record_id: int
    execution_count: Optional[int]
    cell_id: Optional[str]
    started: float
    duration_s: float
    status: CellStatus
    error: Optional[CellError]
    peak_exact: bool
    host: CellHostMemory
    gpus: List[CellGpuMemory]
    # the out-of-memory assistant's diagnosis (oom_watch.py); None unless the cell died of OOM
    oom: Optional["OomDiagnosis"]


class TimelineGpuColumns(TypedDict):
    index: int  # CUDA ordinal, as in samples
    allocated_bytes: List[Optional[int]]
    reserved_bytes: List[Optional[int]]
    process_used_bytes: List[Optional[int]]


class TimelineColumns(TypedDict):
    """The ``history`` reply's ``timeline``: the charted figures of the samples sent lately."""

    times: List[float]
    rss_bytes: List[Optional[int]]
    gpus: List[TimelineGpuColumns]


class CellsMessage(TypedDict):
    type: Literal["cells"]
    records: List[CellMemoryRecord]


class ReplyMessage(TypedDict):
    type: Literal["reply"]
    request_id: str
    request_type: str
    result: Dict[str, Any]


class ErrorMessage(TypedDict):
    type: Literal["error"]
    request_id: Optional[str]
    code: ErrorCode
    message: str
