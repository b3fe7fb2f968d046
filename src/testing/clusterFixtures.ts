/**
 * Cluster fixtures shaped like what the helper sends for a Dask
 * LocalCluster and a Ray runtime (protocol/protocol.schema.json,
 * ClusterMessage): a worker, a cluster of any size (64 workers for the
 * scale checks), events, a cell record's cluster figures, an out-of-memory
 * diagnosis's worker and a cluster_action result.
 *
 * It imports types only, so that the browser benchmark
 * (ui-tests/benchmarks/cluster.bench.ts) can build the same messages.
 */
import type {
  CellCluster,
  ClusterActionResult,
  ClusterActionWorker,
  ClusterEvent,
  ClusterMessage,
  ClusterOomWorker,
  ClusterState,
  ClusterWorker
} from '../protocol/cluster';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** The kernel-clock time the fixtures are read at. */
export const CLUSTER_TIME = 1732200000;

/** The scheduler address of the fixtures' Dask cluster. */
export const DASK_NAME = 'tcp://127.0.0.1:8786';

/** Worker `i` of a Dask LocalCluster; `step` moves its figures, as successive readings do. */
export function makeClusterWorker(
  i = 0,
  step = 0,
  overrides: Partial<ClusterWorker> = {}
): ClusterWorker {
  const port = 40000 + i;
  // A smooth, different curve per worker, so that every row changes.
  const used = Math.round(
    (0.8 + 0.6 * Math.abs(Math.sin((i + step) / 7))) * GiB
  );
  return {
    id: `tcp://127.0.0.1:${port}`,
    name: String(i),
    role: 'dask_worker',
    host: '127.0.0.1',
    pid: 5000 + i,
    local: true,
    status: 'running',
    memory_bytes: used,
    memory_source: 'engine',
    memory_limit_bytes: 2 * GiB,
    managed_bytes: Math.round(used * 0.6),
    spilled_bytes: step % 5 === 0 ? 0 : 16 * MiB * (i % 3),
    nthreads: 2,
    gpus:
      i % 2 === 0
        ? [
            {
              index: i % 8,
              name: 'NVIDIA H100 80GB HBM3',
              used_bytes: (4 + (step % 3)) * GiB,
              total_bytes: 80 * GiB,
              scope: 'process',
              utilization_percent: 40 + ((i + step) % 50)
            }
          ]
        : [],
    allocator: null,
    ...overrides
  };
}

/** A Dask cluster of `workers` workers at reading `step`. */
export function makeClusterState(
  workers = 4,
  step = 0,
  overrides: Partial<ClusterState> = {}
): ClusterState {
  const list = Array.from({ length: workers }, (_, i) =>
    makeClusterWorker(i, step)
  );
  const sum = (pick: (w: ClusterWorker) => number | null) =>
    list.reduce((a, w) => a + (pick(w) ?? 0), 0);
  const gpus = list.flatMap(w => w.gpus);
  return {
    engine: 'dask',
    name: DASK_NAME,
    found_by: 'default_client',
    variable: null,
    version: '2024.8.0',
    dashboard: 'http://127.0.0.1:8787/status',
    status: 'ok',
    message: null,
    read_at: CLUSTER_TIME + step * 2,
    read_ms: 12.5,
    interval_s: 2,
    workers: list,
    totals: {
      workers: list.length,
      paused: list.filter(w => w.status === 'paused').length,
      memory_bytes: sum(w => w.memory_bytes),
      memory_limit_bytes: sum(w => w.memory_limit_bytes),
      spilled_bytes: sum(w => w.spilled_bytes),
      gpu_used_bytes: gpus.length
        ? gpus.reduce((a, g) => a + (g.used_bytes ?? 0), 0)
        : null,
      gpu_total_bytes: gpus.length
        ? gpus.reduce((a, g) => a + (g.total_bytes ?? 0), 0)
        : null
    },
    unseen: [
      "Dask reports no worker's GPU memory; the GPU figures are the driver's, read for local workers only."
    ],
    actions: ['gc', 'empty_cache', 'restart', 'read_allocators'],
    ...overrides
  };
}

/** One event, a memory restart of worker 3 by default. */
export function makeClusterEvent(
  overrides: Partial<ClusterEvent> = {}
): ClusterEvent {
  return {
    id: 1,
    time: CLUSTER_TIME + 10,
    engine: 'dask',
    cluster: DASK_NAME,
    worker: 'tcp://127.0.0.1:40003',
    pid: 5003,
    kind: 'memory_restart',
    engine_message:
      'Worker tcp://127.0.0.1:40003 (pid=5003) exceeded 95% memory budget. Restarting...',
    last: {
      read_at: CLUSTER_TIME + 7,
      memory_bytes: Math.round(1.9 * 10 ** 9),
      memory_limit_bytes: 2 * 10 ** 9,
      spilled_bytes: 0,
      gpu_used_bytes: null
    },
    ...overrides
  };
}

/** A `cluster` message with one Dask cluster of `workers` workers at reading `step`. */
export function makeClusterMessage(
  workers = 4,
  step = 0,
  overrides: Partial<ClusterMessage> = {}
): ClusterMessage {
  return {
    type: 'cluster',
    seq: step + 1,
    time: CLUSTER_TIME + step * 2,
    clusters: [makeClusterState(workers, step)],
    events: [],
    ...overrides
  };
}

/** A cell record's cluster figures: 4 workers that grew by 1 GiB, a sampled maximum of 9 GiB. */
export function makeCellCluster(
  overrides: Partial<CellCluster> = {}
): CellCluster {
  return {
    clusters: [DASK_NAME],
    before_bytes: 4 * GiB,
    after_bytes: 5 * GiB,
    sampled_max_bytes: 9 * GiB,
    workers_before: 4,
    workers_after: 4,
    samples: 6,
    sample_spacing_s: 2,
    events: [],
    ...overrides
  };
}

/** An out-of-memory diagnosis's worker: a memory restart of worker 3. */
export function makeClusterOomWorker(
  overrides: Partial<ClusterOomWorker> = {}
): ClusterOomWorker {
  const event = makeClusterEvent();
  return {
    engine: 'dask',
    cluster: DASK_NAME,
    worker: event.worker,
    pid: event.pid,
    kind: 'killed_worker',
    last: event.last,
    ...overrides
  };
}

/** What an action did on worker `i`: 300 MiB of host and 1 GiB of GPU cache given back. */
export function makeActionWorker(
  i = 0,
  overrides: Partial<ClusterActionWorker> = {}
): ClusterActionWorker {
  return {
    id: `tcp://127.0.0.1:${40000 + i}`,
    ok: true,
    error: null,
    torch: true,
    host_before_bytes: 1500 * MiB,
    host_after_bytes: 1200 * MiB,
    gpu_reserved_before_bytes: 3 * GiB,
    gpu_reserved_after_bytes: 2 * GiB,
    allocator: null,
    ...overrides
  };
}

/** A cluster_action result over `workers` workers. */
export function makeClusterActionResult(
  workers = 2,
  overrides: Partial<ClusterActionResult> = {}
): ClusterActionResult {
  return {
    engine: 'dask',
    cluster: DASK_NAME,
    action: 'empty_cache',
    done: true,
    message: null,
    workers: Array.from({ length: workers }, (_, i) => makeActionWorker(i)),
    ...overrides
  };
}
