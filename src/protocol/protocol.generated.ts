/**
 * Generated from protocol/protocol.schema.json by scripts/generate-protocol-types.mjs: do not edit it, edit the schema and run `npm run build:schema`.
 */

/**
 * Every message of the jupyterlab-vram comm, protocol version 1: what the frontend sends the kernel helper (the comm_open data and the requests) and what the helper sends back. A key required here is one this helper always sends; where a description says a key is absent from older helpers, the frontend's readers also accept messages without it and read it as that description says. This file is the reference of the wire format; docs/protocol.md explains it in prose, and the TypeScript interfaces (src/protocol/*.generated.ts) and the Python TypedDicts (python_helper/jupyterlab_vram_helper/protocol_generated.py) are generated from it by scripts/generate-protocol-types.mjs.
 */
export type ProtocolMessage =
  | OpenMessage
  | HelperRequest
  | KernelMessage
  | CellAliveMessage
  | AllocationRecordingMessage
  | EstimateProgressMessage;
/**
 * A request the frontend sends on the open comm; each is answered once, by a reply or an error with its request_id.
 */
export type HelperRequest =
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
  | ClusterActionRequest;
/**
 * The id the frontend chose for a request (at most 256 characters); its answer carries the same one.
 */
export type RequestId = string;
/**
 * A way to free memory: gc.collect(), or torch.cuda.empty_cache() on every device that reserves memory.
 */
export type FreeAction = 'gc' | 'empty_cache';
/**
 * A reference the user cannot see by name: IPython's output cache, the last error's traceback, or the last execution result.
 */
export type HiddenHolderKind =
  'output_cache' | 'last_traceback' | 'last_execution_result';
/**
 * An action across a cluster's workers: gc (gc.collect() in each), empty_cache (torch.cuda.empty_cache() in each that has torch), restart (the engine restarts its workers) or read_allocators (read each worker's PyTorch allocator).
 */
export type ClusterActionName =
  'gc' | 'empty_cache' | 'restart' | 'read_allocators';
/**
 * A message the helper sends that every frontend reads.
 */
export type KernelMessage =
  | HelloMessage
  | SampleMessage
  | CellsMessage
  | ReplyMessage
  | ErrorMessage
  | ClusterMessage;
/**
 * Whose figures a GPU's load figures are: device (the card the kernel sees is a whole GPU) or mig_instance (the kernel sees a MIG instance; the figures named in parent_figures are then the whole parent GPU's); a reader keeps any other string as is.
 */
export type LoadScope = string;
/**
 * Why the clocks are held below their maximum, from NVML's clocks event (throttle) reasons: gpu_idle, applications_clocks_setting, sw_power_cap (power cap), hw_slowdown (HW slowdown: power brake or thermal), sync_boost, sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown, display_clock_setting, board_limit, reliability; a bit NVML does not name here reads bit_N (N its position); a reader keeps any other string as is.
 */
export type ThrottleReason = string;
/**
 * Why a figure is null: no_nvml (NVML cannot be used here), not_supported (this GPU, MIG instance or driver does not give it), no_permission, gpu_lost, not_read_yet (read less often than samples, not read since the helper started), no_samples (the driver's buffer has no sample for the time asked), driver_error (any other NVML failure); a reader keeps any other string as is.
 */
export type LoadUnavailableReason = string;
/**
 * A byte count or counter: a non-negative integer, or null where the figure is unknown.
 */
export type ByteCount = number | null;

/**
 * The data of the comm_open with which the frontend opens the comm.
 */
export interface OpenMessage {
  type: 'open';
  /**
   * The frontend's protocol version; omitted or null skips the version check.
   */
  protocol?: number | null;
  config?: PartialHelperConfig;
  /**
   * Ids of comms this frontend left open in the kernel (a page before a reload, a lost connection), which the helper closes: at most 64, each at most 256 characters.
   *
   * @maxItems 64
   */
  replaces?: string[];
}
/**
 * The config of an open or a configure request: the keys it leaves out keep their current value.
 */
export interface PartialHelperConfig {
  /**
   * How often the sampler reads, in seconds (0.05 to 60).
   */
  interval_s?: number;
  /**
   * The smallest change of a figure that makes a change sample.
   */
  change_threshold_bytes?: number;
  /**
   * The longest time without a sample, in seconds (interval_s to 600).
   */
  heartbeat_s?: number;
  /**
   * Whether the peak counters are reset at each cell start.
   */
  reset_peak_per_cell?: boolean;
  /**
   * Whether the helper looks for a Dask client or a Ray runtime the kernel already uses and reads its telemetry (nothing is imported or started when neither is in use); absent from older helpers (false).
   */
  watch_cluster?: boolean;
  /**
   * How often the cluster's telemetry is read, in seconds (1 to 60, default 2); absent from older helpers.
   */
  cluster_interval_s?: number;
}
/**
 * Change the sampling configuration (kernel-wide: every frontend of the kernel gets it).
 */
export interface ConfigureRequest {
  type: 'configure';
  request_id: RequestId;
  config: PartialHelperConfig;
}
/**
 * Ask for a sample now (reason snapshot), answered by a reply with that sample's seq.
 */
export interface SnapshotRequest {
  type: 'snapshot';
  request_id: RequestId;
}
/**
 * Ask for an empty reply, to learn that the kernel answers.
 */
export interface PingRequest {
  type: 'ping';
  request_id: RequestId;
}
/**
 * Ask for the per-cell records the helper keeps (the last 2000, oldest first) and the timeline of recent samples.
 */
export interface HistoryRequest {
  type: 'history';
  request_id: RequestId;
}
/**
 * Free memory with gc.collect() and/or torch.cuda.empty_cache(); gc always runs first.
 */
export interface FreeMemoryRequest {
  type: 'free_memory';
  request_id: RequestId;
  /**
   * The actions to run: one to eight items.
   *
   * @minItems 1
   * @maxItems 8
   */
  actions: [FreeAction, ...FreeAction[]];
}
/**
 * List what holds memory in the user's namespace and in the hidden holders.
 */
export interface InspectRequest {
  type: 'inspect';
  request_id: RequestId;
  /**
   * The most names listed, 1 to 5000 (default 200).
   */
  max_entries?: number;
  /**
   * How many levels of containers and plain objects' attributes are opened, 0 to 5 (default 2).
   */
  container_depth?: number;
}
/**
 * Delete names of a listing and clear hidden holders, then run the free actions.
 */
export interface DeleteRequest {
  type: 'delete';
  request_id: RequestId;
  /**
   * The listing_id of the inspect result the user chose from.
   */
  listing_id: string;
  /**
   * The names to delete (at most 10,000, each at most 1024 characters).
   */
  names: string[];
  /**
   * The hidden holders to clear; omitted reads as none.
   *
   * @maxItems 12
   */
  hidden?: HiddenHolderKind[];
  /**
   * The free actions to run afterwards; omitted reads as none.
   *
   * @maxItems 8
   */
  free?: FreeAction[];
}
/**
 * Ask for the names of the user's model, optimizer, data loader, loss and scaler, and whether torch and TensorFlow are initialised (for the code snippets).
 */
export interface NotebookNamesRequest {
  type: 'notebook_names';
  request_id: RequestId;
}
/**
 * Start or stop recording where allocations come from (tracemalloc for the host, PyTorch's allocator history for the GPU).
 */
export interface RecordAllocationsRequest {
  type: 'record_allocations';
  request_id: RequestId;
  /**
   * Whether to record.
   */
  enabled: boolean;
  /**
   * How many frames tracemalloc keeps per allocation.
   */
  host_frames?: number;
  /**
   * How many alloc/free events PyTorch's allocator history keeps.
   */
  gpu_max_entries?: number;
}
/**
 * Ask for the live memory per notebook line, as recorded.
 */
export interface AllocationSitesRequest {
  type: 'allocation_sites';
  request_id: RequestId;
  /**
   * The most sites listed per device.
   */
  max_sites?: number;
}
/**
 * Ask for PyTorch's allocator snapshot, pickled, for PyTorch's memory viewer.
 */
export interface AllocationSnapshotRequest {
  type: 'allocation_snapshot';
  request_id: RequestId;
}
/**
 * Stop one process the kernel started: SIGTERM, then SIGKILL after timeout_s.
 */
export interface StopProcessRequest {
  type: 'stop_process';
  request_id: RequestId;
  /**
   * The process's pid, as the tree listed it.
   */
  pid: number;
  /**
   * Its start_time, as the tree listed it: a process with that pid and another start time is another process, and is not signalled.
   */
  start_time: number;
  /**
   * Seconds to wait after SIGTERM before SIGKILL, and after SIGKILL (0.1 to 60, default 5).
   */
  timeout_s?: number;
}
/**
 * List what the kernel started through an engine (a Ray runtime, a Dask client and its LocalCluster, a multiprocessing pool, a DataLoader iterator's workers, a vLLM engine) and can release, or release one of them: the frontend asks the user first, and the request is that confirmation.
 */
export interface ReleaseEngineRequest {
  type: 'release_engine';
  request_id: RequestId;
  /**
   * list (what can be released, nothing is changed) or release (release the one named by kind and name).
   */
  mode: 'list' | 'release';
  /**
   * With mode release, required: the releasable's kind, as the list gave it (ray, dask, mp_pool, dataloader_iter, vllm).
   */
  kind?: string;
  /**
   * With mode release, required: the releasable's name, as the list gave it.
   */
  name?: string;
  /**
   * Seconds to wait for the released processes to end, and the timeout passed to the engine's own close (0.1 to 60, default 10).
   */
  timeout_s?: number;
}
/**
 * Predict the peak GPU memory of one training step and one evaluation step of the named model, optimizer, loss and sample batch, for a range of batch sizes, without allocating on a GPU (PyTorch's fake tensors); with real_step true, the user agreed to a fallback that runs real steps at two small batch sizes when fake tensors cannot run the model.
 */
export interface EstimateMemoryRequest {
  type: 'estimate_memory';
  request_id: RequestId;
  /**
   * The model's name in the user namespace: a name or a dotted attribute path (trainer.model), at most 1024 characters.
   */
  model: string;
  /**
   * The sample batch's name: a tensor, or a tuple, list or dict of tensors, whose first dimension is the batch.
   */
  batch: string;
  /**
   * The optimizer's name; absent or null: no optimizer step (no optimizer state is counted).
   */
  optimizer?: string | null;
  /**
   * The loss's name, a callable taken as loss(output, target) for an (input, target) batch and loss(output) otherwise; absent or null: the sum of the output (or its .loss, where the model returns one).
   */
  loss?: string | null;
  /**
   * The batch sizes to predict (1 to 16 of them, each 1 to 1048576); absent: a range around the sample's.
   *
   * @minItems 1
   * @maxItems 16
   */
  batch_sizes?: [number, ...number[]];
  /**
   * The share of the card's memory kept free when the largest batch size is named (0 to 0.5, default 0.1).
   */
  margin?: number;
  /**
   * The CUDA device the step would run on; absent or null: the model's, else device 0.
   */
  device?: number | null;
  /**
   * Plan for a card of this many bytes (1 GiB to 16 TiB): the largest batch sizes are fitted to it, with an estimated CUDA context, in place of the kernel's own card, or where the kernel sees none (absent or null: the kernel's card).
   */
  card_bytes?: number | null;
  /**
   * The user's consent to the fallback: where fake tensors cannot run the model, run one real training step at two small batch sizes, on the model's own device, with the model's state put back (default false: the refusal is answered instead).
   */
  real_step?: boolean;
}
/**
 * Run an action on every worker of a cluster, through the engine's own remote-call API: the frontend asks the user first (read_allocators changes nothing), and the request is that confirmation.
 */
