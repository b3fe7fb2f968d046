/**
 * The parsers of allocation recording: the `record_allocations`,
 * `allocation_sites` and `allocation_snapshot` requests and the
 * `allocation_recording` broadcast. They are described in docs/protocol.md,
 * under "Allocation sites"; the kernel side is
 * python_helper/jupyterlab_vram_helper/allocations/allocation_sites.py.
 *
 * Results are untrusted JSON, so the parsers check every field the UI relies
 * on and never throw; a bad result comes back as `{error}` naming the field.
 *
 * The wire types are generated from protocol/protocol.schema.json
 * (protocol.generated.ts) and re-exported here under the names the frontend
 * imports; the reader below checks untrusted JSON against them.
 */
import { FieldReader, Parsed, parseWith } from './reader';
import { count, readSite } from './site';
import type {
  AllocationSitesResult as WireAllocationSitesResult,
  AllocationSnapshotResult,
  CellAliveBytes as WireCellAliveBytes,
  CellAliveRun,
  DeviceSites,
  GpuRecording,
  RecordingState
} from './protocol.generated';

export type {
  AllocationSnapshotResult,
  CellAliveRun,
  DeviceSites,
  GpuRecording,
  HostRecording,
  RecordingState
} from './protocol.generated';

/**
 * A cell's live bytes as the readers give them. `runs` is always set, and
 * is [] where the wire leaves it out, because only `cell_alive` messages
 * send it and an `allocation_sites` result does not.
 */
export interface CellAliveBytes extends WireCellAliveBytes {
  runs: CellAliveRun[];
}

/** An `allocation_sites` result as `parseAllocationSites` gives it. */
export interface AllocationSitesResult extends Omit<
  WireAllocationSitesResult,
  'cells'
> {
  cells: CellAliveBytes[];
}

export type { AllocationSite, SiteCell, SiteFrame } from './site';

/**
 * Whether the kernel reads an allocator history, either its own or someone
 * else's.
 */
export function gpuHistoryReadable(gpu: GpuRecording): boolean {
  return gpu.state === 'recording' || gpu.state === 'shared';
}

// ---------------------------------------------------------------------------

/** Reads the state of allocation recording: on or off, on the host and on the GPU. */
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
      // Helpers older than live setting changes leave this out, so it reads
      // as unknown.
      restart_kept_stacks:
        gpu.has('restart_kept_stacks') && gpu.data.restart_kept_stacks !== null
          ? gpu.boolean('restart_kept_stacks')
          : null,
      restart_reason: gpu.nullableString('restart_reason')
    }
  };
}

/**
 * A time in seconds since the epoch, or null when it is null or absent, as
 * it is from older helpers.
 */
function optionalTime(r: FieldReader, key: string): number | null {
  return r.has(key) && r.data[key] !== null ? r.number(key) : null;
}

function readDevice(r: FieldReader): DeviceSites {
  const sites = r
    .array('sites')
    .map((item, i) => readSite(FieldReader.of(item, `${r.path}.sites[${i}]`)));
  // The sort is stable, so the kernel's order breaks ties.
  sites.sort((a, b) => b.bytes - a.bytes);
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

/** Reads the `result` of a `record_allocations` reply. It never throws. */
export function parseRecordingState(result: unknown): Parsed<RecordingState> {
  return parseWith(result, 'record_allocations', readRecordingState);
}

/** Reads the `result` of an `allocation_sites` reply. It never throws. */
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

/** Reads the `result` of an `allocation_snapshot` reply. It never throws. */
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
 * The cells of a `cell_alive` broadcast, which the kernel sends after each
 * cell while recording. It is null when `data` is not such a message or is
 * a malformed one.
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
 * `data` is not such a message or is a malformed one.
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
