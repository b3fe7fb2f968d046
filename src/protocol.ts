/**
 * Wire types of the jupyterlab-vram comm, protocol version 1 (docs/protocol.md).
 *
 * Must change together with python_helper/jupyterlab_vram_helper/protocol.py.
 *
 * Everything that arrives from the kernel is untrusted JSON: `parseKernelMessage`
 * checks every field it relies on and turns bad data into a readable error,
 * so that a buggy or foreign helper is reported in the panel instead of
 * crashing it.
 */

import { OomDiagnosis, readOomDiagnosis } from './oomProtocol';

/** Comm target name the helper registers in the kernel. */
export const COMM_TARGET = 'jupyterlab-vram';

/** Bumped on any incompatible change of the messages below. */
export const PROTOCOL_VERSION = 1;

// ---------------------------------------------------------------------------
// Shared

/** The helper's sampling configuration (all keys, as the helper reports it). */
export interface HelperConfig {
  interval_s: number;
  change_threshold_bytes: number;
  heartbeat_s: number;
  /**
   * Reset the peak counters at each cell start (exact per-cell peaks). A
   * hello without it (an older build of this protocol version) reads as the
   * protocol default, true.
   */
  reset_peak_per_cell: boolean;
}

/** `config` in `open` and `configure`: missing keys keep their current value. */
export type PartialHelperConfig = Partial<HelperConfig>;

// ---------------------------------------------------------------------------
// Frontend -> kernel

/** `data` of the comm_open. */
export interface OpenMessage {
  type: 'open';
  protocol: number;
  config?: PartialHelperConfig;
}

export interface ConfigureRequest {
  type: 'configure';
  request_id: string;
  config: PartialHelperConfig;
}

export interface SnapshotRequest {
  type: 'snapshot';
  request_id: string;
}

export interface PingRequest {
  type: 'ping';
  request_id: string;
}

/** The per-cell records the helper keeps (the last 2000), oldest first. */
export interface HistoryRequest {
  type: 'history';
  request_id: string;
}

/** Free memory: `gc.collect()` and/or `torch.cuda.empty_cache()`. */
export interface FreeMemoryRequest {
  type: 'free_memory';
  request_id: string;
  actions: FreeAction[];
}

/** List what holds memory in the user's namespace. */
export interface InspectRequest {
  type: 'inspect';
  request_id: string;
  max_entries?: number;
  container_depth?: number;
}

/** Delete names of a listing and clear hidden holders, then free. */
export interface DeleteRequest {
  type: 'delete';
  request_id: string;
  listing_id: string;
  names: string[];
  hidden: HiddenHolderKind[];
  free: FreeAction[];
}

/**
 * The names of the user's model, optimizer, data loader, loss and scaler,
 * and whether torch/TensorFlow are initialised (for the snippets).
 */
export interface NotebookNamesRequest {
  type: 'notebook_names';
  request_id: string;
}

/** Allocation recording (allocationProtocol.ts has the results). */
export interface RecordAllocationsRequest {
  type: 'record_allocations';
  request_id: string;
  enabled: boolean;
  host_frames?: number;
  gpu_max_entries?: number;
}

export interface AllocationSitesRequest {
  type: 'allocation_sites';
  request_id: string;
  max_sites?: number;
}

export interface AllocationSnapshotRequest {
  type: 'allocation_snapshot';
  request_id: string;
}

export type FreeAction = 'gc' | 'empty_cache';

export type HiddenHolderKind =
  | 'output_cache'
  | 'last_traceback'
  | 'last_execution_result';

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
  | AllocationSnapshotRequest;

export type HelperRequestType = HelperRequest['type'];