export interface ClusterActionRequest {
  type: 'cluster_action';
  request_id: RequestId;
  /**
   * The cluster's engine, as ClusterState gives it.
   */
  engine: string;
  /**
   * The cluster's name, as ClusterState gives it.
   */
  cluster: string;
  action: ClusterActionName;
  /**
   * Seconds to wait for the workers (1 to 120, default 30).
   */
  timeout_s?: number;
}
/**
 * The helper's first message on a new comm: what it is and what the kernel has.
 */
export interface HelloMessage {
  type: 'hello';
  /**
   * The helper's protocol version; a frontend of another version reports the mismatch.
   */
  protocol: number;
  /**
   * The helper's version.
   */
  helper_version: string;
  /**
   * The kernel's Python version.
   */
  python: string;
  /**
   * The kernel's process id.
   */
  pid: number;
  /**
   * The kernel machine's host name.
   */
  hostname: string;
  /**
   * Names the run of cell record ids: they start again at 1 when it changes.
   */
  record_series: string;
  /**
   * The kernel's PyTorch; null while torch is not imported.
   */
  torch: TorchInfo | null;
  /**
   * The kernel's TensorFlow; null while TensorFlow is not imported.
   */
  tensorflow: TensorflowInfo | null;
  nvml: NvmlInfo;
  /**
   * The GPUs the kernel sees; empty when it sees none (unless devices_wait_for_cuda).
   */
  devices: DeviceInfo[];
  /**
   * CUDA_VISIBLE_DEVICES names MIG instances, which NVML lists only as their parent GPUs, so the kernel's devices are known once CUDA starts; absent (older helpers) reads as false.
   */
  devices_wait_for_cuda?: boolean;
  /**
   * Why devices is empty when CUDA_VISIBLE_DEVICES hides every GPU; null otherwise (absent from older helpers).
   */
  hidden_gpus?: HiddenGpus | null;
  config: HelperConfig;
}
/**
 * The kernel's PyTorch, as the hello reports it.
 */
export interface TorchInfo {
  /**
   * torch.__version__, or null when unknown.
   */
  version: string | null;
  /**
   * torch.version.cuda; null for CPU builds.
   */
  cuda_build: string | null;
  /**
   * Whether torch has initialised CUDA.
   */
  cuda_initialized: boolean;
}
/**
 * The kernel's TensorFlow, as the hello reports it.
 */
export interface TensorflowInfo {
  /**
   * tf.__version__, or null when unknown.
   */
  version: string | null;
  /**
   * Whether TensorFlow has initialised its GPUs.
   */
  gpus_initialized: boolean;
}
/**
 * Whether the kernel reads NVML, and its driver.
 */
export interface NvmlInfo {
  /**
   * Whether NVML could be used.
   */
  available: boolean;
  /**
   * The driver's version, or null when unknown.
   */
  driver_version: string | null;
  /**
   * Why NVML is not available (null when it is).
   */
  error: string | null;
}
/**
 * A GPU the kernel sees, as the hello lists it.
 */
export interface DeviceInfo {
  /**
   * The CUDA ordinal as the kernel's CUDA runtime numbers it.
   */
  index: number;
  /**
   * The device's name, or null when unknown.
   */
  name: string | null;
  /**
   * The device's memory, or null when unknown.
   */
  total_bytes: number | null;
  /**
   * The device's UUID, or null when unknown.
   */
  uuid: string | null;
}
/**
 * Why the kernel sees no GPU: its CUDA_VISIBLE_DEVICES hides every one NVML lists ("" or "-1" to run on the CPU, a wrong index or UUID).
 */
export interface HiddenGpus {
  /**
   * The GPUs NVML lists on the machine.
   */
  count: number;
  /**
   * The kernel's CUDA_VISIBLE_DEVICES, as set (text from the kernel: render it as text).
   */
  cuda_visible_devices: string;
}
/**
 * The helper's sampling configuration, all keys, as the helper reports it (in hello and in a configure reply).
 */
export interface HelperConfig {
  /**
   * How often the sampler reads, in seconds (0.05 to 60).
   */
  interval_s: number;
  /**
   * The smallest change of a figure that makes a change sample.
   */
  change_threshold_bytes: number;
  /**
   * The longest time without a sample, in seconds (interval_s to 600).
   */
  heartbeat_s: number;
  /**
   * Whether the peak counters are reset at each cell start, for exact per-cell peaks; a hello of an older build of this protocol version that lacks it reads as true.
   */
  reset_peak_per_cell: boolean;
  /**
   * Whether the helper looks for a Dask client or a Ray runtime the kernel already uses and reads its telemetry (nothing is imported or started when neither is in use); absent from older helpers (false).
   */
  watch_cluster?: boolean;
  /**
   * How often the cluster's telemetry is read, in seconds (1 to 60, default 2); absent from older helpers.
   */
  cluster_interval_s?: number;
}
/**
 * The kernel's host and GPU memory figures, sent on change and as a heartbeat.
 */
export interface SampleMessage {
  type: 'sample';
  /**
   * 1, 2, 3... per helper.
   */
  seq: number;
  /**
   * Unix seconds, the kernel's clock.
   */
  time: number;
  /**
   * Why it was sent: initial, change, heartbeat or snapshot; a reader keeps any other string as is.
   */
  reason: string;
  host: HostMemory;
  torch: TorchState;
  tensorflow: TensorflowState;
  /**
   * The GPUs the kernel sees.
   */
  gpus: GpuSample[];
  /**
   * Set only while gpus is empty for that reason; null otherwise (absent from older helpers).
   */
  hidden_gpus: HiddenGpus | null;
  /**
   * Every process the kernel started; null where /proc cannot be read (not Linux), absent from older helpers.
   */
  processes?: ProcessTree | null;
}
/**
 * The kernel's host memory figures in a sample.
 */
export interface HostMemory {
  /**
   * The resident set size of the kernel process.
   */
  rss_bytes: number | null;
  /**
   * The machine's memory.
   */
  total_bytes: number | null;
  /**
   * The machine's available memory.
   */
  available_bytes: number | null;
  /**
   * The kernel's cgroup memory limit; null without one (absent from older helpers).
   */
  container: ContainerMemory | null;
  /**
   * The kernel's own pages in swap (VmSwap), which the RSS leaves out; null when unknown, absent from older helpers.
   */
  swapped_bytes?: number | null;
  /**
   * The machine's swap (SwapTotal; 0 without any); absent from older helpers.
   */
  swap_total_bytes?: number | null;
  /**
   * What is free of the machine's swap; absent from older helpers.
   */
  swap_free_bytes?: number | null;
  /**
   * Processes the out-of-memory killer took on the whole machine, ever (/proc/vmstat's oom_kill); null when unknown, absent from older helpers.
   */
  oom_kill_count?: number | null;
}
/**
 * The tightest cgroup memory limit from the kernel's cgroup up, and that cgroup's figures.
 */
export interface ContainerMemory {
  /**
   * The limit.
   */
  limit_bytes: number;
  /**
   * Everything charged to the limited cgroup (all its processes, page cache); null when unknown.
   */
  usage_bytes: number | null;
  /**
   * The reclaimable page cache in that usage (memory.stat's inactive_file), which the kernel gives back before any OOM kill; null when unknown.
   */
  inactive_file_bytes: number | null;
  /**
   * Processes the out-of-memory killer took in that cgroup, ever; null when unknown.
   */
  oom_kill_count: number | null;
  /**
   * The cgroup hierarchy's version: 1 or 2.
   */
  cgroup_version: number;
  /**
   * The tightest swap limit on the kernel's cgroup path (0 lets nothing go to swap); null where no cgroup limits swap or it is unknown; absent from older helpers.
   */
  swap_limit_bytes?: number | null;
  /**
   * That cgroup's swap in use; null when unknown; absent from older helpers.
   */
  swap_usage_bytes?: number | null;
}
/**
 * Whether torch is imported and has initialised CUDA.
 */
export interface TorchState {
  /**
   * Whether torch is imported in the kernel.
   */
  imported: boolean;
  /**
   * Whether torch has initialised CUDA.
   */
  cuda_initialized: boolean;
}
/**
 * Whether TensorFlow is imported and has initialised its GPUs.
 */
export interface TensorflowState {
  /**
   * Whether TensorFlow is imported in the kernel.
   */
  imported: boolean;
  /**
   * Whether TensorFlow has initialised its GPUs.
   */
  gpus_initialized: boolean;
}
/**
 * One GPU's figures in a sample.
 */
export interface GpuSample {
  /**
   * The CUDA ordinal.
   */
  index: number;
  /**
   * The device's name, or null when unknown.
   */
  name: string | null;
  /**
   * The device's memory.
   */
  total_bytes: number | null;
  /**
   * Null unless torch is imported and CUDA initialised.
   */
  torch: TorchGpuMemory | null;
  /**
   * Null unless NVML is available.
   */
  nvml: NvmlGpuMemory | null;
  /**
   * Null unless TensorFlow has initialised its GPUs.
   */
  tensorflow: TensorflowGpuMemory | null;
  /**
   * How busy the GPU is; null where NVML does not know the device, absent from older helpers (unknown).
   */
  load?: GpuLoad | null;
}
/**
 * A GPU's figures from PyTorch's caching allocator.
 */
export interface TorchGpuMemory {
  /**
   * Memory in tensors.
   */
  allocated_bytes: number | null;
  /**
   * Memory the caching allocator holds.
   */
  reserved_bytes: number | null;
  /**
   * The peak of allocated_bytes since the last reset.
   */
  peak_allocated_bytes: number | null;
  /**
   * Memory in active blocks.
   */
  active_bytes: number | null;
  /**
   * Reserved by the caching allocator but not usable: fragmentation.
   */
  inactive_split_bytes: number | null;
  /**
   * Out-of-memory errors the allocator raised.
   */
  num_ooms: number | null;
  /**
   * Allocations that had to free the cache and retry.
   */
  num_alloc_retries: number | null;
}
/**
 * A GPU's figures from NVML.
 */
export interface NvmlGpuMemory {
  /**
   * Device-wide, all processes.
   */
  used_bytes: number | null;
  /**
   * The device's memory.
   */
  total_bytes: number | null;
  /**
   * NVML's own free: the total less used and less the driver's reservation; absent from older helpers.
   */
  free_bytes?: number | null;
  /**
   * This kernel process; null when NVML cannot attribute it (containers).
   */
  process_used_bytes: number | null;
  /**
   * The processes NVML lists on the device, largest first (at most 32); null when NVML could not list them, absent from older helpers.
   */
  processes?: NvmlGpuProcess[] | null;
}
/**
 * One process on a GPU, as NVML lists it (pids of NVML's pid namespace).
 */
export interface NvmlGpuProcess {
  /**
   * The process id.
   */
  pid: number;
  /**
   * Its memory on the GPU; null where NVML gives no figure for it.
   */
  used_bytes: number | null;
  /**
   * True for the kernel process that sent the sample.
   */
  this_process: boolean;
}
/**
 * The two figures of tf.config.experimental.get_memory_info, per card.
 */
