/**
 * The parsers of the memory of the Dask or Ray cluster a notebook drives
 * (protocol/protocol.schema.json, ClusterMessage and its parts): the
 * `cluster` message the helper sends after each reading of the cluster's
 * telemetry, and the `cluster_action` reply.
 *
 * The readers are tolerant, because one bad worker must not hide a cluster
 * of 64: a worker, an event or a cluster that does not parse is dropped
 * with a note that says why, and the rest is kept. Strings the schema names
 * as open (engine, status, role, scope, an event's kind...) are kept as
 * the kernel sent them, so that a newer helper's word still shows. Nothing
 * here throws into the UI.
 *
 * The wire types are generated from protocol/protocol.schema.json
 * (protocol.generated.ts) and re-exported here under the names the
 * frontend imports.
 */
import { count } from './processes';
import { FieldReader, Parsed, parseWith, ShapeError } from './reader';
import type {
  ClusterActionName,
  ClusterActionResult,
  ClusterActionWorker,
  ClusterAllocatorReading,
  ClusterEvent,
  ClusterLastFigures,
  ClusterMessage,
  ClusterState,
  ClusterTotals,
  ClusterWorker,
  ClusterWorkerGpu
} from './protocol.generated';

export type {
  CellCluster,
  ClusterActionName,
  ClusterActionRequest,
  ClusterActionResult,
  ClusterActionWorker,
  ClusterAllocatorDevice,
  ClusterAllocatorReading,
  ClusterEvent,
  ClusterLastFigures,
  ClusterMessage,
  ClusterOomWorker,
  ClusterState,
  ClusterTotals,
  ClusterWorker,
  ClusterWorkerGpu
} from './protocol.generated';

/** Every action a `cluster_action` request can name, in the order the panel offers them. */
export const CLUSTER_ACTIONS: readonly ClusterActionName[] = [
  'read_allocators',
  'gc',
  'empty_cache',
  'restart'
];

/** A `cluster` message as the reader gives it, with a note for each part it dropped. */
export interface ClusterReading {
  readonly message: ClusterMessage;
  /** One sentence per worker, event or cluster that could not be read. */
  readonly notes: readonly string[];
}

/** Whether `value` names a cluster action this frontend knows. */
export function isClusterAction(value: unknown): value is ClusterActionName {
  return (
    typeof value === 'string' &&
    (CLUSTER_ACTIONS as readonly string[]).includes(value)
  );
}

/** Reads the items of `key` with `read`, dropping each that fails with a note. */
function readEach<T>(
  r: FieldReader,
  key: string,
  notes: string[],
  read: (item: FieldReader) => T
): T[] {
  const out: T[] = [];
  r.array(key).forEach((item, i) => {
    const parsed = parseWith(item, `${r.path}.${key}[${i}]`, read);
    if ('value' in parsed) {
      out.push(parsed.value);
    } else {
      notes.push(parsed.error);
    }
  });
  return out;
}

/** Reads a required array of strings. */
function strings(r: FieldReader, key: string): string[] {
  return r.array(key).map((item, i) => {
    if (typeof item !== 'string') {
      throw new ShapeError(`${r.path}.${key}[${i}]: expected a string`);
    }
    return item;
  });
}

function readGpu(g: FieldReader): ClusterWorkerGpu {
  return {
    index: g.nullableInteger('index'),
    name: g.nullableString('name'),
    used_bytes: g.bytes('used_bytes'),
    total_bytes: g.bytes('total_bytes'),
    scope: g.string('scope'),
    utilization_percent: g.nullableNumber('utilization_percent')
  };
}

/** Reads a worker's allocator reading, or null where it has none. */
export function readAllocator(
  a: FieldReader | null
): ClusterAllocatorReading | null {
  if (!a) {
    return null;
  }
  return {
    read_at: a.number('read_at'),
    torch: a.boolean('torch'),
    cuda_initialized: a.boolean('cuda_initialized'),
    devices: a.array('devices').map((item, i) => {
      const d = FieldReader.of(item, `${a.path}.devices[${i}]`);
      return {
        device: count(d, 'device'),
        allocated_bytes: d.bytes('allocated_bytes'),
        reserved_bytes: d.bytes('reserved_bytes'),
        peak_bytes: d.bytes('peak_bytes')
      };
    })
  };
}

function readWorker(w: FieldReader): ClusterWorker {
  return {
    id: w.string('id'),
    name: w.string('name'),
    role: w.string('role'),
    host: w.string('host'),
    pid: w.nullableInteger('pid'),
    local: w.boolean('local'),
    status: w.string('status'),
    memory_bytes: w.bytes('memory_bytes'),
    memory_source: w.string('memory_source'),
    memory_limit_bytes: w.bytes('memory_limit_bytes'),
    managed_bytes: w.bytes('managed_bytes'),
    spilled_bytes: w.bytes('spilled_bytes'),
    nthreads: w.nullableInteger('nthreads'),
    gpus: w
      .array('gpus')
      .map((item, i) => readGpu(FieldReader.of(item, `${w.path}.gpus[${i}]`))),
    allocator: readAllocator(w.nullableObject('allocator'))
  };
}