/** What a `reply` carries in `result`, per request type. */
export interface HelperRequestResults {
  configure: { config: HelperConfig };
  snapshot: { seq: number };
  ping: Record<string, never>;
  /** Unchecked here: read it with `parseHistoryResult`. */
  history: { records: unknown };
  /** Unchecked here: read these with the parsers of cleanupProtocol.ts. */
  free_memory: { [key: string]: unknown };
  inspect: { [key: string]: unknown };
  delete: { [key: string]: unknown };
  /** Unchecked here: read it with `parseNotebookNames` (snippets/notebookNames.ts). */
  notebook_names: { [key: string]: unknown };
  /** Unchecked here: read these with the parsers of allocationProtocol.ts. */
  record_allocations: { [key: string]: unknown };
  allocation_sites: { [key: string]: unknown };
  allocation_snapshot: { [key: string]: unknown };
}

// ---------------------------------------------------------------------------
// Kernel -> frontend

export interface TorchInfo {
  version: string | null;
  /** `torch.version.cuda`; null for CPU builds. */
  cuda_build: string | null;
  cuda_initialized: boolean;
}

export interface TensorflowInfo {
  version: string | null;
  gpus_initialized: boolean;
}

export interface NvmlInfo {
  available: boolean;
  driver_version: string | null;
  /** Why NVML is not available (null when it is). */
  error: string | null;
}

export interface DeviceInfo {
  /** CUDA ordinal as the kernel's CUDA runtime numbers it. */
  index: number;
  name: string | null;
  total_bytes: number | null;
  uuid: string | null;
}

export interface HelloMessage {
  type: 'hello';
  protocol: number;
  helper_version: string;
  python: string;
  pid: number;
  hostname: string;
  /** Names the run of cell record ids: they start again at 1 when it changes. */
  record_series: string;
  /** null: torch is not imported in the kernel. */
  torch: TorchInfo | null;
  /** null: TensorFlow is not imported in the kernel. */
  tensorflow: TensorflowInfo | null;
  nvml: NvmlInfo;
  /** Empty: no GPU visible to the kernel. */
  devices: DeviceInfo[];
  config: HelperConfig;
}

export type SampleReason = 'initial' | 'change' | 'heartbeat' | 'snapshot';

export interface HostMemory {
  /** Resident set size of the kernel process. */
  rss_bytes: number | null;
  total_bytes: number | null;
  available_bytes: number | null;
  /** The kernel's cgroup memory limit; null without one (or older helpers). */
  container: ContainerMemory | null;
}

/** The nearest cgroup memory limit above the kernel, and that cgroup's figures. */
export interface ContainerMemory {
  limit_bytes: number;
  /** Everything charged to the limited cgroup (all its processes, page cache). */
  usage_bytes: number | null;
  /** Processes the out-of-memory killer took in that cgroup, ever. */
  oom_kill_count: number | null;
  cgroup_version: 1 | 2;
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

/**
 * Not spelled out in protocol.md v1; both sides use the two figures of
 * `tf.config.experimental.get_memory_info`.
 */
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
}

export type CellStatus = 'ok' | 'error' | 'interrupted';

/** Why a cell failed; `null` in a record whose status is `ok`. */
export interface CellError {
  /** The exception's class name (kernel text: render as text). */
  type: string;
  /** The first 1000 characters of `str(exception)` (kernel text). */
  message_head: string;
  out_of_memory: boolean;
}

export interface CellHostMemory {
  rss_before_bytes: number | null;
  rss_after_bytes: number | null;
  rss_peak_bytes: number | null;
  peak_exact: boolean;
}

export interface CellGpuMemory {
  /** CUDA ordinal, as in samples. */
  index: number;
  allocated_before_bytes: number | null;
  allocated_after_bytes: number | null;
  allocated_peak_bytes: number | null;
  reserved_before_bytes: number | null;
  reserved_after_bytes: number | null;
  reserved_peak_bytes: number | null;
  peak_exact: boolean;
}