export interface TensorflowGpuMemory {
  /**
   * Memory TensorFlow holds now.
   */
  current_bytes: number | null;
  /**
   * The peak of current_bytes.
   */
  peak_bytes: number | null;
}
/**
 * How busy a GPU is: utilisation, power, temperature, clocks, throttling, PCIe traffic and each process's share. Each figure is null where it cannot be read, and unavailable says why.
 */
export interface GpuLoad {
  /**
   * Unix seconds (the kernel's clock) when utilisation, power and throttling were read: they are read every 2 s, so a sample may carry a reading up to 2 s old.
   */
  read_at: number;
  scope: LoadScope;
  /**
   * On a MIG instance, the figures that are the whole parent GPU's because the driver gives no instance figure (empty otherwise).
   */
  parent_figures: (
    | 'sm_percent'
    | 'memory_bandwidth_percent'
    | 'power_watts'
    | 'power_limit_watts'
    | 'temperature_c'
    | 'sm_clock_mhz'
    | 'memory_clock_mhz'
    | 'throttle_reasons'
    | 'pcie_tx_kb_per_s'
    | 'pcie_rx_kb_per_s'
    | 'processes'
  )[];
  /**
   * The share of the last sample period (1/6 s to 1 s, by product) in which a kernel ran on the GPU, in percent (nvmlDeviceGetUtilizationRates' gpu).
   */
  sm_percent: number | null;
  /**
   * The share of the last sample period in which device memory was read or written, in percent (nvmlDeviceGetUtilizationRates' memory).
   */
  memory_bandwidth_percent: number | null;
  /**
   * The board's power draw, in watts.
   */
  power_watts: number | null;
  /**
   * The power limit the driver enforces, in watts (read every 30 s).
   */
  power_limit_watts: number | null;
  /**
   * The GPU's core temperature, in degrees Celsius (read every 5 s).
   */
  temperature_c: number | null;
  /**
   * The SM clock, in MHz (read every 5 s).
   */
  sm_clock_mhz: number | null;
  /**
   * The memory clock, in MHz (read every 5 s).
   */
  memory_clock_mhz: number | null;
  /**
   * Why the clocks are below their maximum now; empty when nothing holds them.
   */
  throttle_reasons: ThrottleReason[] | null;
  /**
   * PCIe traffic from the GPU, in NVML's KB/s, over a 20 ms window (read every 10 s: each reading blocks the sampler for that window).
   */
  pcie_tx_kb_per_s: number | null;
  /**
   * PCIe traffic to the GPU, in NVML's KB/s, as pcie_tx_kb_per_s.
   */
  pcie_rx_kb_per_s: number | null;
  /**
   * The processes the driver sampled on the GPU since the previous reading, busiest first (at most 32; read every 10 s); empty when none ran a kernel meanwhile.
   */
  processes: GpuProcessLoad[] | null;
  unavailable: GpuLoadUnavailable;
}
/**
 * One process's share of a GPU's activity, from the driver's per-process utilisation samples since the previous reading (pids of NVML's pid namespace).
 */
export interface GpuProcessLoad {
  /**
   * The process id.
   */
  pid: number;
  /**
   * The share of time its kernels ran on the SMs, in percent (the mean of its samples); null where the driver gives none.
   */
  sm_percent: number | null;
  /**
   * The share of time it read or wrote device memory, in percent; null where the driver gives none.
   */
  memory_percent: number | null;
  /**
   * Its video encoder utilisation, in percent; null where the driver gives none.
   */
  encoder_percent: number | null;
  /**
   * Its video decoder utilisation, in percent; null where the driver gives none.
   */
  decoder_percent: number | null;
  /**
   * True for the kernel process that sent the sample.
   */
  this_process: boolean;
}
/**
 * Why each null figure of a GPU's load figures is null; a figure that is known is not listed.
 */
export interface GpuLoadUnavailable {
  sm_percent?: LoadUnavailableReason;
  memory_bandwidth_percent?: LoadUnavailableReason;
  power_watts?: LoadUnavailableReason;
  power_limit_watts?: LoadUnavailableReason;
  temperature_c?: LoadUnavailableReason;
  sm_clock_mhz?: LoadUnavailableReason;
  memory_clock_mhz?: LoadUnavailableReason;
  throttle_reasons?: LoadUnavailableReason;
  pcie_tx_kb_per_s?: LoadUnavailableReason;
  pcie_rx_kb_per_s?: LoadUnavailableReason;
  processes?: LoadUnavailableReason;
}
/**
 * Every process the kernel started, as the sampler last read them.
 */
export interface ProcessTree {
  /**
   * How descendants were found: task_children (/proc/<pid>/task/<tid>/children) or stat_scan (one scan of /proc/* /stat for parent ids, where the kernel lacks CONFIG_PROC_CHILDREN).
   */
  method: string;
  /**
   * Unix seconds when the tree was read (its pace may be slower than the sample's).
   */
  read_at: number;
  /**
   * The processes, parents before their children, each branch by pid; [] when the kernel has none.
   */
  processes: TreeProcess[];
  /**
   * The kernel and its processes together; null while it has none (the kernel's own figures are the sample's).
   */
  totals: ProcessTreeTotals | null;
}
/**
 * One process the kernel started (a descendant, or one re-parented away that is still followed).
 */
export interface TreeProcess {
  /**
   * The process id, in the kernel's pid namespace.
   */
  pid: number;
  /**
   * Field 22 of /proc/<pid>/stat: clock ticks after boot when it started. pid and start_time together name one process (a pid is reused); a stop_process request must give both.
   */
  start_time: number;
  /**
   * Its parent's pid now (field 4 of /proc/<pid>/stat).
   */
  ppid: number;
  /**
   * True when its parent chain no longer reaches the kernel (its parent ended, or it daemonised): it is followed because it was seen as a descendant.
   */
  reparented: boolean;
  /**
   * 1 for a child of the kernel, 2 for a grandchild, ...; for a re-parented process, its depth under the topmost re-parented ancestor plus 1.
   */
  depth: number;
  /**
   * The process's comm (/proc/<pid>/comm, at most 15 bytes; a process title such as ray::IDLE shows here).
   */
  name: string;
  /**
   * A short summary of its command line: the arguments joined by spaces, at most 160 characters (cut with an ellipsis).
   */
  command: string;
  /**
   * What it is: dataloader_worker, mp_pool_worker, mp_process, mp_helper, torch_distributed_rank, vllm_engine, ray_worker, raylet, ray_node, dask_worker, dask_nanny, other; a reader keeps any other string as is.
   */
  role: string;
  /**
   * What the role was read from: multiprocessing (the kernel's own multiprocessing registry), cmdline, name, environment, parent; null for other.
   */
  role_basis: string | null;
  /**
   * True where the role is a guess from indirect evidence (a parent's role, a process title), false where it was read from the process's own registration or command.
   */
  role_guess: boolean;
  host: ProcessHostMemory;
  /**
   * One entry per device where NVML's process list names its pid; [] where none does or NVML is not available.
   */
  gpus: ProcessGpuMemory[];
}
/**
 * One process's host memory: USS and PSS from /proc/<pid>/smaps_rollup (read at a paced rate), its RSS from /proc/<pid>/stat at every reading.
 */
export interface ProcessHostMemory {
  /**
   * Which figure host_bytes is: uss (smaps_rollup was read) or rss (smaps_rollup cannot be read for this process: permission, Linux older than 4.14); a reader keeps any other string as is.
   */
  measure: string;
  /**
   * The figure the totals count for this process: uss_bytes where measure is uss, else rss_bytes.
   */
  host_bytes: number | null;
  /**
   * Unique set size, Private_Clean + Private_Dirty of smaps_rollup: what its end would give back; null where smaps_rollup is not read.
   */
  uss_bytes: number | null;
  /**
   * Proportional set size (Pss of smaps_rollup): each shared page divided among the processes that map it; null where smaps_rollup is not read.
   */
  pss_bytes: number | null;
  /**
   * Resident set size (field 24 of /proc/<pid>/stat): pages shared with the kernel or siblings are counted in full.
   */
  rss_bytes: number | null;
  /**
   * Its pages in swap (Swap of smaps_rollup); null where smaps_rollup is not read.
   */
  swap_bytes: number | null;
  /**
   * Unix seconds when uss_bytes, pss_bytes and swap_bytes were read (smaps_rollup is paced: they may be older than the sample); null where never read.
   */
  rollup_at: number | null;
}
/**
 * What NVML's per-process list attributes to one process on one GPU.
 */
export interface ProcessGpuMemory {
  /**
   * The CUDA ordinal, as in the sample's gpus.
   */
  index: number;
  /**
   * The bytes NVML lists for the process's pid on that device; null where NVML lists it without a figure.
   */
  used_bytes: number | null;
}
/**
 * The kernel and its processes together.
 */
export interface ProcessTreeTotals {
  /**
   * The kernel's RSS plus every process's host_bytes (its USS, or its RSS where measure is rss): a page shared with the kernel is counted once, in the kernel's RSS; pages the processes share only among themselves are left out. null where the kernel's RSS is unknown.
   */
  host_bytes: number | null;
  /**
   * The processes' host_bytes alone.
   */
  processes_host_bytes: number | null;
  /**
   * The processes' PSS summed; null unless every process's smaps_rollup was read.
   */
  processes_pss_bytes: number | null;
  /**
   * uss when every process's host_bytes is its USS, uss_and_rss when some are RSS, rss when all are.
   */
  host_measure: string;
  /**
   * One entry per device in the sample's gpus.
   */
  gpus: TreeGpuTotal[];
}
/**
 * One GPU's memory of the kernel and its processes together.
 */
export interface TreeGpuTotal {
  /**
   * The CUDA ordinal, as in the sample's gpus.
   */
  index: number;
  /**
   * The kernel's NVML figure (process_used_bytes) plus its processes'; null where the kernel's figure is unknown.
   */
  used_bytes: number | null;
  /**
   * Its processes' alone (0 where NVML lists none of them).
   */
  processes_used_bytes: number | null;
}
/**
 * Per-cell records, oldest first: one message per round of the helper's sender (a lone cell's record alone; a Run All gathers the cells of about 50 ms).
 */
export interface CellsMessage {
  type: 'cells';
  /**
   * The records, oldest first.
   */
  records: CellMemoryRecord[];
}
/**
 * What one executed cell did to memory.
 */
export interface CellMemoryRecord {
  /**
   * 1, 2, 3... per helper (a restart starts again at 1).
   */
  record_id: number;
  /**
   * The In[n] number; null if IPython gave none.
   */
  execution_count: number | null;
  /**
   * The notebook cell's id (the cell model's id); null for console executions.
   */
  cell_id: string | null;
  /**
   * Unix seconds (the kernel's clock) when the cell started.
   */
  started: number;
  /**
   * How long the cell ran, in seconds.
   */
  duration_s: number;
  /**
   * ok, error or interrupted; a reader keeps any other string as is.
   */
  status: string;
  /**
   * Why the cell failed; null when its status is ok.
   */
  error: CellError | null;
  /**
   * True when every peak in the record is exact.
   */
  peak_exact: boolean;
  host: CellHostMemory;
  /**
   * Devices whose caching allocator holds or held memory (may be empty).
   */
  gpus: CellGpuMemory[];
  /**
   * The out-of-memory diagnosis; null unless the cell died of out-of-memory (absent from older helpers).
   */
  oom: OomDiagnosis | null;
  /**
   * How busy each GPU the kernel sees was during the cell (empty without NVML or GPUs); absent from older helpers (unknown).
   */
  gpu_load?: CellGpuLoad[];
  processes?: CellProcessTree;
  cluster?: CellCluster;
}
/**
 * Why a cell failed; null in a record whose status is ok.
 */
