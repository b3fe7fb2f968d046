/**
 * Wire types and parsers of allocation recording: the `record_allocations`,
 * `allocation_sites` and `allocation_snapshot` requests and the
 * `allocation_recording` broadcast (docs/protocol.md, "Allocation sites";
 * the kernel side is python_helper/jupyterlab_vram_helper/allocations/allocation_sites.py).
 *
 * Results are untrusted JSON: the parsers check every field the UI relies
 * on and never throw; a bad result comes back as `{error}` naming the field.
 */
import { FieldReader, Parsed, parseWith } from './reader';
import { AllocationSite, count, readSite } from './site';

export type { AllocationSite, SiteCell, SiteFrame } from './site';

/** tracemalloc: 'off', 'recording' (started by the helper) or 'shared' (someone else's). */
export interface HostRecording {
  state: string;
  frames: number | null;
  started: number | null;
  /** What tracemalloc itself holds. */
  overhead_bytes: number;
  /**
   * When recording restarted (the traces of earlier allocations are gone);
   * null when it did not.
   */
  restarted_at: number | null;
  /**
   * Why: 'frames' (another depth, a changed setting), 'symbolizer' (around
   * PyTorch's first stack symbolization, which tracing would slow to
   * minutes) or 'stopped_elsewhere' (tracemalloc.stop() in a cell: started
   * again); null without a restart, and from helpers older than the reason.
   */
  restart_reason: string | null;
}

/**
 * PyTorch's allocator history: 'off', 'waiting' (for CUDA), 'recording',
 * 'shared' (someone else's, read as it is and never reconfigured or stopped;
 * `max_entries` is then null) or 'unavailable'.
 */
export interface GpuRecording {
  state: string;
  max_entries: number | null;
  started: number | null;
  /** Allocated when recording started: memory without a stack. */
  allocated_before_bytes: number | null;
  /** Why it is not recording (waiting, unavailable); null otherwise. */
  reason: string | null;
  /**
   * When the history restarted (its earlier alloc/free events are gone);
   * null when it did not.
   */
  restarted_at: number | null;
  /** Whether live blocks kept their stacks through that restart. */
  restart_kept_stacks: boolean | null;
  /**
   * Why: 'max_entries' (a changed setting) or 'stopped_elsewhere' (switched
   * off in a cell, `_record_memory_history(enabled=None)`: started again);
   * null without a restart, and from helpers older than the reason.
   */
  restart_reason: string | null;
}

/** Whether the kernel reads an allocator history: its own, or someone else's. */
export function gpuHistoryReadable(gpu: GpuRecording): boolean {
  return gpu.state === 'recording' || gpu.state === 'shared';
}

export interface RecordingState {
  enabled: boolean;
  host: HostRecording;
  gpu: GpuRecording;
}

export interface DeviceSites {
  device: string;
  index: number | null;
  total_bytes: number;
  count: number;
  unattributed_bytes: number;
  helper_bytes: number;
  /** Allocations of `helper_bytes` (0 from a helper that does not say). */
  helper_count: number;
  truncated: boolean;
  /** Largest first. */
  sites: AllocationSite[];
}

/** Bytes a cell allocated that are still alive, per device. */
export interface CellAliveBytes {
  execution_count: number | null;
  cell_id: string | null;
  alive_bytes: { [device: string]: number };
  total_bytes: number;
  /** Its live bytes rose after each of its last runs: a likely leak. */
  growing: boolean;
  /** Its figure after each of its recent runs (`cell_alive` messages only). */
  runs: { execution_count: number | null; total_bytes: number }[];
}

export interface AllocationSitesResult {
  recording: RecordingState;
  elapsed_ms: number;
  devices: DeviceSites[];
  cells: CellAliveBytes[];
}

export interface AllocationSnapshotResult {
  format: string;
  /** The pickled snapshot, base64; null with `reason` when there is none. */
  data_base64: string | null;
  bytes: number;
  reason: string | null;
}

// ---------------------------------------------------------------------------

export function readRecordingState(r: FieldReader): RecordingState {
  const host = r.object('host');
  const gpu = r.object('gpu');
  return {
    enabled: r.boolean('enabled'),
    host: {
      state: host.string('state'),
      frames: host.nullableInteger('frames'),
      started:
        host.has('started') && host.data.started !== null
          ? host.number('started')
          : null,
      overhead_bytes: count(host, 'overhead_bytes'),
      restarted_at: optionalTime(host, 'restarted_at'),
      restart_reason: host.nullableString('restart_reason')
    },
    gpu: {
      state: gpu.string('state'),
      max_entries: gpu.nullableInteger('max_entries'),
      started:
        gpu.has('started') && gpu.data.started !== null
          ? gpu.number('started')
          : null,
      allocated_before_bytes: gpu.bytes('allocated_before_bytes'),
      reason: gpu.nullableString('reason'),
      restarted_at: optionalTime(gpu, 'restarted_at'),
      // Absent from helpers older than live setting changes.
      restart_kept_stacks:
        gpu.has('restart_kept_stacks') && gpu.data.restart_kept_stacks !== null
          ? gpu.boolean('restart_kept_stacks')
          : null,
      restart_reason: gpu.nullableString('restart_reason')
    }
  };
}