/** What one executed cell did to memory (docs/protocol.md, `cell`). */
export interface CellMemoryRecord {
  /** 1, 2, 3... per helper (a restart starts again at 1). */
  record_id: number;
  /** The `In[n]` number; null if IPython gave none. */
  execution_count: number | null;
  /** The notebook cell's id (= cell model id); null for console executions. */
  cell_id: string | null;
  /** Unix seconds (kernel clock) when the cell started. */
  started: number;
  duration_s: number;
  /** One of CellStatus; any other string is kept as is. */
  status: string;
  error: CellError | null;
  /** True when every peak in the record is exact. */
  peak_exact: boolean;
  host: CellHostMemory;
  /** Devices whose caching allocator holds or held memory (may be empty). */
  gpus: CellGpuMemory[];
  /** The out-of-memory diagnosis; null unless the cell died of OOM (absent from older helpers). */
  oom: OomDiagnosis | null;
}

/**
 * Per-cell records, oldest first: one message per round of the helper's
 * sender (a lone cell's record alone; a "Run All" gathers the cells of ~50 ms).
 */
export interface CellsMessage {
  type: 'cells';
  records: CellMemoryRecord[];
  /** One text per record that could not be read (the others are kept). */
  invalid: string[];
}

export interface ReplyMessage {
  type: 'reply';
  request_id: string;
  request_type: string;
  result: { [key: string]: unknown };
}

/** 'malformed' | 'unknown_type' | 'invalid_config' | 'internal' (others kept). */
export type HelperErrorCode = string;

export interface ErrorMessage {
  type: 'error';
  /** null when the request had no readable id. */
  request_id: string | null;
  code: HelperErrorCode;
  message: string;
}

export type KernelMessage =
  | HelloMessage
  | SampleMessage
  | CellsMessage
  | ReplyMessage
  | ErrorMessage;

/**
 * Outcome of parsing one comm message from the kernel.
 *
 * `incompatible` is its own outcome, not a kind of `malformed`: a hello of
 * another protocol version is well-formed in its own version, and the user
 * must be told about the mismatch, not about a parse error.
 *
 * `unsupported` is a JSON object with a string `type` this parser does not
 * know: a message type a newer feature of the helper added
 * that this frontend does not handle. It is not an error.
 */
export type ParseResult =
  | { kind: 'message'; message: KernelMessage }
  | { kind: 'incompatible'; protocol: unknown; helperVersion: string | null }
  | { kind: 'unsupported'; type: string; data: { [key: string]: unknown } }
  | { kind: 'malformed'; error: string };

// ---------------------------------------------------------------------------
// Parser

/** Raised inside the parser; turned into a `malformed` result. */
export class ShapeError extends Error {}

/** A short, safe description of an untrusted value for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) {
    return 'nothing';
  }
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? text.slice(0, 57) + '...' : text;
}

/** Reads fields of one JSON object, naming the path in every error. */
export class FieldReader {
  constructor(
    readonly path: string,
    readonly data: { [key: string]: unknown }
  ) {}

