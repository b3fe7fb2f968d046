/**
 * Wire types and parser of the `sample` message: the kernel's host and GPU
 * memory figures, sent on change and as a heartbeat (docs/protocol.md,
 * `sample`). `parseKernelMessage` (protocol.ts) dispatches to `readSample`.
 */
import { describeValue, FieldReader, ShapeError } from './reader';

export type SampleReason = 'initial' | 'change' | 'heartbeat' | 'snapshot';

export interface HostMemory {
  /** Resident set size of the kernel process. */
  rss_bytes: number | null;
  total_bytes: number | null;
  available_bytes: number | null;
  /** The kernel's cgroup memory limit; null without one (or older helpers). */
  container: ContainerMemory | null;
  /**
   * The kernel's own pages in swap (VmSwap): memory it holds that the RSS
   * leaves out. Null when unknown. Optional, like the two below: older
   * helpers and hand-built samples leave them out; the parser always sets
   * them (absent reads as null).
   */
  swapped_bytes?: number | null;
  /** The machine's swap (SwapTotal; 0 without any) and what is free of it. */
  swap_total_bytes?: number | null;
  swap_free_bytes?: number | null;
  /**
   * Processes the out-of-memory killer took on the whole machine, ever
   * (/proc/vmstat's oom_kill, Linux 4.13 and later; a container's host's).
   * Null when unknown (other systems, older helpers); optional like the swap
   * figures, and the parser always sets it.
   */
  oom_kill_count?: number | null;
}

/** The tightest cgroup memory limit from the kernel's cgroup up, and that cgroup's figures. */
export interface ContainerMemory {
  limit_bytes: number;
  /** Everything charged to the limited cgroup (all its processes, page cache). */
  usage_bytes: number | null;
  /**
   * The reclaimable page cache in that usage (memory.stat's inactive_file):
   * the kernel gives it back before any OOM kill. Null when unknown (older helpers).
   */
  inactive_file_bytes: number | null;
  /** Processes the out-of-memory killer took in that cgroup, ever. */
  oom_kill_count: number | null;
  cgroup_version: 1 | 2;
  /**
   * The tightest swap limit on the kernel's cgroup path (v2 memory.swap.max;
   * v1 the memsw limit less the memory limit): 0 lets nothing go to swap.
   * Null where no cgroup limits swap (the machine's swap is the bound) or
   * it is unknown. Optional, like swap_usage_bytes: older helpers and
   * hand-built samples leave them out; the parser always sets them.
   */
  swap_limit_bytes?: number | null;
  /** That cgroup's swap in use; null when unknown. */
  swap_usage_bytes?: number | null;
}

export interface TorchGpuMemory {
  allocated_bytes: number | null;
  reserved_bytes: number | null;
  peak_allocated_bytes: number | null;
  active_bytes: number | null;
  /** Reserved by the caching allocator but not usable: fragmentation. */
  inactive_split_bytes: number | null;
  num_ooms: number | null;
  num_alloc_retries: number | null;
}

export interface NvmlGpuMemory {
  /** Device-wide, all processes. */
  used_bytes: number | null;
  total_bytes: number | null;
  /**
   * NVML's own free: the total less used and less the driver's reservation
   * (which used leaves out). Null when unknown; optional: older helpers and
   * hand-built samples leave it out.
   */
  free_bytes?: number | null;
  /** This kernel process; null when NVML cannot attribute it (containers). */
  process_used_bytes: number | null;
  /**
   * The processes NVML lists on the device, largest first (at most 32);
   * null when NVML could not list them or the helper predates the field.
   * Optional only so that hand-built samples may leave it out: the parser
   * always sets it.
   */
  processes?: NvmlGpuProcess[] | null;
}

/** One process on a GPU, as NVML lists it (pids of NVML's pid namespace). */
export interface NvmlGpuProcess {
  pid: number;
  /** null: NVML gives no figure for it (e.g. without the permission). */
  used_bytes: number | null;
  /** True for the kernel process that sent the sample. */
  this_process: boolean;
}

/** The two figures of `tf.config.experimental.get_memory_info`, per card (docs/protocol.md). */
export interface TensorflowGpuMemory {
  current_bytes: number | null;
  peak_bytes: number | null;
}

export interface GpuSample {
  index: number;
  name: string | null;
  total_bytes: number | null;
  /** null unless torch is imported and CUDA initialised. */
  torch: TorchGpuMemory | null;
  /** null unless NVML is available. */
  nvml: NvmlGpuMemory | null;
  /** null unless TensorFlow has initialised its GPUs. */
  tensorflow: TensorflowGpuMemory | null;
}

/**
 * The kernel sees no GPU because its CUDA_VISIBLE_DEVICES hides every one
 * NVML lists ("" or "-1" to run on the CPU, a wrong index or UUID).
 */
export interface HiddenGpus {
  /** The GPUs NVML lists on the machine. */
  count: number;
  /** The kernel's value, as set (text from the kernel: render as text). */
  cuda_visible_devices: string;
}

export interface SampleMessage {
  type: 'sample';
  seq: number;
  /** Unix seconds, kernel clock. */
  time: number;
  /** One of SampleReason; any other string is kept as is. */
  reason: string;
  host: HostMemory;
  torch: { imported: boolean; cuda_initialized: boolean };
  tensorflow: { imported: boolean; gpus_initialized: boolean };
  gpus: GpuSample[];
  /** Set only while `gpus` is empty for that reason; null otherwise (and from older helpers). */
  hidden_gpus: HiddenGpus | null;
}