export interface CellError {
  /**
   * The exception's class name (kernel text: render it as text).
   */
  type: string;
  /**
   * The first 1000 characters of str(exception) (kernel text).
   */
  message_head: string;
  /**
   * Whether the error is an out-of-memory error.
   */
  out_of_memory: boolean;
}
/**
 * The kernel's RSS around one cell.
 */
export interface CellHostMemory {
  /**
   * The RSS when the cell started.
   */
  rss_before_bytes: number | null;
  /**
   * The RSS when the cell ended.
   */
  rss_after_bytes: number | null;
  /**
   * The highest RSS seen while the cell ran.
   */
  rss_peak_bytes: number | null;
  /**
   * Whether the peak is exact rather than sampled.
   */
  peak_exact: boolean;
}
/**
 * One device's caching allocator figures around one cell.
 */
export interface CellGpuMemory {
  /**
   * The CUDA ordinal, as in samples.
   */
  index: number;
  /**
   * Memory in tensors when the cell started.
   */
  allocated_before_bytes: number | null;
  /**
   * Memory in tensors when the cell ended.
   */
  allocated_after_bytes: number | null;
  /**
   * The peak of memory in tensors while the cell ran.
   */
  allocated_peak_bytes: number | null;
  /**
   * Memory the allocator held when the cell started.
   */
  reserved_before_bytes: number | null;
  /**
   * Memory the allocator held when the cell ended.
   */
  reserved_after_bytes: number | null;
  /**
   * The peak of memory the allocator held while the cell ran.
   */
  reserved_peak_bytes: number | null;
  /**
   * Whether the peaks are exact (the counters were reset at the cell's start).
   */
  peak_exact: boolean;
}
/**
 * The out-of-memory diagnosis a cell record carries when the cell died of out-of-memory: numbers and cause ids, which the frontend turns into words and actions.
 */
export interface OomDiagnosis {
  /**
   * Where memory ran out: cuda, cuda_library, tensorflow, host, mps or xla.
   */
  kind: string;
  /**
   * cuBLAS, cuDNN, ... for a library's allocation failure; null otherwise.
   */
  library: string | null;
  /**
   * Whose allocation failed, as the message says (torch, tensorflow, numpy); null when it does not say, absent from older helpers.
   */
  framework?: string | null;
  /**
   * The CUDA ordinal; null for host RAM or when unknown.
   */
  device_index: number | null;
  /**
   * What the failing allocation asked for.
   */
  requested_bytes: number | null;
  /**
   * The device's memory (host: RAM).
   */
  total_bytes: number | null;
  /**
   * What was free on the device (host: available RAM).
   */
  free_bytes: number | null;
  /**
   * Held by this kernel's PyTorch allocator, in tensors.
   */
  allocated_bytes: number | null;
  /**
   * Cached by this kernel's allocator but not in tensors (fragmentation).
   */
  reserved_unallocated_bytes: number | null;
  /**
   * This kernel's process in all (GPU: per NVML or the message; host: RSS).
   */
  process_in_use_bytes: number | null;
  /**
   * What other processes held on the device.
   */
  other_processes_bytes: number | null;
  /**
   * The other processes on the device, largest first.
   */
  other_processes: OomProcess[];
  /**
   * The most this kernel could have held, holding nothing it can give back: what too_big compared the request with; null when unknown.
   */
  capacity_bytes: number | null;
  /**
   * The memory-fraction cap (torch.cuda.set_per_process_memory_fraction), when one was set.
   */
  allowed_bytes: number | null;
  /**
   * Allocations that had to free the cache and retry.
   */
  num_alloc_retries: number | null;
  /**
   * Held by the notebook's names, output cache and last traceback on that device.
   */
  stale_bytes: number | null;
  /**
   * What holds stale_bytes, largest first.
   */
  stale_holders: OomStaleHolder[];
  /**
   * The largest names the failing cell itself uses, left out of stale_bytes and stale_holders (deleting them is no fix for that cell); absent from older helpers.
   */
  in_use_holders?: OomStaleHolder[];
  /**
   * Whether this kernel's torch knows the allocator option expandable_segments (torch 2.1 and later); null when it cannot be told, or not torch's CUDA.
   */
  expandable_segments?: boolean | null;
  /**
   * Whether torch's allocator has expandable segments on already; null when it cannot be told.
   */
  expandable_segments_on?: boolean | null;
  /**
   * The likely causes, most likely first; empty when nothing can be said.
   */
  causes: OomCause[];
  /**
   * The notebook lines holding the most on that device at the failure; null when the kernel could not say (absent from older helpers).
   */
  allocation_sites?: OomAllocationSites | null;
  /**
   * For a DataLoader worker killed by a signal: what the workers held; null or absent otherwise (and from older helpers).
   */
  dataloader_workers?: OomDataLoaderWorkers | null;
  /**
   * Set where the error came from a cluster worker (the device figures are then the worker's, as its message gives them, not the kernel's); null otherwise, absent from older helpers.
   */
  cluster_worker?: ClusterOomWorker | null;
}
/**
 * Another process on the failing GPU.
 */
export interface OomProcess {
  /**
   * The process id.
   */
  pid: number;
  /**
   * Its memory on the GPU; for a host diagnosis (a child of the kernel only), the host memory of its own (USS, or RSS where that is all the tree read); null where no figure is known.
   */
  used_bytes: number | null;
  /**
   * True when the process is in this kernel's process tree (a process the kernel started); absent (read as false) for others and from older helpers.
   */
  child_of_kernel?: boolean;
  /**
   * For a child of the kernel: its start_time, which a stop_process request needs with the pid.
   */
  start_time?: number;
  /**
   * For a child of the kernel: its role in the process tree (see TreeProcess.role).
   */
  role?: string;
  /**
   * For a child of the kernel: what the frontend can offer, best first: release_engine (a release_engine request with release), stop_process (a stop_process request with pid and start_time); a reader keeps an unknown id as is and may ignore it.
   */
  remedies?: string[];
  /**
   * For a child of the kernel that a releasable holds: the kind and name a release_engine request takes; null or absent where none holds it.
   */
  release?: OomRelease | null;
}
/**
 * The releasable that holds a process named by an out-of-memory diagnosis.
 */
export interface OomRelease {
  /**
   * The releasable's kind (see Releasable.kind).
   */
  kind: string;
  /**
   * The releasable's name (see Releasable.name).
   */
  name: string;
}
/**
 * Something of the notebook that holds memory on the failing device.
 */
export interface OomStaleHolder {
  /**
   * name (a variable), output_cache, last_traceback or last_execution_result.
   */
  holder: string;
  /**
   * The variable's name, or a label of the hidden holder.
   */
  label: string;
  /**
   * What it holds on that device.
   */
  bytes: number;
}
/**
 * One likely cause of an out-of-memory error, as the kernel classifies it.
 */
export interface OomCause {
  /**
   * too_big, fragmentation, stale_references, other_processes, child_processes (processes this kernel started hold the memory: other_processes lists them with child_of_kernel true; absent from older helpers) or dataloader_workers (the kernel's DataLoader workers were killed, most likely by the out-of-memory killer: dataloader_workers says what they held); a reader keeps an unknown id from a newer helper as is.
   */
  cause: string;
  /**
   * What removing this cause would make available; null for too_big.
   */
  gain_bytes: number | null;
}
/**
 * The notebook lines holding the most on the failing device at the failure.
 */
export interface OomAllocationSites {
  /**
   * False when allocations were not recorded, so nothing could be said.
   */
  recording: boolean;
  /**
   * The sites, largest first.
   */
  sites: AllocationSite[];
}
/**
 * Live memory allocated by one line (of a cell, or outside the notebook).
 */
export interface AllocationSite {
  /**
   * "host" or "cuda:<index>".
   */
  device: string;
  /**
   * The notebook line; null when no notebook frame was recorded (see frame).
   */
  cell: SiteCell | null;
  /**
   * The innermost frame outside the notebook, when no notebook frame was recorded; null otherwise.
   */
  frame: SiteFrame | null;
  /**
   * The line's text (kernel data: render it as text).
   */
  code: string | null;
  /**
   * The library frame just inside the notebook line.
   */
  library_frame: SiteFrame | null;
  /**
   * The live bytes.
   */
  bytes: number;
  /**
   * The live allocations.
   */
  count: number;
}
/**
 * The notebook line charged with a site.
 */
export interface SiteCell {
  /**
   * The cell's In[n] number, or null.
   */
  execution_count: number | null;
  /**
   * The notebook cell's id, or null.
   */
  cell_id: string | null;
  /**
   * The line in the cell, from 1.
   */
  line: number;
  /**
   * Cells that ran the same code (two or more): their allocations share one compiled file and cannot be told apart; absent otherwise.
   */
  same_code_cells?: string[];
}
/**
 * A frame of a stack: a library's, or the innermost one outside the notebook.
 */
export interface SiteFrame {
  /**
   * The frame's file.
   */
  filename: string;
  /**
   * The line number.
   */
  line: number;
  /**
   * The function's name, or null when unknown.
   */
  function: string | null;
}
/**
 * What the kernel's DataLoader workers held when one was killed: the explanation of a 'DataLoader worker (pid N) is killed by signal: Killed' error.
 */
export interface OomDataLoaderWorkers {
  /**
   * The pids the error names.
   */
  killed_pids: number[];
  /**
   * The signal as the error names it (Killed, Bus error, ...).
   */
  signal: string;
  /**
   * The killed workers and their siblings as last read (workers of this kernel the tree saw within the last minute), largest host_bytes first; [] where the tree never saw them.
   */
  workers: OomWorker[];
  /**
   * The workers' host_bytes summed; null where none was read.
   */
  workers_host_bytes: number | null;
  /**
   * How much their USS grew in all since they were first read; null where unknown.
   */
  uss_growth_bytes: number | null;
  /**
   * True when their USS grew by at least a quarter of what they hold (and 64 MiB): pages shared with the kernel became each worker's own as the workers touched Python objects of the dataset (reference counts write to every object read).
   */
  copy_on_write: boolean;
  /**
   * The id of the snippet that fits (see schema/plugin.json's snippets); null when none does.
   */
  snippet: string | null;
}
/**
 * One DataLoader worker of the kernel, as the process tree last read it before the failure.
 */
export interface OomWorker {
  /**
   * The worker's pid.
   */
  pid: number;
  /**
   * Its start_time.
   */
  start_time: number;
  /**
   * Whether the error names it as killed.
   */
  killed: boolean;
  /**
   * Its host_bytes at that reading (USS, or RSS where smaps_rollup could not be read).
   */
  host_bytes: number | null;
  /**
   * Its USS at that reading; null where never read.
   */
  uss_bytes: number | null;
  /**
   * How much its USS grew from the first reading to that one (0 where it shrank); null with fewer than two readings.
   */
  uss_growth_bytes: number | null;
  /**
   * Unix seconds of that reading; null where the tree never read the worker.
   */
  read_at: number | null;
}
/**
 * Where an out-of-memory error came from a cluster worker: which, and its last figures.
 */
