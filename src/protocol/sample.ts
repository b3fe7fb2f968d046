/**
 * The parser of the `sample` message, which carries the kernel's host and
 * GPU memory figures and is sent on change and as a heartbeat (see `sample`
 * in docs/protocol.md). `parseKernelMessage` (messages.ts) dispatches to
 * `readSample`.
 *
 * The wire types are generated from protocol/protocol.schema.json
 * (protocol.generated.ts) and re-exported here under the names the frontend
 * imports; the reader below checks untrusted JSON against them.
 */
import { readGpuLoad } from './load';
import { readProcessTree } from './processes';
import { describeValue, FieldReader, ShapeError } from './reader';
import type {
  ContainerMemory,
  GpuSample,
  HiddenGpus,
  NvmlGpuProcess,
  SampleMessage
} from './protocol.generated';

export type {
  ContainerMemory,
  GpuSample,
  HiddenGpus,
  HostMemory,
  NvmlGpuMemory,
  NvmlGpuProcess,
  SampleMessage,
  TensorflowGpuMemory,
  TensorflowState,
  TorchGpuMemory,
  TorchState
} from './protocol.generated';

/**
 * Why the helper sent a sample: it is the first, a change, a heartbeat, or
 * an answer to a request.
 */
export type SampleReason = 'initial' | 'change' | 'heartbeat' | 'snapshot';

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
  const load = g.nullableObject('load');
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
    },
    // Older helpers leave this out, so it reads as null, meaning unknown.
    load: load && readGpuLoad(load)
  };
}

/**
 * Reads `nvml.processes`. It reads as null when it is absent, as from older
 * helpers, or null, when there is no list.
 */
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

/**
 * Reads `host.container`. It reads as null when it is null, because no limit
 * is set, or absent, as from older helpers.
 */
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
    // Older helpers leave this out, so it reads as null.
    swap_limit_bytes: c.bytes('swap_limit_bytes'),
    swap_usage_bytes: c.bytes('swap_usage_bytes')
  };
}

/**
 * Reads a count: a non-negative integer, or null. It reads as null when
 * absent, as from older helpers.
 */
function readCount(r: FieldReader, key: string): number | null {
  const count = r.nullableInteger(key);
  if (count !== null && count < 0) {
    throw new ShapeError(
      `${r.path}.${key}: expected a non-negative integer, got ${count}`
    );
  }
  return count;
}

/**
 * Reads `hidden_gpus` of a hello or sample. It reads as null when it is
 * null, or absent as from older helpers.
 */
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

/** Reads a `sample` message, field by field in document order. */
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
    // Older helpers leave this out, so it reads as null.
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
  const processes = readProcessTree(r);
  return {
    type: 'sample',
    seq,
    time,
    reason,
    host: hostFigures,
    torch: torchState,
    tensorflow: tfState,
    gpus,
    hidden_gpus,
    processes
  };
}