/** A time in seconds since the epoch; null when absent (older helpers) or null. */
function optionalTime(r: FieldReader, key: string): number | null {
  return r.has(key) && r.data[key] !== null ? r.number(key) : null;
}

function readDevice(r: FieldReader): DeviceSites {
  const sites = r
    .array('sites')
    .map((item, i) => readSite(FieldReader.of(item, `${r.path}.sites[${i}]`)));
  sites.sort((a, b) => b.bytes - a.bytes); // stable: the kernel's order breaks ties
  return {
    device: r.string('device'),
    index: r.nullableInteger('index'),
    total_bytes: count(r, 'total_bytes'),
    count: count(r, 'count'),
    unattributed_bytes: count(r, 'unattributed_bytes'),
    helper_bytes: count(r, 'helper_bytes'),
    helper_count: r.has('helper_count') ? count(r, 'helper_count') : 0,
    truncated: r.boolean('truncated'),
    sites
  };
}

function readAlive(r: FieldReader): CellAliveBytes {
  const map = r.object('alive_bytes');
  const alive: { [device: string]: number } = {};
  for (const device of Object.keys(map.data)) {
    alive[device] = count(map, device);
  }
  return {
    execution_count: r.nullableInteger('execution_count'),
    cell_id: r.nullableString('cell_id'),
    alive_bytes: alive,
    total_bytes: count(r, 'total_bytes'),
    growing: r.has('growing') ? r.boolean('growing') : false,
    runs: (r.nullableArray('runs') ?? []).map((item, i) => {
      const run = FieldReader.of(item, `${r.path}.runs[${i}]`);
      return {
        execution_count: run.nullableInteger('execution_count'),
        total_bytes: count(run, 'total_bytes')
      };
    })
  };
}

/** Read the `result` of a `record_allocations` reply. Never throws. */
export function parseRecordingState(result: unknown): Parsed<RecordingState> {
  return parseWith(result, 'record_allocations', readRecordingState);
}

/** Read the `result` of an `allocation_sites` reply. Never throws. */
export function parseAllocationSites(
  result: unknown
): Parsed<AllocationSitesResult> {
  return parseWith(result, 'allocation_sites', r => ({
    recording: readRecordingState(r.object('recording')),
    elapsed_ms: r.number('elapsed_ms'),
    devices: r
      .array('devices')
      .map((item, i) =>
        readDevice(FieldReader.of(item, `${r.path}.devices[${i}]`))
      ),
    cells: r
      .array('cells')
      .map((item, i) =>
        readAlive(FieldReader.of(item, `${r.path}.cells[${i}]`))
      )
  }));
}

/** Read the `result` of an `allocation_snapshot` reply. Never throws. */
export function parseAllocationSnapshot(
  result: unknown
): Parsed<AllocationSnapshotResult> {
  return parseWith(result, 'allocation_snapshot', r => ({
    format: r.string('format'),
    data_base64: r.nullableString('data_base64'),
    bytes: count(r, 'bytes'),
    reason: r.nullableString('reason')
  }));
}

/**
 * The cells of a `cell_alive` broadcast (after each cell, while recording),
 * or null when `data` is no such message (or a malformed one).
 */
export function parseCellAliveMessage(data: unknown): CellAliveBytes[] | null {
  if (
    typeof data !== 'object' ||
    data === null ||
    (data as { type?: unknown }).type !== 'cell_alive'
  ) {
    return null;
  }
  const parsed = parseWith(data, 'cell_alive', r =>
    r
      .array('cells')
      .map((item, i) =>
        readAlive(FieldReader.of(item, `${r.path}.cells[${i}]`))
      )
  );
  return 'value' in parsed ? parsed.value : null;
}

/**
 * The recording state of an `allocation_recording` broadcast, or null when
 * `data` is no such message (or a malformed one).
 */
export function parseRecordingBroadcast(data: unknown): RecordingState | null {
  if (
    typeof data !== 'object' ||
    data === null ||
    (data as { type?: unknown }).type !== 'allocation_recording'
  ) {
    return null;
  }
  const parsed = parseWith(data, 'allocation_recording', r =>
    readRecordingState(r.object('recording'))
  );
  return 'value' in parsed ? parsed.value : null;
}