export interface ClusterOomWorker {
  /**
   * dask or ray.
   */
  engine: string;
  /**
   * The cluster's name (kernel text).
   */
  cluster: string;
  /**
   * The worker's id, where the error or the events name it (kernel text).
   */
  worker: string | null;
  /**
   * Its pid, where known.
   */
  pid: number | null;
  /**
   * memory_restart, killed_worker, oom_killed or cuda_oom, as ClusterEvent; a reader keeps any other string as is.
   */
  kind: string;
  /**
   * Its last figures before the error; null where the helper never read it.
   */
  last: ClusterLastFigures | null;
}
/**
 * A worker's last figures before an event.
 */
export interface ClusterLastFigures {
  /**
   * Unix seconds of the reading.
   */
  read_at: number;
  /**
   * Its memory then.
   */
  memory_bytes: number | null;
  /**
   * Its memory limit.
   */
  memory_limit_bytes: number | null;
  /**
   * What it had spilled.
   */
  spilled_bytes: number | null;
  /**
   * GPU memory it used (summed over its GPUs).
   */
  gpu_used_bytes: number | null;
}
/**
 * How busy one GPU was while a cell ran, from the driver's own sample buffer and energy counter, read after the cell ended. The helper sends figures, not verdicts: the frontend decides what they suggest (docs/protocol.md).
 */
export interface CellGpuLoad {
  /**
   * The CUDA ordinal, as in samples.
   */
  index: number;
  scope: LoadScope;
  /**
   * On a MIG instance, the figures that are the whole parent GPU's (empty otherwise).
   */
  parent_figures: ('sm_mean_percent' | 'energy_joules' | 'throttle_reasons')[];
  /**
   * The mean GPU utilisation over the cell, in percent: the driver's samples inside the cell, and where its buffer does not reach back to the cell's start, the helper's own readings of the rest, weighted by the time each covers.
   */
  sm_mean_percent: number | null;
  /**
   * The highest GPU utilisation sample over the cell, in percent.
   */
  sm_max_percent: number | null;
  /**
   * How many of the driver's utilisation samples the figures come from (0 when none fell in the cell).
   */
  utilization_samples: number;
  /**
   * full: the driver's buffer reaches back to the cell's start; partial: it does not (older samples were overwritten), and covered_s says how much of the cell it covers; none: it has no sample for the cell. A reader keeps any other string as is.
   */
  coverage: string;
  /**
   * Seconds of the cell, counted back from its end, that the driver's samples cover.
   */
  covered_s: number;
  /**
   * The GPU's energy while the cell ran, in joules (the whole GPU's: every process on it).
   */
  energy_joules: number | null;
  /**
   * How energy_joules was found: energy_counter (the difference of the driver's energy counter, each end interpolated between the readings on either side of it, about 2 s apart) or power_samples (the driver's power samples integrated over the cell, where the board has no energy counter); null with energy_joules.
   */
  energy_method: string | null;
  /**
   * Every clocks event (throttle) reason seen in the readings during the cell and in one taken right after it; empty when none was.
   */
  throttle_reasons: ThrottleReason[] | null;
  unavailable: CellGpuLoadUnavailable;
}
/**
 * Why each null figure of a cell's GPU load is null; a figure that is known is not listed.
 */
export interface CellGpuLoadUnavailable {
  sm_mean_percent?: LoadUnavailableReason;
  energy_joules?: LoadUnavailableReason;
  throttle_reasons?: LoadUnavailableReason;
}
/**
 * The kernel's processes around one cell: their host memory (processes_host_bytes of the tree totals) and GPU memory before and after it, and their sampled maxima. Present only where the kernel had processes at some reading of the cell; absent from older helpers.
 */
export interface CellProcessTree {
  /**
   * The processes' host memory when the cell started (the last tree reading by then; 0 with none).
   */
  host_before_bytes: number | null;
  /**
   * Their host memory after the cell (a tree reading made after it ended).
   */
  host_after_bytes: number | null;
  /**
   * The largest of before, after and the readings during the cell: a sampled maximum, not an exact peak (a process that lived between two readings is missed).
   */
  host_sampled_max_bytes: number | null;
  /**
   * How many processes the reading at the start counted.
   */
  processes_before: number;
  /**
   * How many the reading after the cell counted.
   */
  processes_after: number;
  /**
   * The tree readings' spacing while the cell ran (the sampler's interval): the sampled maxima can miss what lived shorter than this.
   */
  sample_spacing_s: number;
  /**
   * How many tree readings the cell's sampled maxima came from, before and after included.
   */
  samples: number;
  /**
   * One entry per device where a process of the kernel held memory.
   */
  gpus: CellTreeGpu[];
}
/**
 * One GPU's memory of the kernel's processes around one cell (NVML's per-process figures, summed).
 */
export interface CellTreeGpu {
  /**
   * The CUDA ordinal, as in samples.
   */
  index: number;
  /**
   * Before the cell (the last tree reading at its start).
   */
  before_bytes: number | null;
  /**
   * After the cell.
   */
  after_bytes: number | null;
  /**
   * The largest of before, after and the readings during the cell: a sampled maximum, not an exact peak.
   */
  sampled_max_bytes: number | null;
}
/**
 * The memory of the clusters the kernel drives around one cell, from their telemetry: sampled, never an exact peak. Present only where a cluster was attached during the cell; absent from older helpers.
 */
export interface CellCluster {
  /**
   * The names of the clusters counted.
   */
  clusters: string[];
  /**
   * Their workers' memory summed at the last reading before the cell.
   */
  before_bytes: number | null;
  /**
   * At the first reading after it.
   */
  after_bytes: number | null;
  /**
   * The largest of before, after and the readings during the cell: a sampled maximum (a rise between two readings is missed).
   */
  sampled_max_bytes: number | null;
  /**
   * How many workers the reading before counted.
   */
  workers_before: number;
  /**
   * How many the reading after counted.
   */
  workers_after: number;
  /**
   * How many readings the figures come from, before and after included.
   */
  samples: number;
  /**
   * The readings' spacing (the cluster interval).
   */
  sample_spacing_s: number;
  /**
   * The ids of the cluster events seen while the cell ran.
   */
  events: number[];
}
/**
 * The answer to a request that succeeded.
 */
export interface ReplyMessage {
  type: 'reply';
  request_id: RequestId;
  /**
   * The request's type.
   */
  request_type: string;
  /**
   * The request's result, always an object ({} for ping); its shape depends on request_type (HistoryResult, FreeMemoryResult, InspectResult, ...).
   */
  result: {
    [k: string]: unknown;
  };
}
/**
 * The answer to a request that failed, or an error that answers no request.
 */
export interface ErrorMessage {
  type: 'error';
  /**
   * The request's id; null when the request had none that could be read, and for errors that answer no request.
   */
  request_id: string | null;
  /**
   * malformed, unknown_type, invalid_config, internal, refused, stale_listing or interrupted; a reader keeps any other string as is.
   */
  code: string;
  /**
   * What went wrong, in words.
   */
  message: string;
}
/**
 * The clusters the kernel drives and their workers' memory, sent to every comm after each reading of their telemetry that changed something, and once when the last cluster goes.
 */
export interface ClusterMessage {
  type: 'cluster';
  /**
   * 1, 2, 3... per helper.
   */
  seq: number;
  /**
   * Unix seconds, the kernel's clock.
   */
  time: number;
  /**
   * The clusters found; empty when the kernel drives none (any more).
   */
  clusters: ClusterState[];
  /**
   * The latest events (at most 50), oldest first; a reader keeps them by id.
   */
  events: ClusterEvent[];
}
/**
 * One cluster the kernel drives: a Dask client's scheduler or the Ray runtime the kernel initialised.
 */
export interface ClusterState {
  /**
   * dask or ray; a reader keeps any other string as is.
   */
  engine: string;
  /**
   * Names the cluster: the scheduler's address, or Ray's address (kernel text); actions name it so.
   */
  name: string;
  /**
   * How the helper found it: default_client (Dask's default client), namespace (a Client in the user's namespace) or initialized (ray.is_initialized()); a reader keeps any other string as is.
   */
  found_by: string;
  /**
   * The namespace name of the client, where found_by is namespace.
   */
  variable: string | null;
  /**
   * The engine's version.
   */
  version: string | null;
  /**
   * The engine's dashboard address, where it has one (kernel text: render it as text).
   */
  dashboard: string | null;
  /**
   * ok (the last reading answered), timeout (the scheduler did not answer in time), unreachable, closed (the client or runtime was closed) or error; a reader keeps any other string as is.
   */
  status: string;
  /**
   * Why the figures are missing or old, in words, where status is not ok (kernel text).
   */
  message: string | null;
  /**
   * Unix seconds (the kernel's clock) of the last reading that answered; null before any.
   */
  read_at: number | null;
  /**
   * What that reading took, in milliseconds of wall time.
   */
  read_ms: number | null;
  /**
   * How often the telemetry is read, in seconds.
   */
  interval_s: number;
  /**
   * Its workers at the last reading that answered.
   */
  workers: ClusterWorker[];
  totals: ClusterTotals;
  /**
   * What this engine's telemetry cannot show here, one sentence each (kernel text).
   */
  unseen: string[];
  /**
   * The actions a cluster_action request can run on it.
   */
  actions: ClusterActionName[];
}
/**
 * One worker of a cluster (a Dask worker; a Ray node or worker process), as the engine's telemetry last gave it.
 */
export interface ClusterWorker {
  /**
   * The worker's id: a Dask worker's address; a Ray node's id, or node id and pid for a Ray worker process (kernel text).
   */
  id: string;
  /**
   * Its name (kernel text).
   */
  name: string;
  /**
   * dask_worker, ray_node or ray_worker; a reader keeps any other string as is.
   */
  role: string;
  /**
   * The machine it runs on (kernel text).
   */
  host: string;
  /**
   * Its process id, where known (Dask's LocalCluster, Ray's local workers).
   */
  pid: number | null;
  /**
   * Whether it runs on the kernel's machine, where its figures could be checked against /proc.
   */
  local: boolean;
  /**
   * The engine's word for its state: running, paused, closing, ... (kernel text).
   */
  status: string;
  /**
   * The process's memory (RSS) as the engine reports it, or as /proc gives it where memory_source is proc; for a Ray node, the node's used memory.
   */
  memory_bytes: number | null;
  /**
   * engine or proc: where memory_bytes comes from; a reader keeps any other string as is.
   */
  memory_source: string;
  /**
   * The engine's memory limit for it (Dask's memory_limit); null where it has none.
   */
  memory_limit_bytes: number | null;
  /**
   * What the engine holds for tasks in memory (Dask's managed memory); null where it does not say.
   */
  managed_bytes: number | null;
  /**
   * What the engine spilled to disk (Dask's spilled data, Ray's spilled objects); null where it does not say.
   */
  spilled_bytes: number | null;
  /**
   * Its threads for tasks, where the engine says.
   */
  nthreads: number | null;
  /**
   * The GPUs it uses, where the engine or the driver reports them (empty otherwise).
   */
  gpus: ClusterWorkerGpu[];
  /**
   * Its PyTorch allocator at the last reading the user asked for; null before any.
   */
  allocator: ClusterAllocatorReading | null;
}
/**
 * A GPU a cluster worker uses.
 */