  static of(value: unknown, path: string): FieldReader {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ShapeError(
        `${path}: expected an object, got ${describeValue(value)}`
      );
    }
    return new FieldReader(path, value as { [key: string]: unknown });
  }

  private fail(key: string, expected: string): never {
    throw new ShapeError(
      `${this.path}.${key}: expected ${expected}, got ${describeValue(this.data[key])}`
    );
  }

  has(key: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.data, key);
  }

  string(key: string): string {
    const v = this.data[key];
    return typeof v === 'string' ? v : this.fail(key, 'a string');
  }

  /** A string or null; a missing key reads as null. */
  nullableString(key: string): string | null {
    const v = this.data[key];
    if (v === undefined || v === null) {
      return null;
    }
    return typeof v === 'string' ? v : this.fail(key, 'a string or null');
  }

  number(key: string): number {
    const v = this.data[key];
    return typeof v === 'number' && Number.isFinite(v)
      ? v
      : this.fail(key, 'a number');
  }

  integer(key: string): number {
    const v = this.data[key];
    return typeof v === 'number' && Number.isInteger(v)
      ? v
      : this.fail(key, 'an integer');
  }

  /** An integer or null; a missing key reads as null. */
  nullableInteger(key: string): number | null {
    return this.isAbsent(key) ? null : this.integer(key);
  }

  boolean(key: string): boolean {
    const v = this.data[key];
    return typeof v === 'boolean' ? v : this.fail(key, 'true or false');
  }

  /**
   * A byte count or counter: a non-negative number, or null for "unknown".
   * A missing key reads as null (unknown), never as 0.
   */
  bytes(key: string): number | null {
    const v = this.data[key];
    if (v === undefined || v === null) {
      return null;
    }
    return typeof v === 'number' && Number.isFinite(v) && v >= 0
      ? v
      : this.fail(key, 'a non-negative number or null');
  }

  object(key: string): FieldReader {
    if (!this.has(key)) {
      this.fail(key, 'an object');
    }
    return FieldReader.of(this.data[key], `${this.path}.${key}`);
  }

  /** An object or null; a missing key reads as null. */
  nullableObject(key: string): FieldReader | null {
    const v = this.data[key];
    if (v === undefined || v === null) {
      return null;
    }
    return FieldReader.of(v, `${this.path}.${key}`);
  }

  array(key: string): unknown[] {
    const v = this.data[key];
    if (!Array.isArray(v)) {
      return this.fail(key, 'an array');
    }
    // JSON has no holes, but data built in the page may: map() would skip
    // them and leave undefined entries behind the parser's back.
    return hasHoles(v) ? Array.from(v) : v;
  }

  /** An array or null; a missing key reads as null (older helpers). */
  nullableArray(key: string): unknown[] | null {
    return this.isAbsent(key) ? null : this.array(key);
  }

  private isAbsent(key: string): boolean {
    const v = this.data[key];
    return v === undefined || v === null;
  }
}

function hasHoles(array: unknown[]): boolean {
  for (let i = 0; i < array.length; i++) {
    if (!(i in array)) {
      return true;
    }
  }
  return false;
}

function readConfig(r: FieldReader): HelperConfig {
  return {
    interval_s: r.number('interval_s'),
    change_threshold_bytes: r.number('change_threshold_bytes'),
    heartbeat_s: r.number('heartbeat_s'),
    reset_peak_per_cell: r.has('reset_peak_per_cell')
      ? r.boolean('reset_peak_per_cell')
      : true
  };
}

function readHello(r: FieldReader): HelloMessage {
  // Read in document order, so the first bad field is the one reported.
  const protocol = r.integer('protocol');
  const helper_version = r.string('helper_version');
  const python = r.string('python');
  const pid = r.integer('pid');
  const hostname = r.string('hostname');
  const record_series = r.string('record_series');
  const torch = r.nullableObject('torch');
  const torchInfo = torch && {
    version: torch.nullableString('version'),
    cuda_build: torch.nullableString('cuda_build'),
    cuda_initialized: torch.boolean('cuda_initialized')
  };
  const tensorflow = r.nullableObject('tensorflow');
  const tensorflowInfo = tensorflow && {
    version: tensorflow.nullableString('version'),
    gpus_initialized: tensorflow.boolean('gpus_initialized')
  };
  const nvml = r.object('nvml');
  const nvmlInfo = {
    available: nvml.boolean('available'),
    driver_version: nvml.nullableString('driver_version'),
    error: nvml.nullableString('error')
  };
  const devices = r.array('devices').map((item, i) => {
    const d = FieldReader.of(item, `${r.path}.devices[${i}]`);
    return {
      index: d.integer('index'),
      name: d.nullableString('name'),
      total_bytes: d.bytes('total_bytes'),
      uuid: d.nullableString('uuid')
    };
  });
  const config = readConfig(r.object('config'));
  return {
    type: 'hello',
    protocol,
    helper_version,
    python,
    pid,
    hostname,
    record_series,
    torch: torchInfo,
    tensorflow: tensorflowInfo,
    nvml: nvmlInfo,
    devices,
    config
  };
}

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
  const oom_kill_count = c.nullableInteger('oom_kill_count');
  if (oom_kill_count !== null && oom_kill_count < 0) {
    throw new ShapeError(
      `${c.path}.oom_kill_count: expected a non-negative integer, got ${oom_kill_count}`
    );
  }
  const version = c.integer('cgroup_version');
  if (version !== 1 && version !== 2) {
    throw new ShapeError(
      `${c.path}.cgroup_version: expected 1 or 2, got ${version}`
    );
  }
  return { limit_bytes: limit, usage_bytes, oom_kill_count, cgroup_version: version };
}