// ---------------------------------------------------------------------------
// Parser

function readGpu(item: unknown, path: string): GpuSample {
  const g = FieldReader.of(item, path);
  const index = g.integer('index');
  const name = g.nullableString('name');
  const total_bytes = g.bytes('total_bytes');
  const torch = g.nullableObject('torch');
  const nvml = g.nullableObject('nvml');
  const tf = g.nullableObject('tensorflow');
  return {
    index,
    name,
    total_bytes,
    torch: torch && {
      allocated_bytes: torch.bytes('allocated_bytes'),
      reserved_bytes: torch.bytes('reserved_bytes'),
      peak_allocated_bytes: torch.bytes('peak_allocated_bytes'),
      active_bytes: torch.bytes('active_bytes'),
      inactive_split_bytes: torch.bytes('inactive_split_bytes'),
      num_ooms: torch.bytes('num_ooms'),
      num_alloc_retries: torch.bytes('num_alloc_retries')
    },
    nvml: nvml && {
      used_bytes: nvml.bytes('used_bytes'),
      total_bytes: nvml.bytes('total_bytes'),
      free_bytes: nvml.bytes('free_bytes'),
      process_used_bytes: nvml.bytes('process_used_bytes'),
      processes: readNvmlProcesses(nvml)
    },
    tensorflow: tf && {
      current_bytes: tf.bytes('current_bytes'),
      peak_bytes: tf.bytes('peak_bytes')
    }
  };
}

/** `nvml.processes`: absent or null (older helpers, no list) reads as null. */
function readNvmlProcesses(nvml: FieldReader): NvmlGpuProcess[] | null {
  return (
    nvml.nullableArray('processes')?.map((item, i) => {
      const p = FieldReader.of(item, `${nvml.path}.processes[${i}]`);
      return {
        pid: p.integer('pid'),
        used_bytes: p.bytes('used_bytes'),
        this_process: p.boolean('this_process')
      };
    }) ?? null
  );
}

/** `host.container`: absent or null (no limit, older helpers) reads as null. */
function readContainer(host: FieldReader): ContainerMemory | null {
  const c = host.nullableObject('container');
  if (!c) {
    return null;
  }
  const limit = c.bytes('limit_bytes');
  if (limit === null || limit <= 0) {
    throw new ShapeError(
      `${c.path}.limit_bytes: expected a positive number, got ${describeValue(limit)}`
    );
  }
  const usage_bytes = c.bytes('usage_bytes');
  const inactive_file_bytes = c.bytes('inactive_file_bytes');
  const oom_kill_count = readCount(c, 'oom_kill_count');
  const version = c.integer('cgroup_version');
  if (version !== 1 && version !== 2) {
    throw new ShapeError(
      `${c.path}.cgroup_version: expected 1 or 2, got ${version}`
    );
  }
  return {
    limit_bytes: limit,
    usage_bytes,
    inactive_file_bytes,
    oom_kill_count,
    cgroup_version: version,
    // Absent from older helpers: null.
    swap_limit_bytes: c.bytes('swap_limit_bytes'),
    swap_usage_bytes: c.bytes('swap_usage_bytes')
  };
}

/** A count: a non-negative integer, or null (absent reads as null: older helpers). */
function readCount(r: FieldReader, key: string): number | null {
  const count = r.nullableInteger(key);
  if (count !== null && count < 0) {
    throw new ShapeError(
      `${r.path}.${key}: expected a non-negative integer, got ${count}`
    );
  }
  return count;
}

/** `hidden_gpus` of a hello or sample: absent (older helpers) or null reads as null. */
export function readHiddenGpus(r: FieldReader): HiddenGpus | null {
  const hidden = r.nullableObject('hidden_gpus');
  if (!hidden) {
    return null;
  }
  const count = hidden.integer('count');
  if (count < 1) {
    throw new ShapeError(
      `${hidden.path}.count: expected a positive integer, got ${count}`
    );
  }
  return { count, cuda_visible_devices: hidden.string('cuda_visible_devices') };
}

export function readSample(r: FieldReader): SampleMessage {
  // Read in document order, so the first bad field is the one reported.
  const seq = r.integer('seq');
  const time = r.number('time');
  const reason = r.string('reason');
  const host = r.object('host');
  const hostFigures = {
    rss_bytes: host.bytes('rss_bytes'),
    total_bytes: host.bytes('total_bytes'),
    available_bytes: host.bytes('available_bytes'),
    container: readContainer(host),
    // Absent from older helpers: null.
    swapped_bytes: host.bytes('swapped_bytes'),
    swap_total_bytes: host.bytes('swap_total_bytes'),
    swap_free_bytes: host.bytes('swap_free_bytes'),
    oom_kill_count: readCount(host, 'oom_kill_count')
  };
  const torch = r.object('torch');
  const torchState = {
    imported: torch.boolean('imported'),
    cuda_initialized: torch.boolean('cuda_initialized')
  };
  const tf = r.object('tensorflow');
  const tfState = {
    imported: tf.boolean('imported'),
    gpus_initialized: tf.boolean('gpus_initialized')
  };
  const gpus = r
    .array('gpus')
    .map((item, i) => readGpu(item, `${r.path}.gpus[${i}]`));
  const hidden_gpus = readHiddenGpus(r);
  return {
    type: 'sample',
    seq,
    time,
    reason,
    host: hostFigures,
    torch: torchState,
    tensorflow: tfState,
    gpus,
    hidden_gpus
  };
}