export interface ClusterWorkerGpu {
  /**
   * The device's index on its machine, where known.
   */
  index: number | null;
  /**
   * The device's name, where the engine reports it (kernel text).
   */
  name: string | null;
  /**
   * Memory in use: by this worker's process (scope process) or on the whole device (scope device).
   */
  used_bytes: number | null;
  /**
   * The device's memory.
   */
  total_bytes: number | null;
  /**
   * process (the driver's figure for the worker's pid, read on the kernel's machine) or device (the engine reports the device's use, all processes together); a reader keeps any other string as is.
   */
  scope: string;
  /**
   * The device's utilisation in percent, where the engine reports it.
   */
  utilization_percent: number | null;
}
/**
 * What a worker's PyTorch allocator held when the user asked for it (the helper never runs code on workers otherwise).
 */
export interface ClusterAllocatorReading {
  /**
   * Unix seconds (the kernel's clock) of the reading.
   */
  read_at: number;
  /**
   * Whether the worker had imported torch.
   */
  torch: boolean;
  /**
   * Whether CUDA was initialised in the worker (no device is listed otherwise, and none was initialised by the reading).
   */
  cuda_initialized: boolean;
  /**
   * One entry per device the worker's allocator knows.
   */
  devices: ClusterAllocatorDevice[];
}
/**
 * One CUDA device's PyTorch caching allocator in a cluster worker.
 */
export interface ClusterAllocatorDevice {
  /**
   * The CUDA ordinal in the worker.
   */
  device: number;
  /**
   * Held in tensors.
   */
  allocated_bytes: number | null;
  /**
   * Reserved by the allocator (tensors and its cache).
   */
  reserved_bytes: number | null;
  /**
   * The most held in tensors since the worker started or last reset its peak.
   */
  peak_bytes: number | null;
}
/**
 * A cluster's figures summed over its workers.
 */
export interface ClusterTotals {
  /**
   * How many workers it has.
   */
  workers: number;
  /**
   * How many of them are paused by their memory limit.
   */
  paused: number;
  /**
   * Their memory summed (null where one is unknown).
   */
  memory_bytes: number | null;
  /**
   * Their limits summed (null where one has none).
   */
  memory_limit_bytes: number | null;
  /**
   * Their spilled bytes summed (null where none says).
   */
  spilled_bytes: number | null;
  /**
   * GPU memory in use summed over their GPUs (null without GPU figures).
   */
  gpu_used_bytes: number | null;
  /**
   * Their GPUs' memory summed (null without GPU figures).
   */
  gpu_total_bytes: number | null;
}
/**
 * Something that happened to a cluster worker's memory or life: paused, spilling, restarted by its memory limit, gone, killed by an out-of-memory killer, or a CUDA out-of-memory error it raised.
 */
export interface ClusterEvent {
  /**
   * 1, 2, 3... per helper.
   */
  id: number;
  /**
   * Unix seconds (the kernel's clock) when the helper saw it.
   */
  time: number;
  /**
   * dask or ray.
   */
  engine: string;
  /**
   * The cluster's name, as ClusterState gives it (kernel text).
   */
  cluster: string;
  /**
   * The worker's id, where known (kernel text).
   */
  worker: string | null;
  /**
   * The worker's pid, where known.
   */
  pid: number | null;
  /**
   * paused (the worker stopped taking tasks at its memory limit's pause fraction), resumed, spilling (it began to spill to disk), memory_restart (its nanny restarted it past its memory limit's terminate fraction), left (it left the cluster; the engine said no reason), killed_worker (a task failed because the workers that ran it died), oom_killed (Ray's memory monitor killed a task or an actor) or cuda_oom (a task raised a CUDA out-of-memory error on it); a reader keeps any other string as is.
   */
  kind: string;
  /**
   * The engine's own words for it: its log line or the error's head (kernel text).
   */
  engine_message: string | null;
  /**
   * The worker's last figures before the event; null where the helper never read it.
   */
  last: ClusterLastFigures | null;
}
/**
 * Broadcast after cells ran while allocations are recorded: the cells whose allocations are still alive.
 */
export interface CellAliveMessage {
  type: 'cell_alive';
  /**
   * At most 500 cells, largest first.
   */
  cells: CellAliveBytes[];
  /**
   * What computing the message took on the sender thread, in milliseconds.
   */
  elapsed_ms?: number;
}
/**
 * Bytes a cell allocated that are still alive, per device.
 */
export interface CellAliveBytes {
  /**
   * The cell's last In[n] number, or null.
   */
  execution_count: number | null;
  /**
   * The notebook cell's id, or null.
   */
  cell_id: string | null;
  alive_bytes: BytesByDevice;
  /**
   * The sum of alive_bytes.
   */
  total_bytes: number;
  /**
   * Its live bytes rose after each of its last runs: a likely leak (cell_alive messages only).
   */
  growing: boolean;
  /**
   * Its figure after each of its recent runs; in cell_alive messages only (a reader reads its absence as none).
   */
  runs?: CellAliveRun[];
}
/**
 * Bytes per device, keyed by device name ("cpu", "host", "cuda:0", ...).
 */
export interface BytesByDevice {
  [k: string]: number;
}
/**
 * A cell's live bytes after one of its recent runs.
 */
export interface CellAliveRun {
  /**
   * That run's In[n] number, or null.
   */
  execution_count: number | null;
  /**
   * The cell's live bytes after it.
   */
  total_bytes: number;
}
/**
 * Broadcast to every frontend when allocation recording starts, stops or changes.
 */
export interface AllocationRecordingMessage {
  type: 'allocation_recording';
  recording: RecordingState;
}
/**
 * Whether allocations are recorded, on the host and on the GPU; the result of a record_allocations request.
 */
export interface RecordingState {
  /**
   * Whether recording was asked for.
   */
  enabled: boolean;
  host: HostRecording;
  gpu: GpuRecording;
}
/**
 * The host's allocation recording (tracemalloc): state is off, recording (started by the helper) or shared (someone else's).
 */
export interface HostRecording {
  /**
   * off, recording or shared.
   */
  state: string;
  /**
   * The frames kept per allocation; null while off.
   */
  frames: number | null;
  /**
   * Unix seconds when recording started; null while off.
   */
  started: number | null;
  /**
   * What tracemalloc itself holds.
   */
  overhead_bytes: number;
  /**
   * When recording restarted (the traces of earlier allocations are gone); null when it did not.
   */
  restarted_at: number | null;
  /**
   * Why it restarted: frames, symbolizer or stopped_elsewhere; null without a restart, absent from older helpers.
   */
  restart_reason: string | null;
}
/**
 * PyTorch's allocator history: state is off, waiting (for CUDA), recording, shared (someone else's, read as it is and never reconfigured or stopped; max_entries is then null) or unavailable.
 */
export interface GpuRecording {
  /**
   * off, waiting, recording, shared or unavailable.
   */
  state: string;
  /**
   * The events the history keeps; null while off or shared.
   */
  max_entries: number | null;
  /**
   * Unix seconds when recording started; null while not recording.
   */
  started: number | null;
  /**
   * Allocated when recording started: memory without a stack.
   */
  allocated_before_bytes: number | null;
  /**
   * Why it is not recording (waiting, unavailable); null otherwise.
   */
  reason: string | null;
  /**
   * When the history restarted (its earlier events are gone); null when it did not.
   */
  restarted_at: number | null;
  /**
   * Whether live blocks kept their stacks through that restart; null without one.
   */
  restart_kept_stacks: boolean | null;
  /**
   * Why it restarted: max_entries or stopped_elsewhere; null without a restart, absent from older helpers.
   */
  restart_reason: string | null;
}
/**
 * Sent to the comm that asked, while an estimate_memory request runs: how far it is. One message also carries partial: the figures known once the plain step is estimated and fitted to the card (the rows, the card, the largest batch size and the remedies done; the others follow in the reply); it is absent from the others, and from older helpers.
 */
export interface EstimateProgressMessage {
  type: 'estimate_progress';
  request_id: RequestId;
  /**
   * What runs now, in words (tracing batch size 64, ...).
   */
  stage: string;
  /**
   * Steps done.
   */
  done: number;
  /**
   * Steps in all (it can grow while the estimate runs).
   */
  total: number;
  partial?: EstimateMemoryResult;
}
/**
 * The result of an estimate_memory request.
 */
export interface EstimateMemoryResult {
  /**
   * estimated (fake tensors ran the step), measured (the fallback ran real steps, with consent) or refused (nothing could be predicted: failure and notes say why); a reader keeps any other string as is.
   */
  status: string;
  /**
   * fake_tensors, real_steps, or none when refused.
   */
  method: string;
  /**
   * The device type the fake tensors claimed: cuda when CUDA is initialised in this kernel (the card's own kernels and autocast rules), else cpu (no CUDA context is created; convolution and attention temporaries may differ from the card's); null when refused.
   */
  traced_on: string | null;
  /**
   * The names used: model, optimizer, loss, batch (null where none was given).
   */
  names: {
    [k: string]: string | null;
  };
  /**
   * The sample batch's first dimension; null when refused before it was read.
   */
  sample_batch_size: number | null;
  /**
   * One per batch size asked for, smallest first; [] when refused.
   */
  rows: EstimateRow[];
  /**
   * plain first, then amp_bf16, checkpointing and grad_accumulation; [] when refused.
   */
  variants: EstimateVariant[];
  /**
   * The card; null where no CUDA device is visible (the figures stand alone).
   */
  card: EstimateCard | null;
  /**
   * The plain step's largest batch size that fits (the plain variant's); null without a card or when refused.
   */
  largest_batch_size: number | null;
  /**
   * Why fake tensors could not run the step; null when they could.
   */
  failure: EstimateFailure | null;
  /**
   * What the figures assume or leave out, in sentences (the device traced on, a loss taken as the output's sum, what the fallback extrapolated).
   */
  notes: string[];
  /**
   * True when every parameter, gradient, buffer and optimizer state tensor kept its version counter, the RNG states and every module's training flag are as before; false is a bug, stated.
   */
  state_unchanged: boolean;
  /**
   * What the request took, in milliseconds.
   */
  elapsed_ms: number;
}
/**
 * The prediction for one batch size.
 */
export interface EstimateRow {
  batch_size: number;
  /**
   * The peak of one training step (forward, backward, optimizer step) in steady state, the allocator's rounding included.
   */
  train_peak_bytes: number | null;
  /**
   * The peak of one evaluation step (eval mode, no gradients); null in a progress message's partial figures, which come before the evaluation step is traced.
   */
  eval_peak_bytes: number | null;
  breakdown: EstimateBreakdown;
  /**
   * True where this batch size was traced (or measured); false where it was interpolated from the traced ones (peaks grow linearly with the batch).
   */
  traced: boolean;
  /**
   * Whether the training step fits the card's free memory with the margin; null without a card.
   */
  fits: boolean | null;
}
/**
 * What is live at a step's peak, by role, in bytes rounded as the CUDA caching allocator rounds them (512-byte blocks).
 */