function readSample(r: FieldReader): SampleMessage {
  // Read in document order, so the first bad field is the one reported.
  const seq = r.integer('seq');
  const time = r.number('time');
  const reason = r.string('reason');
  const host = r.object('host');
  const hostFigures = {
    rss_bytes: host.bytes('rss_bytes'),
    total_bytes: host.bytes('total_bytes'),
    available_bytes: host.bytes('available_bytes'),
    container: readContainer(host)
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
  return {
    type: 'sample',
    seq,
    time,
    reason,
    host: hostFigures,
    torch: torchState,
    tensorflow: tfState,
    gpus
  };
}

/** Longest `cell_id` the protocol allows. */
const MAX_CELL_ID_LENGTH = 256;

function readCellRecord(r: FieldReader): CellMemoryRecord {
  // Read in document order, so the first bad field is the one reported.
  const record_id = r.integer('record_id');
  const execution_count = r.nullableInteger('execution_count');
  const cell_id = r.nullableString('cell_id');
  if (cell_id !== null && cell_id.length > MAX_CELL_ID_LENGTH) {
    throw new ShapeError(
      `${r.path}.cell_id: expected at most ${MAX_CELL_ID_LENGTH} characters, got ${cell_id.length}`
    );
  }
  const started = r.number('started');
  const duration_s = r.number('duration_s');
  if (duration_s < 0) {
    throw new ShapeError(
      `${r.path}.duration_s: expected a non-negative number, got ${duration_s}`
    );
  }
  const status = r.string('status');
  const err = r.nullableObject('error');
  const error = err && {
    type: err.string('type'),
    message_head: err.string('message_head'),
    out_of_memory: err.boolean('out_of_memory')
  };
  const peak_exact = r.boolean('peak_exact');
  const h = r.object('host');
  const host = {
    rss_before_bytes: h.bytes('rss_before_bytes'),
    rss_after_bytes: h.bytes('rss_after_bytes'),
    rss_peak_bytes: h.bytes('rss_peak_bytes'),
    peak_exact: h.boolean('peak_exact')
  };
  const gpus = r.array('gpus').map((item, i) => {
    const g = FieldReader.of(item, `${r.path}.gpus[${i}]`);
    return {
      index: g.integer('index'),
      allocated_before_bytes: g.bytes('allocated_before_bytes'),
      allocated_after_bytes: g.bytes('allocated_after_bytes'),
      allocated_peak_bytes: g.bytes('allocated_peak_bytes'),
      reserved_before_bytes: g.bytes('reserved_before_bytes'),
      reserved_after_bytes: g.bytes('reserved_after_bytes'),
      reserved_peak_bytes: g.bytes('reserved_peak_bytes'),
      peak_exact: g.boolean('peak_exact')
    };
  });
  const oomReader = r.nullableObject('oom');
  const oom = oomReader && readOomDiagnosis(oomReader);
  return {
    record_id,
    execution_count,
    cell_id,
    started,
    duration_s,
    status,
    error,
    peak_exact,
    host,
    gpus,
    oom
  };
}

function readCells(r: FieldReader): CellsMessage {
  const records: CellMemoryRecord[] = [];
  const invalid: string[] = [];
  r.array('records').forEach((item, i) => {
    const parsed = parseCellRecord(item, `${r.path}.records[${i}]`);
    if ('record' in parsed) {
      records.push(parsed.record);
    } else {
      invalid.push(parsed.error);
    }
  });
  return { type: 'cells', records, invalid };
}

/**
 * Validate one `CellMemoryRecord` (e.g. an item of a `history` reply).
 * Never throws.
 */
export function parseCellRecord(
  value: unknown,
  path = 'record'
): { record: CellMemoryRecord } | { error: string } {
  try {
    return { record: readCellRecord(FieldReader.of(value, path)) };
  } catch (e) {
    return {
      error:
        e instanceof ShapeError ? e.message : `could not read ${path}: ${String(e)}`
    };
  }
}

/**
 * Read the `result` of a `history` reply: the valid records, and one error
 * text per record (or for the whole result) that could not be read. Never
 * throws.
 */
export function parseHistoryResult(result: unknown): {
  records: CellMemoryRecord[];
  errors: string[];
} {
  const records: CellMemoryRecord[] = [];
  const errors: string[] = [];
  const list =
    typeof result === 'object' && result !== null
      ? (result as { records?: unknown }).records
      : undefined;
  if (!Array.isArray(list)) {
    errors.push(
      `history.records: expected an array, got ${describeValue(list)}`
    );
    return { records, errors };
  }
  list.forEach((item, i) => {
    const parsed = parseCellRecord(item, `history.records[${i}]`);
    if ('record' in parsed) {
      records.push(parsed.record);
    } else {
      errors.push(parsed.error);
    }
  });
  return { records, errors };
}

function readReply(r: FieldReader): ReplyMessage {
  return {
    type: 'reply',
    request_id: r.string('request_id'),
    request_type: r.string('request_type'),
    result: r.object('result').data
  };
}

function readError(r: FieldReader): ErrorMessage {
  return {
    type: 'error',
    request_id: r.nullableString('request_id'),
    code: r.string('code'),
    message: r.string('message')
  };
}

/**
 * Validate the `data` of a comm message from the kernel helper.
 *
 * Never throws: bad data comes back as `{kind: 'malformed', error}` naming
 * the offending field, a hello of another protocol version as
 * `{kind: 'incompatible'}` (its other fields are not checked: they may
 * legitimately differ in that version), and an object of a type not
 * described here as `{kind: 'unsupported'}`.
 */
export function parseKernelMessage(data: unknown): ParseResult {
  try {
    const r = FieldReader.of(data, 'message');
    const type = r.data.type;
    if (typeof type !== 'string') {
      throw new ShapeError(
        `message.type: expected a string, got ${describeValue(type)}`
      );
    }
    switch (type) {
      case 'hello': {
        const protocol = r.data.protocol;
        if (protocol !== PROTOCOL_VERSION) {
          const version = r.data.helper_version;
          return {
            kind: 'incompatible',
            protocol,
            helperVersion: typeof version === 'string' ? version : null
          };
        }
        return { kind: 'message', message: readHello(FieldReader.of(data, 'hello')) };
      }
      case 'sample':
        return { kind: 'message', message: readSample(FieldReader.of(data, 'sample')) };
      case 'cells':
        return { kind: 'message', message: readCells(FieldReader.of(data, 'cells')) };
      case 'reply':
        return { kind: 'message', message: readReply(FieldReader.of(data, 'reply')) };
      case 'error':
        return { kind: 'message', message: readError(FieldReader.of(data, 'error')) };
      default:
        return { kind: 'unsupported', type, data: r.data };
    }
  } catch (e) {
    if (e instanceof ShapeError) {
      return { kind: 'malformed', error: e.message };
    }
    return { kind: 'malformed', error: `could not read the message: ${String(e)}` };
  }
}