function readTotals(t: FieldReader): ClusterTotals {
  return {
    workers: count(t, 'workers'),
    paused: count(t, 'paused'),
    memory_bytes: t.bytes('memory_bytes'),
    memory_limit_bytes: t.bytes('memory_limit_bytes'),
    spilled_bytes: t.bytes('spilled_bytes'),
    gpu_used_bytes: t.bytes('gpu_used_bytes'),
    gpu_total_bytes: t.bytes('gpu_total_bytes')
  };
}

function readState(c: FieldReader, notes: string[]): ClusterState {
  const actions: ClusterActionName[] = [];
  strings(c, 'actions').forEach(action => {
    if (isClusterAction(action)) {
      actions.push(action);
    } else {
      notes.push(
        `${c.path}.actions: "${action}" is not an action this panel can ask for`
      );
    }
  });
  return {
    engine: c.string('engine'),
    name: c.string('name'),
    found_by: c.string('found_by'),
    variable: c.nullableString('variable'),
    version: c.nullableString('version'),
    dashboard: c.nullableString('dashboard'),
    status: c.string('status'),
    message: c.nullableString('message'),
    read_at: c.nullableNumber('read_at'),
    read_ms: c.nullableNumber('read_ms'),
    interval_s: c.number('interval_s'),
    workers: readEach(c, 'workers', notes, readWorker),
    totals: readTotals(c.object('totals')),
    unseen: strings(c, 'unseen'),
    actions
  };
}

/** Reads a worker's last figures before an event or an error; null where the helper never read it. */
export function readLastFigures(
  l: FieldReader | null
): ClusterLastFigures | null {
  if (!l) {
    return null;
  }
  return {
    read_at: l.number('read_at'),
    memory_bytes: l.bytes('memory_bytes'),
    memory_limit_bytes: l.bytes('memory_limit_bytes'),
    spilled_bytes: l.bytes('spilled_bytes'),
    gpu_used_bytes: l.bytes('gpu_used_bytes')
  };
}

function readEvent(e: FieldReader): ClusterEvent {
  return {
    id: count(e, 'id', 1),
    time: e.number('time'),
    engine: e.string('engine'),
    cluster: e.string('cluster'),
    worker: e.nullableString('worker'),
    pid: e.nullableInteger('pid'),
    kind: e.string('kind'),
    engine_message: e.nullableString('engine_message'),
    last: readLastFigures(e.nullableObject('last'))
  };
}

/**
 * Reads a `cluster` message. A cluster, worker or event that does not
 * parse is left out with a note; only a message without its type, seq,
 * time or lists fails as a whole. It never throws.
 */
export function parseClusterMessage(data: unknown): Parsed<ClusterReading> {
  return parseWith(data, 'cluster', r => {
    if (r.data.type !== 'cluster') {
      throw new ShapeError('cluster.type: expected "cluster"');
    }
    const notes: string[] = [];
    const message: ClusterMessage = {
      type: 'cluster',
      seq: count(r, 'seq', 1),
      time: r.number('time'),
      clusters: readEach(r, 'clusters', notes, c => readState(c, notes)),
      events: readEach(r, 'events', notes, readEvent)
    };
    return { message, notes };
  });
}

function readActionWorker(w: FieldReader): ClusterActionWorker {
  return {
    id: w.string('id'),
    ok: w.boolean('ok'),
    error: w.nullableString('error'),
    torch: w.nullableBoolean('torch'),
    host_before_bytes: w.bytes('host_before_bytes'),
    host_after_bytes: w.bytes('host_after_bytes'),
    gpu_reserved_before_bytes: w.bytes('gpu_reserved_before_bytes'),
    gpu_reserved_after_bytes: w.bytes('gpu_reserved_after_bytes'),
    allocator: readAllocator(w.nullableObject('allocator'))
  };
}

/**
 * Reads the result of a `cluster_action` request. A worker entry that does
 * not parse is left out, and its error is added to the result's message,
 * so that the user still reads what came back from the others.
 */
export function parseClusterActionResult(
  value: unknown
): Parsed<ClusterActionResult> {
  return parseWith(value, 'cluster_action', r => {
    const action = r.string('action');
    if (!isClusterAction(action)) {
      throw new ShapeError(
        `cluster_action.action: expected a cluster action, got "${action}"`
      );
    }
    const notes: string[] = [];
    const workers = readEach(r, 'workers', notes, readActionWorker);
    const message = r.nullableString('message');
    return {
      engine: r.string('engine'),
      cluster: r.string('cluster'),
      action,
      done: r.boolean('done'),
      message: notes.length
        ? [message, ...notes].filter(m => m !== null).join(' ')
        : message,
      workers
    };
  });
}