export interface EstimateBreakdown {
  /**
   * The model's parameters and buffers.
   */
  parameters: number | null;
  /**
   * The parameters' gradients.
   */
  gradients: number | null;
  /**
   * The optimizer's state (moments, step counts).
   */
  optimizer_state: number | null;
  /**
   * What the forward pass made and autograd kept for the backward pass.
   */
  activations: number | null;
  /**
   * Everything else live at the peak: intermediates of the backward pass and of the optimizer step, the loss.
   */
  temporaries: number | null;
  /**
   * The batch itself.
   */
  inputs: number | null;
}
/**
 * The training step changed by one remedy, and the largest batch size it lets fit.
 */
export interface EstimateVariant {
  /**
   * plain (the step as it is), amp_bf16 (autocast to bfloat16), checkpointing (activation checkpointing of the repeated blocks) or grad_accumulation (micro-batches, gradients kept between them); a reader keeps any other string as is.
   */
  variant: string;
  /**
   * Whether it could be estimated for this model.
   */
  applicable: boolean;
  /**
   * Why it is not applicable, or what it assumed (which blocks were checkpointed); null when there is nothing to say.
   */
  reason: string | null;
  /**
   * The training peak's part that does not grow with the batch (parameters, gradients, optimizer state); null when not applicable.
   */
  fixed_bytes: number | null;
  /**
   * What each sample of the batch adds to the training peak; null when not applicable.
   */
  per_sample_bytes: number | null;
  /**
   * The largest batch size whose training step fits the card's free memory with the margin; null without a card, when not applicable, or when not even 1 fits.
   */
  largest_batch_size: number | null;
  /**
   * The predicted training peak at largest_batch_size (traced there); null without it.
   */
  peak_at_largest_bytes: number | null;
  /**
   * With grad_accumulation: the micro-batches per optimizer step that reach the sample's batch size at largest_batch_size each; null otherwise.
   */
  accumulation_steps: number | null;
}
/**
 * The card the step would run on, and what it leaves for the step.
 */
export interface EstimateCard {
  /**
   * The CUDA device index; null for a planned card.
   */
  index: number | null;
  /**
   * True for the card the request's card_bytes asked to plan for (nothing of it is measured), false for the kernel's own.
   */
  planned: boolean;
  /**
   * The device's name; null where it could not be read.
   */
  name: string | null;
  /**
   * The card's memory (for the kernel's card, capped by PyTorch's per-process memory fraction where one is set).
   */
  total_bytes: number | null;
  /**
   * What this kernel's PyTorch has allocated on the card besides the model's parameters, gradients and optimizer state, which the step counts itself.
   */
  other_allocated_bytes: number | null;
  /**
   * What the card gives to others than the step: this kernel's CUDA context and library workspaces and the allocator's cached but unused blocks (measured once CUDA is up, else estimated), and other processes' memory.
   */
  overhead_bytes: number | null;
  /**
   * True when the kernel's CUDA context was measured (NVML's figure for the process less PyTorch's reserved memory); false when it is an estimate because CUDA is not initialised in this kernel.
   */
  overhead_measured: boolean;
  /**
   * The margin kept free.
   */
  margin_bytes: number | null;
  /**
   * What the training step may use: total less the other allocations, the overhead and the margin.
   */
  free_for_step_bytes: number | null;
}
/**
 * Why fake tensors could not run the step: the operation and the user's line where it stopped.
 */
export interface EstimateFailure {
  /**
   * Where it stopped: forward, loss, backward, optimizer, eval.
   */
  phase: string;
  /**
   * The operation without a fake implementation (aten.nonzero.default, ...); null where none is named (data-dependent control flow, an error of the user's code).
   */
  op: string | null;
  /**
   * The file (or cell) of the innermost user frame; null where none was found.
   */
  filename: string | null;
  lineno: number | null;
  /**
   * That line's code; null where not known.
   */
  line: string | null;
  /**
   * What was raised, on one line.
   */
  message: string;
}
/**
 * One GPU's columns of the timeline, one entry per time.
 */
export interface TimelineGpuColumns {
  /**
   * The CUDA ordinal, as in samples.
   */
  index: number;
  /**
   * PyTorch's allocated bytes per time.
   */
  allocated_bytes: ByteCount[];
  /**
   * PyTorch's reserved bytes per time.
   */
  reserved_bytes: ByteCount[];
  /**
   * NVML's figure of this process per time.
   */
  process_used_bytes: ByteCount[];
}
/**
 * The history reply's timeline: the charted figures of the samples the helper sent lately, as columns, oldest first; null where a figure was unknown, and a row of nulls where no frontend was watching.
 */
export interface TimelineColumns {
  /**
   * Unix seconds, the kernel's clock: each sample's time.
   */
  times: number[];
  /**
   * The kernel's RSS per time.
   */
  rss_bytes: ByteCount[];
  /**
   * One entry per GPU.
   */
  gpus: TimelineGpuColumns[];
}
/**
 * The result of a history request.
 */
export interface HistoryResult {
  /**
   * The kept per-cell records, oldest first.
   */
  records: CellMemoryRecord[];
  timeline?: TimelineColumns;
}
/**
 * One GPU's figures in a cleanup's before or after snapshot.
 */
export interface SnapshotGpu {
  /**
   * The CUDA ordinal.
   */
  index: number;
  /**
   * A byte count or counter: a non-negative integer, or null where the figure is unknown.
   */
  allocated_bytes: number | null;
  /**
   * A byte count or counter: a non-negative integer, or null where the figure is unknown.
   */
  reserved_bytes: number | null;
  /**
   * A byte count or counter: a non-negative integer, or null where the figure is unknown.
   */
  nvml_used_bytes: number | null;
}
/**
 * The host's figures in a cleanup's before or after snapshot.
 */
export interface SnapshotHost {
  /**
   * A byte count or counter: a non-negative integer, or null where the figure is unknown.
   */
  rss_bytes: number | null;
}
/**
 * Memory figures taken just before and just after a cleanup.
 */
export interface MemorySnapshot {
  host: SnapshotHost;
  /**
   * One entry per GPU.
   */
  gpus: SnapshotGpu[];
}
/**
 * A step of a cleanup that raised; what was done before and after it stands.
 */
export interface DeleteFailure {
  /**
   * delete, clear, gc or empty_cache; a reader keeps any other string as is.
   */
  step: string;
  /**
   * The name (delete), the hidden holder (clear), the GPU ("GPU 0") or null.
   */
  target: string | null;
  /**
   * The exception, as "RuntimeError: CUDA error: ...".
   */
  error: string;
}
/**
 * The result of a free_memory request.
 */
export interface FreeMemoryResult {
  /**
   * The actions that ran, in order.
   */
  actions_run: string[];
  /**
   * Objects gc.collect() found unreachable; null when gc did not run or raised.
   */
  gc_collected: number | null;
  /**
   * done, skipped_torch_not_imported, skipped_cuda_not_initialized or "failed: ..."; null when empty_cache was not asked for.
   */
  empty_cache: string | null;
  /**
   * The steps that raised (gc, empty_cache); absent from older helpers.
   */
  failures?: DeleteFailure[];
  before: MemorySnapshot;
  after: MemorySnapshot;
  /**
   * What the request took, in milliseconds.
   */
  elapsed_ms: number;
}
/**
 * The tensors of a listed name that keep an autograd graph alive.
 */
export interface GraphHolding {
  /**
   * How many tensors keep a graph alive.
   */
  tensors: number;
  /**
   * Distinct autograd nodes reachable from them (bounded: see truncated).
   */
  graph_nodes: number;
  /**
   * Whether the walk of the graph stopped at its bound.
   */
  truncated: boolean;
  /**
   * A byte count or counter: a non-negative integer, or null where the figure is unknown.
   */
  bytes: number | null;
  /**
   * Saved tensors a hook packed (checkpointing, offloading): their packed form is what is counted.
   */
  packed_by_hooks: number;
}
/**
 * One name of the user's namespace that holds memory.
 */
export interface HolderEntry {
  /**
   * The name.
   */
  name: string;
  /**
   * tensor, module, optimizer, container, ndarray, bytes or other; a reader keeps any other string as is.
   */
  kind: string;
  /**
   * The value's type, as module.qualname.
   */
  type_name: string;
  /**
   * A short description of the value (kernel text: render it as text).
   */
  summary: string;
  bytes_by_device: BytesByDevice;
  /**
   * The sum of bytes_by_device.
   */
  total_bytes: number;
  /**
   * Other names of the listing that share storages with this one.
   */
  shared_with: string[];
  /**
   * Bytes this name keeps alive that another entry counts (each storage is counted once, on the largest holder); absent from older helpers.
   */
  shared_bytes: number;
  /**
   * shared_bytes per device; absent from older helpers.
   */
  shared_bytes_by_device: {
    [k: string]: number;
  };
  /**
   * The entries those shared bytes are counted under; absent from older helpers.
   */
  counted_under: string[];
  /**
   * Copies of it in IPython's output cache ("Out[3]", "_", "_3").
   */
  output_cache_refs: string[];
  /**
   * Whether the name may be deleted.
   */
  deletable: boolean;
  /**
   * Why it cannot be deleted; null when deletable.
   */
  refusal: string | null;
  /**
   * Tensors in it that keep an autograd graph alive; null when none (absent from older helpers).
   */
  graph_holding: GraphHolding | null;
  /**
   * Its walk ran out of the listing's budget: it holds at least its figures (absent from older helpers).
   */
  truncated: boolean;
}
/**
 * Another hidden holder that holds some of the same objects, and those bytes per device.
 */
export interface HiddenOverlap {
  /**
   * One of the hidden holder kinds; a reader keeps any other string as is.
   */
  holder: string;
  bytes_by_device: BytesByDevice;
}
/**
 * A reference the user cannot see: the output cache, the last traceback, the last result.
 */
export interface HiddenHolder {
  /**
   * One of the hidden holder kinds; a reader keeps any other string as is.
   */
  holder: string;
  /**
   * A label for people.
   */
  label: string;
  bytes_by_device: BytesByDevice;
  /**
   * The sum of bytes_by_device.
   */
  total_bytes: number;
  /**
   * The part of it a listed name holds too, per device: clearing this holder alone leaves it alive; absent from older helpers.
   */
  named_bytes_by_device: {
    [k: string]: number;
  };
  /**
   * What it holds (kernel text: render it as text).
   */
  summary: string;
  /**
   * What clearing it costs (e.g. %debug is lost); null when nothing.
   */
  warning: string | null;
  /**
   * The other hidden holders that hold some of the same objects (what no listed name holds): clearing this holder alone leaves them alive; absent when none.
   */
  held_also_by?: HiddenOverlap[];
}
/**
 * The result of an inspect request: what holds memory.
 */
export interface InspectResult {
  /**
   * Names this listing, for a delete.
   */
  listing_id: string;
  /**
   * What the request took, in milliseconds.
   */
  elapsed_ms: number;
  /**
   * Whether the listing ran out of its budget or max_entries.
   */
  truncated: boolean;
  /**
   * The names, largest total_bytes first.
   */
  entries: HolderEntry[];
  /**
   * The hidden holders that hold memory.
   */
  hidden: HiddenHolder[];
}
/**
 * A name and why it was refused or is still alive.
 */
