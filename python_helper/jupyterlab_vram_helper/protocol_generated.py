"""Generated from protocol/protocol.schema.json by scripts/generate-protocol-types.mjs: do not edit it, edit the schema and run `npm run build:schema`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypedDict

if TYPE_CHECKING:  # typing has NotRequired from Python 3.11 only
    from typing_extensions import NotRequired


class HelperConfig(TypedDict):
    """
    The helper's sampling configuration, all keys, as the helper reports it (in hello and in a configure reply).
    """

    interval_s: float
    """
    How often the sampler reads, in seconds (0.05 to 60).
    """
    change_threshold_bytes: int
    """
    The smallest change of a figure that makes a change sample.
    """
    heartbeat_s: float
    """
    The longest time without a sample, in seconds (interval_s to 600).
    """
    reset_peak_per_cell: bool
    """
    Whether the peak counters are reset at each cell start, for exact per-cell peaks; a hello of an older build of this protocol version that lacks it reads as true.
    """
    watch_cluster: NotRequired[bool]
    """
    Whether the helper looks for a Dask client or a Ray runtime the kernel already uses and reads its telemetry (nothing is imported or started when neither is in use); absent from older helpers (false).
    """
    cluster_interval_s: NotRequired[float]
    """
    How often the cluster's telemetry is read, in seconds (1 to 60, default 2); absent from older helpers.
    """


class PartialHelperConfig(TypedDict):
    """
    The config of an open or a configure request: the keys it leaves out keep their current value.
    """

    interval_s: NotRequired[float]
    """
    How often the sampler reads, in seconds (0.05 to 60).
    """
    change_threshold_bytes: NotRequired[int]
    """
    The smallest change of a figure that makes a change sample.
    """
    heartbeat_s: NotRequired[float]
    """
    The longest time without a sample, in seconds (interval_s to 600).
    """
    reset_peak_per_cell: NotRequired[bool]
    """
    Whether the peak counters are reset at each cell start.
    """
    watch_cluster: NotRequired[bool]
    """
    Whether the helper looks for a Dask client or a Ray runtime the kernel already uses and reads its telemetry (nothing is imported or started when neither is in use); absent from older helpers (false).
    """
    cluster_interval_s: NotRequired[float]
    """
    How often the cluster's telemetry is read, in seconds (1 to 60, default 2); absent from older helpers.
    """


class OpenMessage(TypedDict):
    """
    The data of the comm_open with which the frontend opens the comm.
    """

    type: Literal["open"]
    protocol: NotRequired[int | None]
    """
    The frontend's protocol version; omitted or null skips the version check.
    """
    config: NotRequired[PartialHelperConfig]
    replaces: NotRequired[list[str]]
    """
    Ids of comms this frontend left open in the kernel (a page before a reload, a lost connection), which the helper closes: at most 64, each at most 256 characters.
    """


class ConfigureRequest(TypedDict):
    """
    Change the sampling configuration (kernel-wide: every frontend of the kernel gets it).
    """

    type: Literal["configure"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """
    config: PartialHelperConfig