export interface NameReason {
  /**
   * The name, or a hidden holder when hidden is true.
   */
  name: string;
  /**
   * Why, in words.
   */
  reason: string;
  /**
   * True when name is a hidden holder of the request, not a variable; absent otherwise.
   */
  hidden?: boolean;
}
/**
 * The result of a delete request.
 */
export interface DeleteResult {
  /**
   * The names deleted.
   */
  deleted: string[];
  /**
   * The names and hidden holders refused, with the reason.
   */
  refused: NameReason[];
  /**
   * The hidden holders cleared.
   */
  cleared: string[];
  /**
   * Deleted names whose object something else still holds, with what.
   */
  still_alive: NameReason[];
  /**
   * Steps that raised once the deleting began: what deleted and cleared list is done all the same; absent when none.
   */
  failures?: DeleteFailure[];
  before: MemorySnapshot;
  after: MemorySnapshot;
  /**
   * What the request took, in milliseconds.
   */
  elapsed_ms: number;
}
/**
 * What the kernel has imported and initialised.
 */
export interface NotebookRuntime {
  /**
   * Whether torch is imported.
   */
  torch_imported: boolean;
  /**
   * Whether torch has initialised CUDA.
   */
  cuda_initialized: boolean;
  /**
   * Whether TensorFlow is imported.
   */
  tensorflow_imported: boolean;
  /**
   * Whether TensorFlow has initialised its devices.
   */
  tensorflow_initialized: boolean;
}
/**
 * The result of a notebook_names request: the user-namespace names bound to each kind of object (at most 20 each), and what the kernel has initialised.
 */
export interface NotebookNamesResult {
  /**
   * Names of torch.nn.Module instances other than losses, largest first.
   */
  model: string[];
  /**
   * Names of torch.optim.Optimizer instances.
   */
  optimizer: string[];
  /**
   * Names of torch.utils.data.DataLoader instances.
   */
  dataloader: string[];
  /**
   * Names of loss modules.
   */
  loss: string[];
  /**
   * Names of gradient scalers.
   */
  scaler: string[];
  /**
   * Names that may hold a sample batch, for estimate_memory: tuples, lists and dicts of tensors first, then tensors; absent from older helpers (read as []).
   */
  batch?: string[];
  runtime: NotebookRuntime;
}
/**
 * One device's allocation sites.
 */
export interface DeviceSites {
  /**
   * "host" or "cuda:<index>".
   */
  device: string;
  /**
   * The CUDA ordinal; absent or null for the host.
   */
  index?: number | null;
  /**
   * The live bytes recorded.
   */
  total_bytes: number;
  /**
   * The live allocations recorded.
   */
  count: number;
  /**
   * Live bytes without a stack.
   */
  unattributed_bytes: number;
  /**
   * Live bytes the helper itself allocated.
   */
  helper_bytes: number;
  /**
   * Allocations of helper_bytes; absent from older helpers.
   */
  helper_count: number;
  /**
   * Whether more sites than listed hold memory.
   */
  truncated: boolean;
  /**
   * The sites, largest first.
   */
  sites: AllocationSite[];
}
/**
 * The result of an allocation_sites request: live memory by notebook line.
 */
export interface AllocationSitesResult {
  recording: RecordingState;
  /**
   * What the request took, in milliseconds.
   */
  elapsed_ms: number;
  /**
   * One entry per recorded device.
   */
  devices: DeviceSites[];
  /**
   * The cells whose allocations are alive, largest first.
   */
  cells: CellAliveBytes[];
}
/**
 * The result of an allocation_snapshot request: PyTorch's allocator snapshot, pickled.
 */
export interface AllocationSnapshotResult {
  /**
   * The snapshot's format (pickle).
   */
  format: string;
  /**
   * The pickled snapshot, base64; null with reason when there is none.
   */
  data_base64: string | null;
  /**
   * The pickle's size.
   */
  bytes: number;
  /**
   * Why there is no snapshot; null when there is one.
   */
  reason: string | null;
}
/**
 * One GPU's used memory around a stop_process.
 */
export interface StopGpu {
  /**
   * The CUDA ordinal.
   */
  index: number;
  /**
   * A byte count or counter: a non-negative integer, or null where the figure is unknown.
   */
  used_bytes: number | null;
}
/**
 * Memory figures just before the signal (before) and once the process ended or the wait ran out (after), NVML's process lists and every smaps_rollup read anew.
 */
export interface StopMemory {
  /**
   * The kernel and its processes together; null while it has none.
   */
  totals: ProcessTreeTotals | null;
  /**
   * A byte count or counter: a non-negative integer, or null where the figure is unknown.
   */
  available_bytes: number | null;
  /**
   * One entry per GPU: NVML's used memory of the whole device.
   */
  gpus: StopGpu[];
}
/**
 * The result of a stop_process request.
 */
export interface StopProcessResult {
  /**
   * The pid asked for.
   */
  pid: number;
  /**
   * The start_time asked for.
   */
  start_time: number;
  /**
   * terminated (it ended after SIGTERM), killed (it ended after SIGKILL), survived (still there after SIGKILL and the wait: a process in uninterruptible sleep), refused (nothing was signalled: refusal says why); a reader keeps any other string as is.
   */
  outcome: string;
  /**
   * Why nothing was signalled: kernel (the pid is the kernel's own), gone (no such process now), reused (the pid is another process now: another start time), not_descendant (the process does not descend from the kernel and was never seen as one), permission (the system refused the signal); null when a signal was sent.
   */
  refusal: string | null;
  /**
   * The refusal, or what happened, in words; null when it ended on SIGTERM.
   */
  reason: string | null;
  /**
   * The signals sent, in order (SIGTERM, SIGKILL); [] when refused.
   */
  signals: string[];
  /**
   * Seconds spent waiting for it to end.
   */
  waited_s: number;
  /**
   * The process as read just before the signal (role, memory); null when refused before it could be read.
   */
  process: TreeProcess | null;
  /**
   * True when it ended but its parent has not reaped it yet (the kernel's multiprocessing or subprocess objects do so when the notebook joins or polls them; the helper never reaps a child, which would take its exit status from its owner). A zombie holds no memory.
   */
  still_zombie: boolean;
  before: StopMemory;
  after: StopMemory;
  /**
   * What the request took, in milliseconds.
   */
  elapsed_ms: number;
}
/**
 * One process a releasable holds, as the kernel's process tree read it.
 */
export interface ReleasableProcess {
  /**
   * The process id.
   */
  pid: number;
  /**
   * Its start_time (field 22 of /proc/<pid>/stat); with pid it names one process.
   */
  start_time: number;
  /**
   * Its role in the process tree (see TreeProcess.role); a reader keeps any string as is.
   */
  role: string;
}
/**
 * Something the kernel started through an engine and can release.
 */
export interface Releasable {
  /**
   * ray (the Ray runtime ray.init started), dask (a distributed Client and the LocalCluster it or the notebook started), mp_pool (a multiprocessing pool), dataloader_iter (a DataLoader iterator with worker processes, held by a name, a DataLoader with persistent workers, or a generator), vllm (a vLLM engine); a reader keeps any other string as is.
   */
  kind: string;
  /**
   * The name in the notebook's namespace that holds it (a generator's name for an iterator a generator holds; name.attribute for a DataLoader's persistent iterator); ray for the Ray runtime; a label in angle brackets, such as <default client>, for what no name holds.
   */
  name: string;
  /**
   * What it is, in words (its type, its workers).
   */
  label: string;
  /**
   * Its processes in the kernel's tree (workers, their children); [] where it has none, or none could be told.
   */
  processes: ReleasableProcess[];
  /**
   * A byte count or counter: a non-negative integer, or null where the figure is unknown.
   */
  host_bytes: number | null;
  /**
   * Per GPU, what NVML lists for those processes; [] where they hold nothing on a GPU.
   */
  gpus: ProcessGpuMemory[];
}
/**
 * One step of a release, as it ran.
 */
export interface ReleaseStep {
  /**
   * What ran, as code (client.close(), pool.terminate(), del llm, gc.collect(), ...).
   */
  action: string;
  /**
   * Whether it ended without raising.
   */
  ok: boolean;
  /**
   * What it raised, on one line (TimeoutError: ...); null when ok.
   */
  error: string | null;
}
/**
 * What releasing one releasable did.
 */
export interface ReleaseOutcome {
  /**
   * The kind asked for.
   */
  kind: string;
  /**
   * The name asked for.
   */
  name: string;
  /**
   * released (every step ran and every process ended), partial (a step failed or a process is still alive), refused (nothing was done: no such releasable now); a reader keeps any other string as is.
   */
  outcome: string;
  /**
   * Why it was refused or is partial, in words; null when released.
   */
  reason: string | null;
  /**
   * The steps, in the order they ran; [] when refused.
   */
  steps: ReleaseStep[];
  /**
   * Its processes just before the release.
   */
  processes: ReleasableProcess[];
  /**
   * Those of its processes (same pid and start time) still alive once the wait ended: what did not come back.
   */
  still_alive: ReleasableProcess[];
  /**
   * Seconds spent waiting for its processes to end.
   */
  waited_s: number;
  before: StopMemory;
  after: StopMemory;
}
/**
 * The result of a release_engine request.
 */
export interface ReleaseEngineResult {
  /**
   * The mode asked for: list or release.
   */
  mode: string;
  /**
   * What can be released now (after the release, with mode release), largest host_bytes first.
   */
  releasables: Releasable[];
  /**
   * What the release did; null with mode list.
   */
  released: ReleaseOutcome | null;
  /**
   * What the request took, in milliseconds.
   */
  elapsed_ms: number;
}
/**
 * What an action did on one worker.
 */
export interface ClusterActionWorker {
  /**
   * The worker's id (kernel text).
   */
  id: string;
  /**
   * Whether the action ran there.
   */
  ok: boolean;
  /**
   * Why not, where ok is false (kernel text).
   */
  error: string | null;
  /**
   * Whether the worker had imported torch; null where not asked.
   */
  torch: boolean | null;
  /**
   * A byte count or counter: a non-negative integer, or null where the figure is unknown.
   */
  host_before_bytes: number | null;
  /**
   * A byte count or counter: a non-negative integer, or null where the figure is unknown.
   */
  host_after_bytes: number | null;
  /**
   * A byte count or counter: a non-negative integer, or null where the figure is unknown.
   */
  gpu_reserved_before_bytes: number | null;
  /**
   * A byte count or counter: a non-negative integer, or null where the figure is unknown.
   */
  gpu_reserved_after_bytes: number | null;
  /**
   * Its allocator after the action, where it has torch.
   */
  allocator: ClusterAllocatorReading | null;
}
/**
 * The result of a cluster_action request.
 */
export interface ClusterActionResult {
  /**
   * The cluster's engine.
   */
  engine: string;
  /**
   * The cluster's name (kernel text).
   */
  cluster: string;
  action: ClusterActionName;
  /**
   * Whether the engine ran the action (on every worker it could reach).
   */
  done: boolean;
  /**
   * What the action could not do, in words (a Ray runtime's actors cannot be reached, a worker did not answer in time, ...) (kernel text).
   */
  message: string | null;
  /**
   * One entry per worker the action reached or tried.
   */
  workers: ClusterActionWorker[];
}