class SnapshotRequest(TypedDict):
    """
    Ask for a sample now (reason snapshot), answered by a reply with that sample's seq.
    """

    type: Literal["snapshot"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """


class PingRequest(TypedDict):
    """
    Ask for an empty reply, to learn that the kernel answers.
    """

    type: Literal["ping"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """


class HistoryRequest(TypedDict):
    """
    Ask for the per-cell records the helper keeps (the last 2000, oldest first) and the timeline of recent samples.
    """

    type: Literal["history"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """


class FreeMemoryRequest(TypedDict):
    """
    Free memory with gc.collect() and/or torch.cuda.empty_cache(); gc always runs first.
    """

    type: Literal["free_memory"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """
    actions: list[Literal["gc", "empty_cache"]]
    """
    The actions to run: one to eight items.
    """


class InspectRequest(TypedDict):
    """
    List what holds memory in the user's namespace and in the hidden holders.
    """

    type: Literal["inspect"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """
    max_entries: NotRequired[int]
    """
    The most names listed, 1 to 5000 (default 200).
    """
    container_depth: NotRequired[int]
    """
    How many levels of containers and plain objects' attributes are opened, 0 to 5 (default 2).
    """


class DeleteRequest(TypedDict):
    """
    Delete names of a listing and clear hidden holders, then run the free actions.
    """

    type: Literal["delete"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """
    listing_id: str
    """
    The listing_id of the inspect result the user chose from.
    """
    names: list[str]
    """
    The names to delete (at most 10,000, each at most 1024 characters).
    """
    hidden: NotRequired[list[Literal["output_cache", "last_traceback", "last_execution_result"]]]
    """
    The hidden holders to clear; omitted reads as none.
    """
    free: NotRequired[list[Literal["gc", "empty_cache"]]]
    """
    The free actions to run afterwards; omitted reads as none.
    """


class NotebookNamesRequest(TypedDict):
    """
    Ask for the names of the user's model, optimizer, data loader, loss and scaler, and whether torch and TensorFlow are initialised (for the code snippets).
    """

    type: Literal["notebook_names"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """


class RecordAllocationsRequest(TypedDict):
    """
    Start or stop recording where allocations come from (tracemalloc for the host, PyTorch's allocator history for the GPU).
    """

    type: Literal["record_allocations"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """
    enabled: bool
    """
    Whether to record.
    """
    host_frames: NotRequired[int]
    """
    How many frames tracemalloc keeps per allocation.
    """
    gpu_max_entries: NotRequired[int]
    """
    How many alloc/free events PyTorch's allocator history keeps.
    """


class AllocationSitesRequest(TypedDict):
    """
    Ask for the live memory per notebook line, as recorded.
    """

    type: Literal["allocation_sites"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """
    max_sites: NotRequired[int]
    """
    The most sites listed per device.
    """


class AllocationSnapshotRequest(TypedDict):
    """
    Ask for PyTorch's allocator snapshot, pickled, for PyTorch's memory viewer.
    """

    type: Literal["allocation_snapshot"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """


class StopProcessRequest(TypedDict):
    """
    Stop one process the kernel started: SIGTERM, then SIGKILL after timeout_s.
    """

    type: Literal["stop_process"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """
    pid: int
    """
    The process's pid, as the tree listed it.
    """
    start_time: int
    """
    Its start_time, as the tree listed it: a process with that pid and another start time is another process, and is not signalled.
    """
    timeout_s: NotRequired[float]
    """
    Seconds to wait after SIGTERM before SIGKILL, and after SIGKILL (0.1 to 60, default 5).
    """


class ReleaseEngineRequest(TypedDict):
    """
    List what the kernel started through an engine (a Ray runtime, a Dask client and its LocalCluster, a multiprocessing pool, a DataLoader iterator's workers, a vLLM engine) and can release, or release one of them: the frontend asks the user first, and the request is that confirmation.
    """

    type: Literal["release_engine"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """
    mode: Literal["list", "release"]
    """
    list (what can be released, nothing is changed) or release (release the one named by kind and name).
    """
    kind: NotRequired[str]
    """
    With mode release, required: the releasable's kind, as the list gave it (ray, dask, mp_pool, dataloader_iter, vllm).
    """
    name: NotRequired[str]
    """
    With mode release, required: the releasable's name, as the list gave it.
    """
    timeout_s: NotRequired[float]
    """
    Seconds to wait for the released processes to end, and the timeout passed to the engine's own close (0.1 to 60, default 10).
    """


class EstimateMemoryRequest(TypedDict):
    """
    Predict the peak GPU memory of one training step and one evaluation step of the named model, optimizer, loss and sample batch, for a range of batch sizes, without allocating on a GPU (PyTorch's fake tensors); with real_step true, the user agreed to a fallback that runs real steps at two small batch sizes when fake tensors cannot run the model.
    """

    type: Literal["estimate_memory"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """
    model: str
    """
    The model's name in the user namespace: a name or a dotted attribute path (trainer.model), at most 1024 characters.
    """
    batch: str
    """
    The sample batch's name: a tensor, or a tuple, list or dict of tensors, whose first dimension is the batch.
    """
    optimizer: NotRequired[str | None]
    """
    The optimizer's name; absent or null: no optimizer step (no optimizer state is counted).
    """
    loss: NotRequired[str | None]
    """
    The loss's name, a callable taken as loss(output, target) for an (input, target) batch and loss(output) otherwise; absent or null: the sum of the output (or its .loss, where the model returns one).
    """
    batch_sizes: NotRequired[list[int]]
    """
    The batch sizes to predict (1 to 16 of them, each 1 to 1048576); absent: a range around the sample's.
    """
    margin: NotRequired[float]
    """
    The share of the card's memory kept free when the largest batch size is named (0 to 0.5, default 0.1).
    """
    device: NotRequired[int | None]
    """
    The CUDA device the step would run on; absent or null: the model's, else device 0.
    """
    card_bytes: NotRequired[int | None]
    """
    Plan for a card of this many bytes (1 GiB to 16 TiB): the largest batch sizes are fitted to it, with an estimated CUDA context, in place of the kernel's own card, or where the kernel sees none (absent or null: the kernel's card).
    """
    real_step: NotRequired[bool]
    """
    The user's consent to the fallback: where fake tensors cannot run the model, run one real training step at two small batch sizes, on the model's own device, with the model's state put back (default false: the refusal is answered instead).
    """


class ClusterActionRequest(TypedDict):
    """
    Run an action on every worker of a cluster, through the engine's own remote-call API: the frontend asks the user first (read_allocators changes nothing), and the request is that confirmation.
    """

    type: Literal["cluster_action"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """
    engine: str
    """
    The cluster's engine, as ClusterState gives it.
    """
    cluster: str
    """
    The cluster's name, as ClusterState gives it.
    """
    action: Literal["gc", "empty_cache", "restart", "read_allocators"]
    """
    An action across a cluster's workers: gc (gc.collect() in each), empty_cache (torch.cuda.empty_cache() in each that has torch), restart (the engine restarts its workers) or read_allocators (read each worker's PyTorch allocator).
    """
    timeout_s: NotRequired[float]
    """
    Seconds to wait for the workers (1 to 120, default 30).
    """


class TorchInfo(TypedDict):
    """
    The kernel's PyTorch, as the hello reports it.
    """

    version: str | None
    """
    torch.__version__, or null when unknown.
    """
    cuda_build: str | None
    """
    torch.version.cuda; null for CPU builds.
    """
    cuda_initialized: bool
    """
    Whether torch has initialised CUDA.
    """


class TensorflowInfo(TypedDict):
    """
    The kernel's TensorFlow, as the hello reports it.
    """

    version: str | None
    """
    tf.__version__, or null when unknown.
    """
    gpus_initialized: bool
    """
    Whether TensorFlow has initialised its GPUs.
    """


class NvmlInfo(TypedDict):
    """
    Whether the kernel reads NVML, and its driver.
    """

    available: bool
    """
    Whether NVML could be used.
    """
    driver_version: str | None
    """
    The driver's version, or null when unknown.
    """
    error: str | None
    """
    Why NVML is not available (null when it is).
    """


class DeviceInfo(TypedDict):
    """
    A GPU the kernel sees, as the hello lists it.
    """

    index: int
    """
    The CUDA ordinal as the kernel's CUDA runtime numbers it.
    """
    name: str | None
    """
    The device's name, or null when unknown.
    """
    total_bytes: int | None
    """
    The device's memory, or null when unknown.
    """
    uuid: str | None
    """
    The device's UUID, or null when unknown.
    """


class HiddenGpus(TypedDict):
    """
    Why the kernel sees no GPU: its CUDA_VISIBLE_DEVICES hides every one NVML lists ("" or "-1" to run on the CPU, a wrong index or UUID).
    """

    count: int
    """
    The GPUs NVML lists on the machine.
    """
    cuda_visible_devices: str
    """
    The kernel's CUDA_VISIBLE_DEVICES, as set (text from the kernel: render it as text).
    """


class HelloMessage(TypedDict):
    """
    The helper's first message on a new comm: what it is and what the kernel has.
    """

    type: Literal["hello"]
    protocol: int
    """
    The helper's protocol version; a frontend of another version reports the mismatch.
    """
    helper_version: str
    """
    The helper's version.
    """
    python: str
    """
    The kernel's Python version.
    """
    pid: int
    """
    The kernel's process id.
    """
    hostname: str
    """
    The kernel machine's host name.
    """
    record_series: str
    """
    Names the run of cell record ids: they start again at 1 when it changes.
    """
    torch: TorchInfo | None
    """
    The kernel's PyTorch; null while torch is not imported.
    """
    tensorflow: TensorflowInfo | None
    """
    The kernel's TensorFlow; null while TensorFlow is not imported.
    """
    nvml: NvmlInfo
    devices: list[DeviceInfo]
    """
    The GPUs the kernel sees; empty when it sees none (unless devices_wait_for_cuda).
    """
    devices_wait_for_cuda: NotRequired[bool]
    """
    CUDA_VISIBLE_DEVICES names MIG instances, which NVML lists only as their parent GPUs, so the kernel's devices are known once CUDA starts; absent (older helpers) reads as false.
    """
    hidden_gpus: NotRequired[HiddenGpus | None]
    """
    Why devices is empty when CUDA_VISIBLE_DEVICES hides every GPU; null otherwise (absent from older helpers).
    """
    config: HelperConfig


class ContainerMemory(TypedDict):
    """
    The tightest cgroup memory limit from the kernel's cgroup up, and that cgroup's figures.
    """

    limit_bytes: int
    """
    The limit.
    """
    usage_bytes: int | None
    """
    Everything charged to the limited cgroup (all its processes, page cache); null when unknown.
    """
    inactive_file_bytes: int | None
    """
    The reclaimable page cache in that usage (memory.stat's inactive_file), which the kernel gives back before any OOM kill; null when unknown.
    """
    oom_kill_count: int | None
    """
    Processes the out-of-memory killer took in that cgroup, ever; null when unknown.
    """
    cgroup_version: int
    """
    The cgroup hierarchy's version: 1 or 2.
    """
    swap_limit_bytes: NotRequired[int | None]
    """
    The tightest swap limit on the kernel's cgroup path (0 lets nothing go to swap); null where no cgroup limits swap or it is unknown; absent from older helpers.
    """
    swap_usage_bytes: NotRequired[int | None]
    """
    That cgroup's swap in use; null when unknown; absent from older helpers.
    """


class HostMemory(TypedDict):
    """
    The kernel's host memory figures in a sample.
    """

    rss_bytes: int | None
    """
    The resident set size of the kernel process.
    """
    total_bytes: int | None
    """
    The machine's memory.
    """
    available_bytes: int | None
    """
    The machine's available memory.
    """
    container: ContainerMemory | None
    """
    The kernel's cgroup memory limit; null without one (absent from older helpers).
    """
    swapped_bytes: NotRequired[int | None]
    """
    The kernel's own pages in swap (VmSwap), which the RSS leaves out; null when unknown, absent from older helpers.
    """
    swap_total_bytes: NotRequired[int | None]
    """
    The machine's swap (SwapTotal; 0 without any); absent from older helpers.
    """
    swap_free_bytes: NotRequired[int | None]
    """
    What is free of the machine's swap; absent from older helpers.
    """
    oom_kill_count: NotRequired[int | None]
    """
    Processes the out-of-memory killer took on the whole machine, ever (/proc/vmstat's oom_kill); null when unknown, absent from older helpers.
    """


class TorchGpuMemory(TypedDict):
    """
    A GPU's figures from PyTorch's caching allocator.
    """

    allocated_bytes: int | None
    """
    Memory in tensors.
    """
    reserved_bytes: int | None
    """
    Memory the caching allocator holds.
    """
    peak_allocated_bytes: int | None
    """
    The peak of allocated_bytes since the last reset.
    """
    active_bytes: int | None
    """
    Memory in active blocks.
    """
    inactive_split_bytes: int | None
    """
    Reserved by the caching allocator but not usable: fragmentation.
    """
    num_ooms: int | None
    """
    Out-of-memory errors the allocator raised.
    """
    num_alloc_retries: int | None
    """
    Allocations that had to free the cache and retry.
    """


class NvmlGpuProcess(TypedDict):
    """
    One process on a GPU, as NVML lists it (pids of NVML's pid namespace).
    """

    pid: int
    """
    The process id.
    """
    used_bytes: int | None
    """
    Its memory on the GPU; null where NVML gives no figure for it.
    """
    this_process: bool
    """
    True for the kernel process that sent the sample.
    """


class NvmlGpuMemory(TypedDict):
    """
    A GPU's figures from NVML.
    """

    used_bytes: int | None
    """
    Device-wide, all processes.
    """
    total_bytes: int | None
    """
    The device's memory.
    """
    free_bytes: NotRequired[int | None]
    """
    NVML's own free: the total less used and less the driver's reservation; absent from older helpers.
    """
    process_used_bytes: int | None
    """
    This kernel process; null when NVML cannot attribute it (containers).
    """
    processes: NotRequired[list[NvmlGpuProcess] | None]
    """
    The processes NVML lists on the device, largest first (at most 32); null when NVML could not list them, absent from older helpers.
    """


class GpuLoadUnavailable(TypedDict):
    """
    Why each null figure of a GPU's load figures is null; a figure that is known is not listed.
    """

    sm_percent: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """
    memory_bandwidth_percent: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """
    power_watts: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """
    power_limit_watts: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """
    temperature_c: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """
    sm_clock_mhz: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """
    memory_clock_mhz: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """
    throttle_reasons: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """
    pcie_tx_kb_per_s: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """
    pcie_rx_kb_per_s: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """
    processes: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """


class GpuProcessLoad(TypedDict):
    """
    One process's share of a GPU's activity, from the driver's per-process utilisation samples since the previous reading (pids of NVML's pid namespace).
    """

    pid: int
    """
    The process id.
    """
    sm_percent: float | None
    """
    The share of time its kernels ran on the SMs, in percent (the mean of its samples); null where the driver gives none.
    """
    memory_percent: float | None
    """
    The share of time it read or wrote device memory, in percent; null where the driver gives none.
    """
    encoder_percent: float | None
    """
    Its video encoder utilisation, in percent; null where the driver gives none.
    """
    decoder_percent: float | None
    """
    Its video decoder utilisation, in percent; null where the driver gives none.
    """
    this_process: bool
    """
    True for the kernel process that sent the sample.
    """


class GpuLoad(TypedDict):
    """
    How busy a GPU is: utilisation, power, temperature, clocks, throttling, PCIe traffic and each process's share. Each figure is null where it cannot be read, and unavailable says why.
    """

    read_at: float
    """
    Unix seconds (the kernel's clock) when utilisation, power and throttling were read: they are read every 2 s, so a sample may carry a reading up to 2 s old.
    """
    scope: str
    """
    Whose figures a GPU's load figures are: device (the card the kernel sees is a whole GPU) or mig_instance (the kernel sees a MIG instance; the figures named in parent_figures are then the whole parent GPU's); a reader keeps any other string as is.
    """
    parent_figures: list[
        Literal[
            "sm_percent",
            "memory_bandwidth_percent",
            "power_watts",
            "power_limit_watts",
            "temperature_c",
            "sm_clock_mhz",
            "memory_clock_mhz",
            "throttle_reasons",
            "pcie_tx_kb_per_s",
            "pcie_rx_kb_per_s",
            "processes",
        ]
    ]
    """
    On a MIG instance, the figures that are the whole parent GPU's because the driver gives no instance figure (empty otherwise).
    """
    sm_percent: float | None
    """
    The share of the last sample period (1/6 s to 1 s, by product) in which a kernel ran on the GPU, in percent (nvmlDeviceGetUtilizationRates' gpu).
    """
    memory_bandwidth_percent: float | None
    """
    The share of the last sample period in which device memory was read or written, in percent (nvmlDeviceGetUtilizationRates' memory).
    """
    power_watts: float | None
    """
    The board's power draw, in watts.
    """
    power_limit_watts: float | None
    """
    The power limit the driver enforces, in watts (read every 30 s).
    """
    temperature_c: float | None
    """
    The GPU's core temperature, in degrees Celsius (read every 5 s).
    """
    sm_clock_mhz: int | None
    """
    The SM clock, in MHz (read every 5 s).
    """
    memory_clock_mhz: int | None
    """
    The memory clock, in MHz (read every 5 s).
    """
    throttle_reasons: list[str] | None
    """
    Why the clocks are below their maximum now; empty when nothing holds them.
    """
    pcie_tx_kb_per_s: int | None
    """
    PCIe traffic from the GPU, in NVML's KB/s, over a 20 ms window (read every 10 s: each reading blocks the sampler for that window).
    """
    pcie_rx_kb_per_s: int | None
    """
    PCIe traffic to the GPU, in NVML's KB/s, as pcie_tx_kb_per_s.
    """
    processes: list[GpuProcessLoad] | None
    """
    The processes the driver sampled on the GPU since the previous reading, busiest first (at most 32; read every 10 s); empty when none ran a kernel meanwhile.
    """
    unavailable: GpuLoadUnavailable


class TensorflowGpuMemory(TypedDict):
    """
    The two figures of tf.config.experimental.get_memory_info, per card.
    """

    current_bytes: int | None
    """
    Memory TensorFlow holds now.
    """
    peak_bytes: int | None
    """
    The peak of current_bytes.
    """


class GpuSample(TypedDict):
    """
    One GPU's figures in a sample.
    """

    index: int
    """
    The CUDA ordinal.
    """
    name: str | None
    """
    The device's name, or null when unknown.
    """
    total_bytes: int | None
    """
    The device's memory.
    """
    torch: TorchGpuMemory | None
    """
    Null unless torch is imported and CUDA initialised.
    """
    nvml: NvmlGpuMemory | None
    """
    Null unless NVML is available.
    """
    tensorflow: TensorflowGpuMemory | None
    """
    Null unless TensorFlow has initialised its GPUs.
    """
    load: NotRequired[GpuLoad | None]
    """
    How busy the GPU is; null where NVML does not know the device, absent from older helpers (unknown).
    """


class TorchState(TypedDict):
    """
    Whether torch is imported and has initialised CUDA.
    """

    imported: bool
    """
    Whether torch is imported in the kernel.
    """
    cuda_initialized: bool
    """
    Whether torch has initialised CUDA.
    """


class TensorflowState(TypedDict):
    """
    Whether TensorFlow is imported and has initialised its GPUs.
    """

    imported: bool
    """
    Whether TensorFlow is imported in the kernel.
    """
    gpus_initialized: bool
    """
    Whether TensorFlow has initialised its GPUs.
    """


class ProcessHostMemory(TypedDict):
    """
    One process's host memory: USS and PSS from /proc/<pid>/smaps_rollup (read at a paced rate), its RSS from /proc/<pid>/stat at every reading.
    """

    measure: str
    """
    Which figure host_bytes is: uss (smaps_rollup was read) or rss (smaps_rollup cannot be read for this process: permission, Linux older than 4.14); a reader keeps any other string as is.
    """
    host_bytes: int | None
    """
    The figure the totals count for this process: uss_bytes where measure is uss, else rss_bytes.
    """
    uss_bytes: int | None
    """
    Unique set size, Private_Clean + Private_Dirty of smaps_rollup: what its end would give back; null where smaps_rollup is not read.
    """
    pss_bytes: int | None
    """
    Proportional set size (Pss of smaps_rollup): each shared page divided among the processes that map it; null where smaps_rollup is not read.
    """
    rss_bytes: int | None
    """
    Resident set size (field 24 of /proc/<pid>/stat): pages shared with the kernel or siblings are counted in full.
    """
    swap_bytes: int | None
    """
    Its pages in swap (Swap of smaps_rollup); null where smaps_rollup is not read.
    """
    rollup_at: float | None
    """
    Unix seconds when uss_bytes, pss_bytes and swap_bytes were read (smaps_rollup is paced: they may be older than the sample); null where never read.
    """


class ProcessGpuMemory(TypedDict):
    """
    What NVML's per-process list attributes to one process on one GPU.
    """

    index: int
    """
    The CUDA ordinal, as in the sample's gpus.
    """
    used_bytes: int | None
    """
    The bytes NVML lists for the process's pid on that device; null where NVML lists it without a figure.
    """


class TreeProcess(TypedDict):
    """
    One process the kernel started (a descendant, or one re-parented away that is still followed).
    """

    pid: int
    """
    The process id, in the kernel's pid namespace.
    """
    start_time: int
    """
    Field 22 of /proc/<pid>/stat: clock ticks after boot when it started. pid and start_time together name one process (a pid is reused); a stop_process request must give both.
    """
    ppid: int
    """
    Its parent's pid now (field 4 of /proc/<pid>/stat).
    """
    reparented: bool
    """
    True when its parent chain no longer reaches the kernel (its parent ended, or it daemonised): it is followed because it was seen as a descendant.
    """
    depth: int
    """
    1 for a child of the kernel, 2 for a grandchild, ...; for a re-parented process, its depth under the topmost re-parented ancestor plus 1.
    """
    name: str
    """
    The process's comm (/proc/<pid>/comm, at most 15 bytes; a process title such as ray::IDLE shows here).
    """
    command: str
    """
    A short summary of its command line: the arguments joined by spaces, at most 160 characters (cut with an ellipsis).
    """
    role: str
    """
    What it is: dataloader_worker, mp_pool_worker, mp_process, mp_helper, torch_distributed_rank, vllm_engine, ray_worker, raylet, ray_node, dask_worker, dask_nanny, other; a reader keeps any other string as is.
    """
    role_basis: str | None
    """
    What the role was read from: multiprocessing (the kernel's own multiprocessing registry), cmdline, name, environment, parent; null for other.
    """
    role_guess: bool
    """
    True where the role is a guess from indirect evidence (a parent's role, a process title), false where it was read from the process's own registration or command.
    """
    host: ProcessHostMemory
    gpus: list[ProcessGpuMemory]
    """
    One entry per device where NVML's process list names its pid; [] where none does or NVML is not available.
    """


class TreeGpuTotal(TypedDict):
    """
    One GPU's memory of the kernel and its processes together.
    """

    index: int
    """
    The CUDA ordinal, as in the sample's gpus.
    """
    used_bytes: int | None
    """
    The kernel's NVML figure (process_used_bytes) plus its processes'; null where the kernel's figure is unknown.
    """
    processes_used_bytes: int | None
    """
    Its processes' alone (0 where NVML lists none of them).
    """


class ProcessTreeTotals(TypedDict):
    """
    The kernel and its processes together.
    """

    host_bytes: int | None
    """
    The kernel's RSS plus every process's host_bytes (its USS, or its RSS where measure is rss): a page shared with the kernel is counted once, in the kernel's RSS; pages the processes share only among themselves are left out. null where the kernel's RSS is unknown.
    """
    processes_host_bytes: int | None
    """
    The processes' host_bytes alone.
    """
    processes_pss_bytes: int | None
    """
    The processes' PSS summed; null unless every process's smaps_rollup was read.
    """
    host_measure: str
    """
    uss when every process's host_bytes is its USS, uss_and_rss when some are RSS, rss when all are.
    """
    gpus: list[TreeGpuTotal]
    """
    One entry per device in the sample's gpus.
    """


class ProcessTree(TypedDict):
    """
    Every process the kernel started, as the sampler last read them.
    """

    method: str
    """
    How descendants were found: task_children (/proc/<pid>/task/<tid>/children) or stat_scan (one scan of /proc/*/stat for parent ids, where the kernel lacks CONFIG_PROC_CHILDREN).
    """
    read_at: float
    """
    Unix seconds when the tree was read (its pace may be slower than the sample's).
    """
    processes: list[TreeProcess]
    """
    The processes, parents before their children, each branch by pid; [] when the kernel has none.
    """
    totals: ProcessTreeTotals | None
    """
    The kernel and its processes together; null while it has none (the kernel's own figures are the sample's).
    """


class SampleMessage(TypedDict):
    """
    The kernel's host and GPU memory figures, sent on change and as a heartbeat.
    """

    type: Literal["sample"]
    seq: int
    """
    1, 2, 3... per helper.
    """
    time: float
    """
    Unix seconds, the kernel's clock.
    """
    reason: str
    """
    Why it was sent: initial, change, heartbeat or snapshot; a reader keeps any other string as is.
    """
    host: HostMemory
    torch: TorchState
    tensorflow: TensorflowState
    gpus: list[GpuSample]
    """
    The GPUs the kernel sees.
    """
    hidden_gpus: HiddenGpus | None
    """
    Set only while gpus is empty for that reason; null otherwise (absent from older helpers).
    """
    processes: NotRequired[ProcessTree | None]
    """
    Every process the kernel started; null where /proc cannot be read (not Linux), absent from older helpers.
    """


class CellError(TypedDict):
    """
    Why a cell failed; null in a record whose status is ok.
    """

    type: str
    """
    The exception's class name (kernel text: render it as text).
    """
    message_head: str
    """
    The first 1000 characters of str(exception) (kernel text).
    """
    out_of_memory: bool
    """
    Whether the error is an out-of-memory error.
    """


class CellHostMemory(TypedDict):
    """
    The kernel's RSS around one cell.
    """

    rss_before_bytes: int | None
    """
    The RSS when the cell started.
    """
    rss_after_bytes: int | None
    """
    The RSS when the cell ended.
    """
    rss_peak_bytes: int | None
    """
    The highest RSS seen while the cell ran.
    """
    peak_exact: bool
    """
    Whether the peak is exact rather than sampled.
    """


class CellGpuMemory(TypedDict):
    """
    One device's caching allocator figures around one cell.
    """

    index: int
    """
    The CUDA ordinal, as in samples.
    """
    allocated_before_bytes: int | None
    """
    Memory in tensors when the cell started.
    """
    allocated_after_bytes: int | None
    """
    Memory in tensors when the cell ended.
    """
    allocated_peak_bytes: int | None
    """
    The peak of memory in tensors while the cell ran.
    """
    reserved_before_bytes: int | None
    """
    Memory the allocator held when the cell started.
    """
    reserved_after_bytes: int | None
    """
    Memory the allocator held when the cell ended.
    """
    reserved_peak_bytes: int | None
    """
    The peak of memory the allocator held while the cell ran.
    """
    peak_exact: bool
    """
    Whether the peaks are exact (the counters were reset at the cell's start).
    """


class CellGpuLoadUnavailable(TypedDict):
    """
    Why each null figure of a cell's GPU load is null; a figure that is known is not listed.
    """

    sm_mean_percent: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """
    energy_joules: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """
    throttle_reasons: NotRequired[str]
    """
    Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
    """


class CellGpuLoad(TypedDict):
    """
    How busy one GPU was while a cell ran, from the driver's own sample buffer and energy counter, read after the cell ended. The helper sends figures, not verdicts: the frontend decides what they suggest (docs/protocol.md).
    """

    index: int
    """
    The CUDA ordinal, as in samples.
    """
    scope: str
    """
    Whose figures a GPU's load figures are: device (the card the kernel sees is a whole GPU) or mig_instance (the kernel sees a MIG instance; the figures named in parent_figures are then the whole parent GPU's); a reader keeps any other string as is.
    """
    parent_figures: list[Literal["sm_mean_percent", "energy_joules", "throttle_reasons"]]
    """
    On a MIG instance, the figures that are the whole parent GPU's (empty otherwise).
    """
    sm_mean_percent: float | None
    """
    The mean GPU utilisation over the cell, in percent: the driver's samples inside the cell, and where its buffer does not reach back to the cell's start, the helper's own readings of the rest, weighted by the time each covers.
    """
    sm_max_percent: float | None
    """
    The highest GPU utilisation sample over the cell, in percent.
    """
    utilization_samples: int
    """
    How many of the driver's utilisation samples the figures come from (0 when none fell in the cell).
    """
    coverage: str
    """
    full: the driver's buffer reaches back to the cell's start; partial: it does not (older samples were overwritten), and covered_s says how much of the cell it covers; none: it has no sample for the cell. A reader keeps any other string as is.
    """
    covered_s: float
    """
    Seconds of the cell, counted back from its end, that the driver's samples cover.
    """
    energy_joules: float | None
    """
    The GPU's energy while the cell ran, in joules (the whole GPU's: every process on it).
    """
    energy_method: str | None
    """
    How energy_joules was found: energy_counter (the difference of the driver's energy counter, each end interpolated between the readings on either side of it, about 2 s apart) or power_samples (the driver's power samples integrated over the cell, where the board has no energy counter); null with energy_joules.
    """
    throttle_reasons: list[str] | None
    """
    Every clocks event (throttle) reason seen in the readings during the cell and in one taken right after it; empty when none was.
    """
    unavailable: CellGpuLoadUnavailable


class CellTreeGpu(TypedDict):
    """
    One GPU's memory of the kernel's processes around one cell (NVML's per-process figures, summed).
    """

    index: int
    """
    The CUDA ordinal, as in samples.
    """
    before_bytes: int | None
    """
    Before the cell (the last tree reading at its start).
    """
    after_bytes: int | None
    """
    After the cell.
    """
    sampled_max_bytes: int | None
    """
    The largest of before, after and the readings during the cell: a sampled maximum, not an exact peak.
    """


class CellProcessTree(TypedDict):
    """
    The kernel's processes around one cell: their host memory (processes_host_bytes of the tree totals) and GPU memory before and after it, and their sampled maxima. Present only where the kernel had processes at some reading of the cell; absent from older helpers.
    """

    host_before_bytes: int | None
    """
    The processes' host memory when the cell started (the last tree reading by then; 0 with none).
    """
    host_after_bytes: int | None
    """
    Their host memory after the cell (a tree reading made after it ended).
    """
    host_sampled_max_bytes: int | None
    """
    The largest of before, after and the readings during the cell: a sampled maximum, not an exact peak (a process that lived between two readings is missed).
    """
    processes_before: int
    """
    How many processes the reading at the start counted.
    """
    processes_after: int
    """
    How many the reading after the cell counted.
    """
    sample_spacing_s: float
    """
    The tree readings' spacing while the cell ran (the sampler's interval): the sampled maxima can miss what lived shorter than this.
    """
    samples: int
    """
    How many tree readings the cell's sampled maxima came from, before and after included.
    """
    gpus: list[CellTreeGpu]
    """
    One entry per device where a process of the kernel held memory.
    """


class OomCause(TypedDict):
    """
    One likely cause of an out-of-memory error, as the kernel classifies it.
    """

    cause: str
    """
    too_big, fragmentation, stale_references, other_processes, child_processes (processes this kernel started hold the memory: other_processes lists them with child_of_kernel true; absent from older helpers) or dataloader_workers (the kernel's DataLoader workers were killed, most likely by the out-of-memory killer: dataloader_workers says what they held); a reader keeps an unknown id from a newer helper as is.
    """
    gain_bytes: int | None
    """
    What removing this cause would make available; null for too_big.
    """


class OomRelease(TypedDict):
    """
    The releasable that holds a process named by an out-of-memory diagnosis.
    """

    kind: str
    """
    The releasable's kind (see Releasable.kind).
    """
    name: str
    """
    The releasable's name (see Releasable.name).
    """


class OomWorker(TypedDict):
    """
    One DataLoader worker of the kernel, as the process tree last read it before the failure.
    """

    pid: int
    """
    The worker's pid.
    """
    start_time: int
    """
    Its start_time.
    """
    killed: bool
    """
    Whether the error names it as killed.
    """
    host_bytes: int | None
    """
    Its host_bytes at that reading (USS, or RSS where smaps_rollup could not be read).
    """
    uss_bytes: int | None
    """
    Its USS at that reading; null where never read.
    """
    uss_growth_bytes: int | None
    """
    How much its USS grew from the first reading to that one (0 where it shrank); null with fewer than two readings.
    """
    read_at: float | None
    """
    Unix seconds of that reading; null where the tree never read the worker.
    """


class OomDataLoaderWorkers(TypedDict):
    """
    What the kernel's DataLoader workers held when one was killed: the explanation of a 'DataLoader worker (pid N) is killed by signal: Killed' error.
    """

    killed_pids: list[int]
    """
    The pids the error names.
    """
    signal: str
    """
    The signal as the error names it (Killed, Bus error, ...).
    """
    workers: list[OomWorker]
    """
    The killed workers and their siblings as last read (workers of this kernel the tree saw within the last minute), largest host_bytes first; [] where the tree never saw them.
    """
    workers_host_bytes: int | None
    """
    The workers' host_bytes summed; null where none was read.
    """
    uss_growth_bytes: int | None
    """
    How much their USS grew in all since they were first read; null where unknown.
    """
    copy_on_write: bool
    """
    True when their USS grew by at least a quarter of what they hold (and 64 MiB): pages shared with the kernel became each worker's own as the workers touched Python objects of the dataset (reference counts write to every object read).
    """
    snippet: str | None
    """
    The id of the snippet that fits (see schema/plugin.json's snippets); null when none does.
    """


class OomStaleHolder(TypedDict):
    """
    Something of the notebook that holds memory on the failing device.
    """

    holder: str
    """
    name (a variable), output_cache, last_traceback or last_execution_result.
    """
    label: str
    """
    The variable's name, or a label of the hidden holder.
    """
    bytes: int
    """
    What it holds on that device.
    """


class TimelineGpuColumns(TypedDict):
    """
    One GPU's columns of the timeline, one entry per time.
    """

    index: int
    """
    The CUDA ordinal, as in samples.
    """
    allocated_bytes: list[int | None]
    """
    PyTorch's allocated bytes per time.
    """
    reserved_bytes: list[int | None]
    """
    PyTorch's reserved bytes per time.
    """
    process_used_bytes: list[int | None]
    """
    NVML's figure of this process per time.
    """


class TimelineColumns(TypedDict):
    """
    The history reply's timeline: the charted figures of the samples the helper sent lately, as columns, oldest first; null where a figure was unknown, and a row of nulls where no frontend was watching.
    """

    times: list[float]
    """
    Unix seconds, the kernel's clock: each sample's time.
    """
    rss_bytes: list[int | None]
    """
    The kernel's RSS per time.
    """
    gpus: list[TimelineGpuColumns]
    """
    One entry per GPU.
    """


class SnapshotGpu(TypedDict):
    """
    One GPU's figures in a cleanup's before or after snapshot.
    """

    index: int
    """
    The CUDA ordinal.
    """
    allocated_bytes: int | None
    """
    Memory in tensors; null while torch has not initialised CUDA.
    """
    reserved_bytes: int | None
    """
    Memory the caching allocator holds; null while torch has not initialised CUDA.
    """
    nvml_used_bytes: int | None
    """
    NVML's figure for the whole device; null without NVML.
    """


class SnapshotHost(TypedDict):
    """
    The host's figures in a cleanup's before or after snapshot.
    """

    rss_bytes: int | None
    """
    The kernel's RSS.
    """


class MemorySnapshot(TypedDict):
    """
    Memory figures taken just before and just after a cleanup.
    """

    host: SnapshotHost
    gpus: list[SnapshotGpu]
    """
    One entry per GPU.
    """


class DeleteFailure(TypedDict):
    """
    A step of a cleanup that raised; what was done before and after it stands.
    """

    step: str
    """
    delete, clear, gc or empty_cache; a reader keeps any other string as is.
    """
    target: str | None
    """
    The name (delete), the hidden holder (clear), the GPU ("GPU 0") or null.
    """
    error: str
    """
    The exception, as "RuntimeError: CUDA error: ...".
    """


class FreeMemoryResult(TypedDict):
    """
    The result of a free_memory request.
    """

    actions_run: list[str]
    """
    The actions that ran, in order.
    """
    gc_collected: int | None
    """
    Objects gc.collect() found unreachable; null when gc did not run or raised.
    """
    empty_cache: str | None
    """
    done, skipped_torch_not_imported, skipped_cuda_not_initialized or "failed: ..."; null when empty_cache was not asked for.
    """
    failures: NotRequired[list[DeleteFailure]]
    """
    The steps that raised (gc, empty_cache); absent from older helpers.
    """
    before: MemorySnapshot
    after: MemorySnapshot
    elapsed_ms: float
    """
    What the request took, in milliseconds.
    """


class GraphHolding(TypedDict):
    """
    The tensors of a listed name that keep an autograd graph alive.
    """

    tensors: int
    """
    How many tensors keep a graph alive.
    """
    graph_nodes: int
    """
    Distinct autograd nodes reachable from them (bounded: see truncated).
    """
    truncated: bool
    """
    Whether the walk of the graph stopped at its bound.
    """
    bytes: int | None
    """
    Bytes the graphs' saved tensors keep alive that no name holds directly (counted in the entry's total); null when the kernel's torch cannot show saved tensors without unpacking them.
    """
    packed_by_hooks: int
    """
    Saved tensors a hook packed (checkpointing, offloading): their packed form is what is counted.
    """


class HolderEntry(TypedDict):
    """
    One name of the user's namespace that holds memory.
    """

    name: str
    """
    The name.
    """
    kind: str
    """
    tensor, module, optimizer, container, ndarray, bytes or other; a reader keeps any other string as is.
    """
    type_name: str
    """
    The value's type, as module.qualname.
    """
    summary: str
    """
    A short description of the value (kernel text: render it as text).
    """
    bytes_by_device: dict[str, int]
    total_bytes: int
    """
    The sum of bytes_by_device.
    """
    shared_with: list[str]
    """
    Other names of the listing that share storages with this one.
    """
    shared_bytes: int
    """
    Bytes this name keeps alive that another entry counts (each storage is counted once, on the largest holder); absent from older helpers.
    """
    shared_bytes_by_device: dict[str, int]
    """
    shared_bytes per device; absent from older helpers.
    """
    counted_under: list[str]
    """
    The entries those shared bytes are counted under; absent from older helpers.
    """
    output_cache_refs: list[str]
    """
    Copies of it in IPython's output cache ("Out[3]", "_", "_3").
    """
    deletable: bool
    """
    Whether the name may be deleted.
    """
    refusal: str | None
    """
    Why it cannot be deleted; null when deletable.
    """
    graph_holding: GraphHolding | None
    """
    Tensors in it that keep an autograd graph alive; null when none (absent from older helpers).
    """
    truncated: bool
    """
    Its walk ran out of the listing's budget: it holds at least its figures (absent from older helpers).
    """


class HiddenOverlap(TypedDict):
    """
    Another hidden holder that holds some of the same objects, and those bytes per device.
    """

    holder: str
    """
    One of the hidden holder kinds; a reader keeps any other string as is.
    """
    bytes_by_device: dict[str, int]


class HiddenHolder(TypedDict):
    """
    A reference the user cannot see: the output cache, the last traceback, the last result.
    """

    holder: str
    """
    One of the hidden holder kinds; a reader keeps any other string as is.
    """
    label: str
    """
    A label for people.
    """
    bytes_by_device: dict[str, int]
    total_bytes: int
    """
    The sum of bytes_by_device.
    """
    named_bytes_by_device: dict[str, int]
    """
    The part of it a listed name holds too, per device: clearing this holder alone leaves it alive; absent from older helpers.
    """
    summary: str
    """
    What it holds (kernel text: render it as text).
    """
    warning: str | None
    """
    What clearing it costs (e.g. %debug is lost); null when nothing.
    """
    held_also_by: NotRequired[list[HiddenOverlap]]
    """
    The other hidden holders that hold some of the same objects (what no listed name holds): clearing this holder alone leaves them alive; absent when none.
    """


class InspectResult(TypedDict):
    """
    The result of an inspect request: what holds memory.
    """

    listing_id: str
    """
    Names this listing, for a delete.
    """
    elapsed_ms: float
    """
    What the request took, in milliseconds.
    """
    truncated: bool
    """
    Whether the listing ran out of its budget or max_entries.
    """
    entries: list[HolderEntry]
    """
    The names, largest total_bytes first.
    """
    hidden: list[HiddenHolder]
    """
    The hidden holders that hold memory.
    """


class NameReason(TypedDict):
    """
    A name and why it was refused or is still alive.
    """

    name: str
    """
    The name, or a hidden holder when hidden is true.
    """
    reason: str
    """
    Why, in words.
    """
    hidden: NotRequired[bool]
    """
    True when name is a hidden holder of the request, not a variable; absent otherwise.
    """


class DeleteResult(TypedDict):
    """
    The result of a delete request.
    """

    deleted: list[str]
    """
    The names deleted.
    """
    refused: list[NameReason]
    """
    The names and hidden holders refused, with the reason.
    """
    cleared: list[str]
    """
    The hidden holders cleared.
    """
    still_alive: list[NameReason]
    """
    Deleted names whose object something else still holds, with what.
    """
    failures: NotRequired[list[DeleteFailure]]
    """
    Steps that raised once the deleting began: what deleted and cleared list is done all the same; absent when none.
    """
    before: MemorySnapshot
    after: MemorySnapshot
    elapsed_ms: float
    """
    What the request took, in milliseconds.
    """


class NotebookRuntime(TypedDict):
    """
    What the kernel has imported and initialised.
    """

    torch_imported: bool
    """
    Whether torch is imported.
    """
    cuda_initialized: bool
    """
    Whether torch has initialised CUDA.
    """
    tensorflow_imported: bool
    """
    Whether TensorFlow is imported.
    """
    tensorflow_initialized: bool
    """
    Whether TensorFlow has initialised its devices.
    """


class NotebookNamesResult(TypedDict):
    """
    The result of a notebook_names request: the user-namespace names bound to each kind of object (at most 20 each), and what the kernel has initialised.
    """

    model: list[str]
    """
    Names of torch.nn.Module instances other than losses, largest first.
    """
    optimizer: list[str]
    """
    Names of torch.optim.Optimizer instances.
    """
    dataloader: list[str]
    """
    Names of torch.utils.data.DataLoader instances.
    """
    loss: list[str]
    """
    Names of loss modules.
    """
    scaler: list[str]
    """
    Names of gradient scalers.
    """
    batch: NotRequired[list[str]]
    """
    Names that may hold a sample batch, for estimate_memory: tuples, lists and dicts of tensors first, then tensors; absent from older helpers (read as []).
    """
    runtime: NotebookRuntime


class HostRecording(TypedDict):
    """
    The host's allocation recording (tracemalloc): state is off, recording (started by the helper) or shared (someone else's).
    """

    state: str
    """
    off, recording or shared.
    """
    frames: int | None
    """
    The frames kept per allocation; null while off.
    """
    started: float | None
    """
    Unix seconds when recording started; null while off.
    """
    overhead_bytes: int
    """
    What tracemalloc itself holds.
    """
    restarted_at: float | None
    """
    When recording restarted (the traces of earlier allocations are gone); null when it did not.
    """
    restart_reason: str | None
    """
    Why it restarted: frames, symbolizer or stopped_elsewhere; null without a restart, absent from older helpers.
    """


class GpuRecording(TypedDict):
    """
    PyTorch's allocator history: state is off, waiting (for CUDA), recording, shared (someone else's, read as it is and never reconfigured or stopped; max_entries is then null) or unavailable.
    """

    state: str
    """
    off, waiting, recording, shared or unavailable.
    """
    max_entries: int | None
    """
    The events the history keeps; null while off or shared.
    """
    started: float | None
    """
    Unix seconds when recording started; null while not recording.
    """
    allocated_before_bytes: int | None
    """
    Allocated when recording started: memory without a stack.
    """
    reason: str | None
    """
    Why it is not recording (waiting, unavailable); null otherwise.
    """
    restarted_at: float | None
    """
    When the history restarted (its earlier events are gone); null when it did not.
    """
    restart_kept_stacks: bool | None
    """
    Whether live blocks kept their stacks through that restart; null without one.
    """
    restart_reason: str | None
    """
    Why it restarted: max_entries or stopped_elsewhere; null without a restart, absent from older helpers.
    """


class RecordingState(TypedDict):
    """
    Whether allocations are recorded, on the host and on the GPU; the result of a record_allocations request.
    """

    enabled: bool
    """
    Whether recording was asked for.
    """
    host: HostRecording
    gpu: GpuRecording


class SiteFrame(TypedDict):
    """
    A frame of a stack: a library's, or the innermost one outside the notebook.
    """

    filename: str
    """
    The frame's file.
    """
    line: int
    """
    The line number.
    """
    function: str | None
    """
    The function's name, or null when unknown.
    """


class SiteCell(TypedDict):
    """
    The notebook line charged with a site.
    """

    execution_count: int | None
    """
    The cell's In[n] number, or null.
    """
    cell_id: str | None
    """
    The notebook cell's id, or null.
    """
    line: int
    """
    The line in the cell, from 1.
    """
    same_code_cells: NotRequired[list[str]]
    """
    Cells that ran the same code (two or more): their allocations share one compiled file and cannot be told apart; absent otherwise.
    """


class AllocationSite(TypedDict):
    """
    Live memory allocated by one line (of a cell, or outside the notebook).
    """

    device: str
    """
    "host" or "cuda:<index>".
    """
    cell: SiteCell | None
    """
    The notebook line; null when no notebook frame was recorded (see frame).
    """
    frame: SiteFrame | None
    """
    The innermost frame outside the notebook, when no notebook frame was recorded; null otherwise.
    """
    code: str | None
    """
    The line's text (kernel data: render it as text).
    """
    library_frame: SiteFrame | None
    """
    The library frame just inside the notebook line.
    """
    bytes: int
    """
    The live bytes.
    """
    count: int
    """
    The live allocations.
    """


class DeviceSites(TypedDict):
    """
    One device's allocation sites.
    """

    device: str
    """
    "host" or "cuda:<index>".
    """
    index: NotRequired[int | None]
    """
    The CUDA ordinal; absent or null for the host.
    """
    total_bytes: int
    """
    The live bytes recorded.
    """
    count: int
    """
    The live allocations recorded.
    """
    unattributed_bytes: int
    """
    Live bytes without a stack.
    """
    helper_bytes: int
    """
    Live bytes the helper itself allocated.
    """
    helper_count: int
    """
    Allocations of helper_bytes; absent from older helpers.
    """
    truncated: bool
    """
    Whether more sites than listed hold memory.
    """
    sites: list[AllocationSite]
    """
    The sites, largest first.
    """


class CellAliveRun(TypedDict):
    """
    A cell's live bytes after one of its recent runs.
    """

    execution_count: int | None
    """
    That run's In[n] number, or null.
    """
    total_bytes: int
    """
    The cell's live bytes after it.
    """


class CellAliveBytes(TypedDict):
    """
    Bytes a cell allocated that are still alive, per device.
    """

    execution_count: int | None
    """
    The cell's last In[n] number, or null.
    """
    cell_id: str | None
    """
    The notebook cell's id, or null.
    """
    alive_bytes: dict[str, int]
    total_bytes: int
    """
    The sum of alive_bytes.
    """
    growing: bool
    """
    Its live bytes rose after each of its last runs: a likely leak (cell_alive messages only).
    """
    runs: NotRequired[list[CellAliveRun]]
    """
    Its figure after each of its recent runs; in cell_alive messages only (a reader reads its absence as none).
    """


class AllocationSitesResult(TypedDict):
    """
    The result of an allocation_sites request: live memory by notebook line.
    """

    recording: RecordingState
    elapsed_ms: float
    """
    What the request took, in milliseconds.
    """
    devices: list[DeviceSites]
    """
    One entry per recorded device.
    """
    cells: list[CellAliveBytes]
    """
    The cells whose allocations are alive, largest first.
    """


class AllocationSnapshotResult(TypedDict):
    """
    The result of an allocation_snapshot request: PyTorch's allocator snapshot, pickled.
    """

    format: str
    """
    The snapshot's format (pickle).
    """
    data_base64: str | None
    """
    The pickled snapshot, base64; null with reason when there is none.
    """
    bytes: int
    """
    The pickle's size.
    """
    reason: str | None
    """
    Why there is no snapshot; null when there is one.
    """


class StopGpu(TypedDict):
    """
    One GPU's used memory around a stop_process.
    """

    index: int
    """
    The CUDA ordinal.
    """
    used_bytes: int | None
    """
    NVML's used memory of the whole device; null without NVML.
    """


class StopMemory(TypedDict):
    """
    Memory figures just before the signal (before) and once the process ended or the wait ran out (after), NVML's process lists and every smaps_rollup read anew.
    """

    totals: ProcessTreeTotals | None
    """
    The kernel and its processes together; null while it has none.
    """
    available_bytes: int | None
    """
    The machine's available memory.
    """
    gpus: list[StopGpu]
    """
    One entry per GPU: NVML's used memory of the whole device.
    """


class StopProcessResult(TypedDict):
    """
    The result of a stop_process request.
    """

    pid: int
    """
    The pid asked for.
    """
    start_time: int
    """
    The start_time asked for.
    """
    outcome: str
    """
    terminated (it ended after SIGTERM), killed (it ended after SIGKILL), survived (still there after SIGKILL and the wait: a process in uninterruptible sleep), refused (nothing was signalled: refusal says why); a reader keeps any other string as is.
    """
    refusal: str | None
    """
    Why nothing was signalled: kernel (the pid is the kernel's own), gone (no such process now), reused (the pid is another process now: another start time), not_descendant (the process does not descend from the kernel and was never seen as one), permission (the system refused the signal); null when a signal was sent.
    """
    reason: str | None
    """
    The refusal, or what happened, in words; null when it ended on SIGTERM.
    """
    signals: list[str]
    """
    The signals sent, in order (SIGTERM, SIGKILL); [] when refused.
    """
    waited_s: float
    """
    Seconds spent waiting for it to end.
    """
    process: TreeProcess | None
    """
    The process as read just before the signal (role, memory); null when refused before it could be read.
    """
    still_zombie: bool
    """
    True when it ended but its parent has not reaped it yet (the kernel's multiprocessing or subprocess objects do so when the notebook joins or polls them; the helper never reaps a child, which would take its exit status from its owner). A zombie holds no memory.
    """
    before: StopMemory
    after: StopMemory
    elapsed_ms: float
    """
    What the request took, in milliseconds.
    """


class ReleasableProcess(TypedDict):
    """
    One process a releasable holds, as the kernel's process tree read it.
    """

    pid: int
    """
    The process id.
    """
    start_time: int
    """
    Its start_time (field 22 of /proc/<pid>/stat); with pid it names one process.
    """
    role: str
    """
    Its role in the process tree (see TreeProcess.role); a reader keeps any string as is.
    """


class Releasable(TypedDict):
    """
    Something the kernel started through an engine and can release.
    """

    kind: str
    """
    ray (the Ray runtime ray.init started), dask (a distributed Client and the LocalCluster it or the notebook started), mp_pool (a multiprocessing pool), dataloader_iter (a DataLoader iterator with worker processes, held by a name, a DataLoader with persistent workers, or a generator), vllm (a vLLM engine); a reader keeps any other string as is.
    """
    name: str
    """
    The name in the notebook's namespace that holds it (a generator's name for an iterator a generator holds; name.attribute for a DataLoader's persistent iterator); ray for the Ray runtime; a label in angle brackets, such as <default client>, for what no name holds.
    """
    label: str
    """
    What it is, in words (its type, its workers).
    """
    processes: list[ReleasableProcess]
    """
    Its processes in the kernel's tree (workers, their children); [] where it has none, or none could be told.
    """
    host_bytes: int | None
    """
    The host memory those processes hold (their host_bytes in the tree, summed); 0 with no process.
    """
    gpus: list[ProcessGpuMemory]
    """
    Per GPU, what NVML lists for those processes; [] where they hold nothing on a GPU.
    """


class ReleaseStep(TypedDict):
    """
    One step of a release, as it ran.
    """

    action: str
    """
    What ran, as code (client.close(), pool.terminate(), del llm, gc.collect(), ...).
    """
    ok: bool
    """
    Whether it ended without raising.
    """
    error: str | None
    """
    What it raised, on one line (TimeoutError: ...); null when ok.
    """


class ReleaseOutcome(TypedDict):
    """
    What releasing one releasable did.
    """

    kind: str
    """
    The kind asked for.
    """
    name: str
    """
    The name asked for.
    """
    outcome: str
    """
    released (every step ran and every process ended), partial (a step failed or a process is still alive), refused (nothing was done: no such releasable now); a reader keeps any other string as is.
    """
    reason: str | None
    """
    Why it was refused or is partial, in words; null when released.
    """
    steps: list[ReleaseStep]
    """
    The steps, in the order they ran; [] when refused.
    """
    processes: list[ReleasableProcess]
    """
    Its processes just before the release.
    """
    still_alive: list[ReleasableProcess]
    """
    Those of its processes (same pid and start time) still alive once the wait ended: what did not come back.
    """
    waited_s: float
    """
    Seconds spent waiting for its processes to end.
    """
    before: StopMemory
    after: StopMemory


class ReleaseEngineResult(TypedDict):
    """
    The result of a release_engine request.
    """

    mode: str
    """
    The mode asked for: list or release.
    """
    releasables: list[Releasable]
    """
    What can be released now (after the release, with mode release), largest host_bytes first.
    """
    released: ReleaseOutcome | None
    """
    What the release did; null with mode list.
    """
    elapsed_ms: float
    """
    What the request took, in milliseconds.
    """


class EstimateBreakdown(TypedDict):
    """
    What is live at a step's peak, by role, in bytes rounded as the CUDA caching allocator rounds them (512-byte blocks).
    """

    parameters: int | None
    """
    The model's parameters and buffers.
    """
    gradients: int | None
    """
    The parameters' gradients.
    """
    optimizer_state: int | None
    """
    The optimizer's state (moments, step counts).
    """
    activations: int | None
    """
    What the forward pass made and autograd kept for the backward pass.
    """
    temporaries: int | None
    """
    Everything else live at the peak: intermediates of the backward pass and of the optimizer step, the loss.
    """
    inputs: int | None
    """
    The batch itself.
    """


class EstimateRow(TypedDict):
    """
    The prediction for one batch size.
    """

    batch_size: int
    train_peak_bytes: int | None
    """
    The peak of one training step (forward, backward, optimizer step) in steady state, the allocator's rounding included.
    """
    eval_peak_bytes: int | None
    """
    The peak of one evaluation step (eval mode, no gradients); null in a progress message's partial figures, which come before the evaluation step is traced.
    """
    breakdown: EstimateBreakdown
    traced: bool
    """
    True where this batch size was traced (or measured); false where it was interpolated from the traced ones (peaks grow linearly with the batch).
    """
    fits: bool | None
    """
    Whether the training step fits the card's free memory with the margin; null without a card.
    """


class EstimateVariant(TypedDict):
    """
    The training step changed by one remedy, and the largest batch size it lets fit.
    """

    variant: str
    """
    plain (the step as it is), amp_bf16 (autocast to bfloat16), checkpointing (activation checkpointing of the repeated blocks) or grad_accumulation (micro-batches, gradients kept between them); a reader keeps any other string as is.
    """
    applicable: bool
    """
    Whether it could be estimated for this model.
    """
    reason: str | None
    """
    Why it is not applicable, or what it assumed (which blocks were checkpointed); null when there is nothing to say.
    """
    fixed_bytes: int | None
    """
    The training peak's part that does not grow with the batch (parameters, gradients, optimizer state); null when not applicable.
    """
    per_sample_bytes: int | None
    """
    What each sample of the batch adds to the training peak; null when not applicable.
    """
    largest_batch_size: int | None
    """
    The largest batch size whose training step fits the card's free memory with the margin; null without a card, when not applicable, or when not even 1 fits.
    """
    peak_at_largest_bytes: int | None
    """
    The predicted training peak at largest_batch_size (traced there); null without it.
    """
    accumulation_steps: int | None
    """
    With grad_accumulation: the micro-batches per optimizer step that reach the sample's batch size at largest_batch_size each; null otherwise.
    """


class EstimateCard(TypedDict):
    """
    The card the step would run on, and what it leaves for the step.
    """

    index: int | None
    """
    The CUDA device index; null for a planned card.
    """
    planned: bool
    """
    True for the card the request's card_bytes asked to plan for (nothing of it is measured), false for the kernel's own.
    """
    name: str | None
    """
    The device's name; null where it could not be read.
    """
    total_bytes: int | None
    """
    The card's memory (for the kernel's card, capped by PyTorch's per-process memory fraction where one is set).
    """
    other_allocated_bytes: int | None
    """
    What this kernel's PyTorch has allocated on the card besides the model's parameters, gradients and optimizer state, which the step counts itself.
    """
    overhead_bytes: int | None
    """
    What the card gives to others than the step: this kernel's CUDA context and library workspaces and the allocator's cached but unused blocks (measured once CUDA is up, else estimated), and other processes' memory.
    """
    overhead_measured: bool
    """
    True when the kernel's CUDA context was measured (NVML's figure for the process less PyTorch's reserved memory); false when it is an estimate because CUDA is not initialised in this kernel.
    """
    margin_bytes: int | None
    """
    The margin kept free.
    """
    free_for_step_bytes: int | None
    """
    What the training step may use: total less the other allocations, the overhead and the margin.
    """


class EstimateFailure(TypedDict):
    """
    Why fake tensors could not run the step: the operation and the user's line where it stopped.
    """

    phase: str
    """
    Where it stopped: forward, loss, backward, optimizer, eval.
    """
    op: str | None
    """
    The operation without a fake implementation (aten.nonzero.default, ...); null where none is named (data-dependent control flow, an error of the user's code).
    """
    filename: str | None
    """
    The file (or cell) of the innermost user frame; null where none was found.
    """
    lineno: int | None
    line: str | None
    """
    That line's code; null where not known.
    """
    message: str
    """
    What was raised, on one line.
    """


class EstimateMemoryResult(TypedDict):
    """
    The result of an estimate_memory request.
    """

    status: str
    """
    estimated (fake tensors ran the step), measured (the fallback ran real steps, with consent) or refused (nothing could be predicted: failure and notes say why); a reader keeps any other string as is.
    """
    method: str
    """
    fake_tensors, real_steps, or none when refused.
    """
    traced_on: str | None
    """
    The device type the fake tensors claimed: cuda when CUDA is initialised in this kernel (the card's own kernels and autocast rules), else cpu (no CUDA context is created; convolution and attention temporaries may differ from the card's); null when refused.
    """
    names: dict[str, str | None]
    """
    The names used: model, optimizer, loss, batch (null where none was given).
    """
    sample_batch_size: int | None
    """
    The sample batch's first dimension; null when refused before it was read.
    """
    rows: list[EstimateRow]
    """
    One per batch size asked for, smallest first; [] when refused.
    """
    variants: list[EstimateVariant]
    """
    plain first, then amp_bf16, checkpointing and grad_accumulation; [] when refused.
    """
    card: EstimateCard | None
    """
    The card; null where no CUDA device is visible (the figures stand alone).
    """
    largest_batch_size: int | None
    """
    The plain step's largest batch size that fits (the plain variant's); null without a card or when refused.
    """
    failure: EstimateFailure | None
    """
    Why fake tensors could not run the step; null when they could.
    """
    notes: list[str]
    """
    What the figures assume or leave out, in sentences (the device traced on, a loss taken as the output's sum, what the fallback extrapolated).
    """
    state_unchanged: bool
    """
    True when every parameter, gradient, buffer and optimizer state tensor kept its version counter, the RNG states and every module's training flag are as before; false is a bug, stated.
    """
    elapsed_ms: float
    """
    What the request took, in milliseconds.
    """


class EstimateProgressMessage(TypedDict):
    """
    Sent to the comm that asked, while an estimate_memory request runs: how far it is. One message also carries partial: the figures known once the plain step is estimated and fitted to the card (the rows, the card, the largest batch size and the remedies done; the others follow in the reply); it is absent from the others, and from older helpers.
    """

    type: Literal["estimate_progress"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """
    stage: str
    """
    What runs now, in words (tracing batch size 64, ...).
    """
    done: int
    """
    Steps done.
    """
    total: int
    """
    Steps in all (it can grow while the estimate runs).
    """
    partial: NotRequired[EstimateMemoryResult]


class ClusterAllocatorDevice(TypedDict):
    """
    One CUDA device's PyTorch caching allocator in a cluster worker.
    """

    device: int
    """
    The CUDA ordinal in the worker.
    """
    allocated_bytes: int | None
    """
    Held in tensors.
    """
    reserved_bytes: int | None
    """
    Reserved by the allocator (tensors and its cache).
    """
    peak_bytes: int | None
    """
    The most held in tensors since the worker started or last reset its peak.
    """


class ClusterAllocatorReading(TypedDict):
    """
    What a worker's PyTorch allocator held when the user asked for it (the helper never runs code on workers otherwise).
    """

    read_at: float
    """
    Unix seconds (the kernel's clock) of the reading.
    """
    torch: bool
    """
    Whether the worker had imported torch.
    """
    cuda_initialized: bool
    """
    Whether CUDA was initialised in the worker (no device is listed otherwise, and none was initialised by the reading).
    """
    devices: list[ClusterAllocatorDevice]
    """
    One entry per device the worker's allocator knows.
    """


class ClusterWorkerGpu(TypedDict):
    """
    A GPU a cluster worker uses.
    """

    index: int | None
    """
    The device's index on its machine, where known.
    """
    name: str | None
    """
    The device's name, where the engine reports it (kernel text).
    """
    used_bytes: int | None
    """
    Memory in use: by this worker's process (scope process) or on the whole device (scope device).
    """
    total_bytes: int | None
    """
    The device's memory.
    """
    scope: str
    """
    process (the driver's figure for the worker's pid, read on the kernel's machine) or device (the engine reports the device's use, all processes together); a reader keeps any other string as is.
    """
    utilization_percent: float | None
    """
    The device's utilisation in percent, where the engine reports it.
    """


class ClusterWorker(TypedDict):
    """
    One worker of a cluster (a Dask worker; a Ray node or worker process), as the engine's telemetry last gave it.
    """

    id: str
    """
    The worker's id: a Dask worker's address; a Ray node's id, or node id and pid for a Ray worker process (kernel text).
    """
    name: str
    """
    Its name (kernel text).
    """
    role: str
    """
    dask_worker, ray_node or ray_worker; a reader keeps any other string as is.
    """
    host: str
    """
    The machine it runs on (kernel text).
    """
    pid: int | None
    """
    Its process id, where known (Dask's LocalCluster, Ray's local workers).
    """
    local: bool
    """
    Whether it runs on the kernel's machine, where its figures could be checked against /proc.
    """
    status: str
    """
    The engine's word for its state: running, paused, closing, ... (kernel text).
    """
    memory_bytes: int | None
    """
    The process's memory (RSS) as the engine reports it, or as /proc gives it where memory_source is proc; for a Ray node, the node's used memory.
    """
    memory_source: str
    """
    engine or proc: where memory_bytes comes from; a reader keeps any other string as is.
    """
    memory_limit_bytes: int | None
    """
    The engine's memory limit for it (Dask's memory_limit); null where it has none.
    """
    managed_bytes: int | None
    """
    What the engine holds for tasks in memory (Dask's managed memory); null where it does not say.
    """
    spilled_bytes: int | None
    """
    What the engine spilled to disk (Dask's spilled data, Ray's spilled objects); null where it does not say.
    """
    nthreads: int | None
    """
    Its threads for tasks, where the engine says.
    """
    gpus: list[ClusterWorkerGpu]
    """
    The GPUs it uses, where the engine or the driver reports them (empty otherwise).
    """
    allocator: ClusterAllocatorReading | None
    """
    Its PyTorch allocator at the last reading the user asked for; null before any.
    """


class ClusterTotals(TypedDict):
    """
    A cluster's figures summed over its workers.
    """

    workers: int
    """
    How many workers it has.
    """
    paused: int
    """
    How many of them are paused by their memory limit.
    """
    memory_bytes: int | None
    """
    Their memory summed (null where one is unknown).
    """
    memory_limit_bytes: int | None
    """
    Their limits summed (null where one has none).
    """
    spilled_bytes: int | None
    """
    Their spilled bytes summed (null where none says).
    """
    gpu_used_bytes: int | None
    """
    GPU memory in use summed over their GPUs (null without GPU figures).
    """
    gpu_total_bytes: int | None
    """
    Their GPUs' memory summed (null without GPU figures).
    """


class ClusterState(TypedDict):
    """
    One cluster the kernel drives: a Dask client's scheduler or the Ray runtime the kernel initialised.
    """

    engine: str
    """
    dask or ray; a reader keeps any other string as is.
    """
    name: str
    """
    Names the cluster: the scheduler's address, or Ray's address (kernel text); actions name it so.
    """
    found_by: str
    """
    How the helper found it: default_client (Dask's default client), namespace (a Client in the user's namespace) or initialized (ray.is_initialized()); a reader keeps any other string as is.
    """
    variable: str | None
    """
    The namespace name of the client, where found_by is namespace.
    """
    version: str | None
    """
    The engine's version.
    """
    dashboard: str | None
    """
    The engine's dashboard address, where it has one (kernel text: render it as text).
    """
    status: str
    """
    ok (the last reading answered), timeout (the scheduler did not answer in time), unreachable, closed (the client or runtime was closed) or error; a reader keeps any other string as is.
    """
    message: str | None
    """
    Why the figures are missing or old, in words, where status is not ok (kernel text).
    """
    read_at: float | None
    """
    Unix seconds (the kernel's clock) of the last reading that answered; null before any.
    """
    read_ms: float | None
    """
    What that reading took, in milliseconds of wall time.
    """
    interval_s: float
    """
    How often the telemetry is read, in seconds.
    """
    workers: list[ClusterWorker]
    """
    Its workers at the last reading that answered.
    """
    totals: ClusterTotals
    unseen: list[str]
    """
    What this engine's telemetry cannot show here, one sentence each (kernel text).
    """
    actions: list[Literal["gc", "empty_cache", "restart", "read_allocators"]]
    """
    The actions a cluster_action request can run on it.
    """


class ClusterLastFigures(TypedDict):
    """
    A worker's last figures before an event.
    """

    read_at: float
    """
    Unix seconds of the reading.
    """
    memory_bytes: int | None
    """
    Its memory then.
    """
    memory_limit_bytes: int | None
    """
    Its memory limit.
    """
    spilled_bytes: int | None
    """
    What it had spilled.
    """
    gpu_used_bytes: int | None
    """
    GPU memory it used (summed over its GPUs).
    """


class ClusterEvent(TypedDict):
    """
    Something that happened to a cluster worker's memory or life: paused, spilling, restarted by its memory limit, gone, killed by an out-of-memory killer, or a CUDA out-of-memory error it raised.
    """

    id: int
    """
    1, 2, 3... per helper.
    """
    time: float
    """
    Unix seconds (the kernel's clock) when the helper saw it.
    """
    engine: str
    """
    dask or ray.
    """
    cluster: str
    """
    The cluster's name, as ClusterState gives it (kernel text).
    """
    worker: str | None
    """
    The worker's id, where known (kernel text).
    """
    pid: int | None
    """
    The worker's pid, where known.
    """
    kind: str
    """
    paused (the worker stopped taking tasks at its memory limit's pause fraction), resumed, spilling (it began to spill to disk), memory_restart (its nanny restarted it past its memory limit's terminate fraction), left (it left the cluster; the engine said no reason), killed_worker (a task failed because the workers that ran it died), oom_killed (Ray's memory monitor killed a task or an actor) or cuda_oom (a task raised a CUDA out-of-memory error on it); a reader keeps any other string as is.
    """
    engine_message: str | None
    """
    The engine's own words for it: its log line or the error's head (kernel text).
    """
    last: ClusterLastFigures | None
    """
    The worker's last figures before the event; null where the helper never read it.
    """


class ClusterMessage(TypedDict):
    """
    The clusters the kernel drives and their workers' memory, sent to every comm after each reading of their telemetry that changed something, and once when the last cluster goes.
    """

    type: Literal["cluster"]
    seq: int
    """
    1, 2, 3... per helper.
    """
    time: float
    """
    Unix seconds, the kernel's clock.
    """
    clusters: list[ClusterState]
    """
    The clusters found; empty when the kernel drives none (any more).
    """
    events: list[ClusterEvent]
    """
    The latest events (at most 50), oldest first; a reader keeps them by id.
    """


class CellCluster(TypedDict):
    """
    The memory of the clusters the kernel drives around one cell, from their telemetry: sampled, never an exact peak. Present only where a cluster was attached during the cell; absent from older helpers.
    """

    clusters: list[str]
    """
    The names of the clusters counted.
    """
    before_bytes: int | None
    """
    Their workers' memory summed at the last reading before the cell.
    """
    after_bytes: int | None
    """
    At the first reading after it.
    """
    sampled_max_bytes: int | None
    """
    The largest of before, after and the readings during the cell: a sampled maximum (a rise between two readings is missed).
    """
    workers_before: int
    """
    How many workers the reading before counted.
    """
    workers_after: int
    """
    How many the reading after counted.
    """
    samples: int
    """
    How many readings the figures come from, before and after included.
    """
    sample_spacing_s: float
    """
    The readings' spacing (the cluster interval).
    """
    events: list[int]
    """
    The ids of the cluster events seen while the cell ran.
    """


class ClusterOomWorker(TypedDict):
    """
    Where an out-of-memory error came from a cluster worker: which, and its last figures.
    """

    engine: str
    """
    dask or ray.
    """
    cluster: str
    """
    The cluster's name (kernel text).
    """
    worker: str | None
    """
    The worker's id, where the error or the events name it (kernel text).
    """
    pid: int | None
    """
    Its pid, where known.
    """
    kind: str
    """
    memory_restart, killed_worker, oom_killed or cuda_oom, as ClusterEvent; a reader keeps any other string as is.
    """
    last: ClusterLastFigures | None
    """
    Its last figures before the error; null where the helper never read it.
    """


class ClusterActionWorker(TypedDict):
    """
    What an action did on one worker.
    """

    id: str
    """
    The worker's id (kernel text).
    """
    ok: bool
    """
    Whether the action ran there.
    """
    error: str | None
    """
    Why not, where ok is false (kernel text).
    """
    torch: bool | None
    """
    Whether the worker had imported torch; null where not asked.
    """
    host_before_bytes: int | None
    """
    The worker's RSS before the action.
    """
    host_after_bytes: int | None
    """
    After it.
    """
    gpu_reserved_before_bytes: int | None
    """
    Its PyTorch allocator's reserved bytes over all devices before the action; null without torch and CUDA.
    """
    gpu_reserved_after_bytes: int | None
    """
    After it.
    """
    allocator: ClusterAllocatorReading | None
    """
    Its allocator after the action, where it has torch.
    """


class ClusterActionResult(TypedDict):
    """
    The result of a cluster_action request.
    """

    engine: str
    """
    The cluster's engine.
    """
    cluster: str
    """
    The cluster's name (kernel text).
    """
    action: Literal["gc", "empty_cache", "restart", "read_allocators"]
    """
    An action across a cluster's workers: gc (gc.collect() in each), empty_cache (torch.cuda.empty_cache() in each that has torch), restart (the engine restarts its workers) or read_allocators (read each worker's PyTorch allocator).
    """
    done: bool
    """
    Whether the engine ran the action (on every worker it could reach).
    """
    message: str | None
    """
    What the action could not do, in words (a Ray runtime's actors cannot be reached, a worker did not answer in time, ...) (kernel text).
    """
    workers: list[ClusterActionWorker]
    """
    One entry per worker the action reached or tried.
    """


class CellAliveMessage(TypedDict):
    """
    Broadcast after cells ran while allocations are recorded: the cells whose allocations are still alive.
    """

    type: Literal["cell_alive"]
    cells: list[CellAliveBytes]
    """
    At most 500 cells, largest first.
    """
    elapsed_ms: NotRequired[float]
    """
    What computing the message took on the sender thread, in milliseconds.
    """


class AllocationRecordingMessage(TypedDict):
    """
    Broadcast to every frontend when allocation recording starts, stops or changes.
    """

    type: Literal["allocation_recording"]
    recording: RecordingState


class ReplyMessage(TypedDict):
    """
    The answer to a request that succeeded.
    """

    type: Literal["reply"]
    request_id: str
    """
    The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
    """
    request_type: str
    """
    The request's type.
    """
    result: dict[str, Any]
    """
    The request's result, always an object ({} for ping); its shape depends on request_type (HistoryResult, FreeMemoryResult, InspectResult, ...).
    """


class ErrorMessage(TypedDict):
    """
    The answer to a request that failed, or an error that answers no request.
    """

    type: Literal["error"]
    request_id: str | None
    """
    The request's id; null when the request had none that could be read, and for errors that answer no request.
    """
    code: str
    """
    malformed, unknown_type, invalid_config, internal, refused, stale_listing or interrupted; a reader keeps any other string as is.
    """
    message: str
    """
    What went wrong, in words.
    """


class OomProcess(TypedDict):
    """
    Another process on the failing GPU.
    """

    pid: int
    """
    The process id.
    """
    used_bytes: int | None
    """
    Its memory on the GPU; for a host diagnosis (a child of the kernel only), the host memory of its own (USS, or RSS where that is all the tree read); null where no figure is known.
    """
    child_of_kernel: NotRequired[bool]
    """
    True when the process is in this kernel's process tree (a process the kernel started); absent (read as false) for others and from older helpers.
    """
    start_time: NotRequired[int]
    """
    For a child of the kernel: its start_time, which a stop_process request needs with the pid.
    """
    role: NotRequired[str]
    """
    For a child of the kernel: its role in the process tree (see TreeProcess.role).
    """
    remedies: NotRequired[list[str]]
    """
    For a child of the kernel: what the frontend can offer, best first: release_engine (a release_engine request with release), stop_process (a stop_process request with pid and start_time); a reader keeps an unknown id as is and may ignore it.
    """
    release: NotRequired[OomRelease | None]
    """
    For a child of the kernel that a releasable holds: the kind and name a release_engine request takes; null or absent where none holds it.
    """


class OomAllocationSites(TypedDict):
    """
    The notebook lines holding the most on the failing device at the failure.
    """

    recording: bool
    """
    False when allocations were not recorded, so nothing could be said.
    """
    sites: list[AllocationSite]
    """
    The sites, largest first.
    """


class OomDiagnosis(TypedDict):
    """
    The out-of-memory diagnosis a cell record carries when the cell died of out-of-memory: numbers and cause ids, which the frontend turns into words and actions.
    """

    kind: str
    """
    Where memory ran out: cuda, cuda_library, tensorflow, host, mps or xla.
    """
    library: str | None
    """
    cuBLAS, cuDNN, ... for a library's allocation failure; null otherwise.
    """
    framework: NotRequired[str | None]
    """
    Whose allocation failed, as the message says (torch, tensorflow, numpy); null when it does not say, absent from older helpers.
    """
    device_index: int | None
    """
    The CUDA ordinal; null for host RAM or when unknown.
    """
    requested_bytes: int | None
    """
    What the failing allocation asked for.
    """
    total_bytes: int | None
    """
    The device's memory (host: RAM).
    """
    free_bytes: int | None
    """
    What was free on the device (host: available RAM).
    """
    allocated_bytes: int | None
    """
    Held by this kernel's PyTorch allocator, in tensors.
    """
    reserved_unallocated_bytes: int | None
    """
    Cached by this kernel's allocator but not in tensors (fragmentation).
    """
    process_in_use_bytes: int | None
    """
    This kernel's process in all (GPU: per NVML or the message; host: RSS).
    """
    other_processes_bytes: int | None
    """
    What other processes held on the device.
    """
    other_processes: list[OomProcess]
    """
    The other processes on the device, largest first.
    """
    capacity_bytes: int | None
    """
    The most this kernel could have held, holding nothing it can give back: what too_big compared the request with; null when unknown.
    """
    allowed_bytes: int | None
    """
    The memory-fraction cap (torch.cuda.set_per_process_memory_fraction), when one was set.
    """
    num_alloc_retries: int | None
    """
    Allocations that had to free the cache and retry.
    """
    stale_bytes: int | None
    """
    Held by the notebook's names, output cache and last traceback on that device.
    """
    stale_holders: list[OomStaleHolder]
    """
    What holds stale_bytes, largest first.
    """
    in_use_holders: NotRequired[list[OomStaleHolder]]
    """
    The largest names the failing cell itself uses, left out of stale_bytes and stale_holders (deleting them is no fix for that cell); absent from older helpers.
    """
    expandable_segments: NotRequired[bool | None]
    """
    Whether this kernel's torch knows the allocator option expandable_segments (torch 2.1 and later); null when it cannot be told, or not torch's CUDA.
    """
    expandable_segments_on: NotRequired[bool | None]
    """
    Whether torch's allocator has expandable segments on already; null when it cannot be told.
    """
    causes: list[OomCause]
    """
    The likely causes, most likely first; empty when nothing can be said.
    """
    allocation_sites: NotRequired[OomAllocationSites | None]
    """
    The notebook lines holding the most on that device at the failure; null when the kernel could not say (absent from older helpers).
    """
    dataloader_workers: NotRequired[OomDataLoaderWorkers | None]
    """
    For a DataLoader worker killed by a signal: what the workers held; null or absent otherwise (and from older helpers).
    """
    cluster_worker: NotRequired[ClusterOomWorker | None]
    """
    Set where the error came from a cluster worker (the device figures are then the worker's, as its message gives them, not the kernel's); null otherwise, absent from older helpers.
    """


class CellMemoryRecord(TypedDict):
    """
    What one executed cell did to memory.
    """

    record_id: int
    """
    1, 2, 3... per helper (a restart starts again at 1).
    """
    execution_count: int | None
    """
    The In[n] number; null if IPython gave none.
    """
    cell_id: str | None
    """
    The notebook cell's id (the cell model's id); null for console executions.
    """
    started: float
    """
    Unix seconds (the kernel's clock) when the cell started.
    """
    duration_s: float
    """
    How long the cell ran, in seconds.
    """
    status: str
    """
    ok, error or interrupted; a reader keeps any other string as is.
    """
    error: CellError | None
    """
    Why the cell failed; null when its status is ok.
    """
    peak_exact: bool
    """
    True when every peak in the record is exact.
    """
    host: CellHostMemory
    gpus: list[CellGpuMemory]
    """
    Devices whose caching allocator holds or held memory (may be empty).
    """
    oom: OomDiagnosis | None
    """
    The out-of-memory diagnosis; null unless the cell died of out-of-memory (absent from older helpers).
    """
    gpu_load: NotRequired[list[CellGpuLoad]]
    """
    How busy each GPU the kernel sees was during the cell (empty without NVML or GPUs); absent from older helpers (unknown).
    """
    processes: NotRequired[CellProcessTree]
    cluster: NotRequired[CellCluster]


class CellsMessage(TypedDict):
    """
    Per-cell records, oldest first: one message per round of the helper's sender (a lone cell's record alone; a Run All gathers the cells of about 50 ms).
    """

    type: Literal["cells"]
    records: list[CellMemoryRecord]
    """
    The records, oldest first.
    """


class HistoryResult(TypedDict):
    """
    The result of a history request.
    """

    records: list[CellMemoryRecord]
    """
    The kept per-cell records, oldest first.
    """
    timeline: NotRequired[TimelineColumns]


ProtocolMessage: TypeAlias = (
    OpenMessage
    | CellAliveMessage
    | AllocationRecordingMessage
    | EstimateProgressMessage
    | ConfigureRequest
    | SnapshotRequest
    | PingRequest
    | HistoryRequest
    | FreeMemoryRequest
    | InspectRequest
    | DeleteRequest
    | NotebookNamesRequest
    | RecordAllocationsRequest
    | AllocationSitesRequest
    | AllocationSnapshotRequest
    | StopProcessRequest
    | ReleaseEngineRequest
    | EstimateMemoryRequest
    | ClusterActionRequest
    | HelloMessage
    | SampleMessage
    | CellsMessage
    | ReplyMessage
    | ErrorMessage
    | ClusterMessage
)
"""
Every message of the jupyterlab-vram comm, protocol version 1: what the frontend sends the kernel helper (the comm_open data and the requests) and what the helper sends back. A key required here is one this helper always sends; where a description says a key is absent from older helpers, the frontend's readers also accept messages without it and read it as that description says. This file is the reference of the wire format; docs/protocol.md explains it in prose, and the TypeScript interfaces (src/protocol/*.generated.ts) and the Python TypedDicts (python_helper/jupyterlab_vram_helper/protocol_generated.py) are generated from it by scripts/generate-protocol-types.mjs.
"""
