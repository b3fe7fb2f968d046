/**
 * Process tree fixtures shaped like docs/protocol.md's examples ("The
 * kernel's processes"): one process, a tree, a cell record's processes, a
 * stop_process result, a releasable and a release_engine result.
 */
import type {
  CellProcessTree,
  ProcessTree,
  StopProcessResult,
  TreeProcess
} from '../protocol/processes';
import type {
  Releasable,
  ReleaseEngineResult,
  ReleaseOutcome
} from '../protocol/release';
import { MiB } from './fixtures';

export function makeTreeProcess(
  overrides: Partial<TreeProcess> = {}
): TreeProcess {
  return {
    pid: 4312,
    start_time: 2729022,
    ppid: 4242,
    reparented: false,
    depth: 1,
    name: 'pt_data_worker',
    command: '/opt/venv/bin/python -m ipykernel_launcher -f /run/kernel-1.json',
    role: 'dataloader_worker',
    role_basis: 'name',
    role_guess: false,
    host: {
      measure: 'uss',
      host_bytes: 100 * MiB,
      uss_bytes: 100 * MiB,
      pss_bytes: 172 * MiB,
      rss_bytes: 584 * MiB,
      swap_bytes: 0,
      rollup_at: 1732200000.1
    },
    gpus: [{ index: 0, used_bytes: 500 * MiB }],
    ...overrides
  };
}

/** A tree of `processes` read at `readAt`, with totals (null without processes). */
export function makeProcessTree(
  processes: TreeProcess[] = [makeTreeProcess()],
  readAt = 1732200000.25
): ProcessTree {
  const host = processes.reduce((sum, p) => sum + (p.host.host_bytes ?? 0), 0);
  const gpu = processes.reduce(
    (sum, p) => sum + p.gpus.reduce((s, g) => s + (g.used_bytes ?? 0), 0),
    0
  );
  return {
    method: 'task_children',
    read_at: readAt,
    processes,
    totals: processes.length
      ? {
          host_bytes: 512 * MiB + host,
          processes_host_bytes: host,
          processes_pss_bytes: null,
          host_measure: 'uss',
          gpus: [
            {
              index: 0,
              used_bytes: 2560 * MiB + gpu,
              processes_used_bytes: gpu
            }
          ]
        }
      : null
  };
}

/** A cell record's `processes`: none before, one holding 400 MiB after. */
export function makeCellProcesses(
  overrides: Partial<CellProcessTree> = {}
): CellProcessTree {
  return {
    host_before_bytes: 0,
    host_after_bytes: 400 * MiB,
    host_sampled_max_bytes: 500 * MiB,
    processes_before: 0,
    processes_after: 1,
    sample_spacing_s: 1.0,
    samples: 5,
    gpus: [],
    ...overrides
  };
}

/** A stop_process result: `process` ended on SIGTERM. */
export function makeStopResult(
  process: TreeProcess = makeTreeProcess(),
  overrides: Partial<StopProcessResult> = {}
): StopProcessResult {
  return {
    pid: process.pid,
    start_time: process.start_time,
    outcome: 'terminated',
    refusal: null,
    reason: null,
    signals: ['SIGTERM'],
    waited_s: 0.04,
    process,
    still_zombie: false,
    before: {
      totals: {
        host_bytes: 612 * MiB,
        processes_host_bytes: 100 * MiB,
        processes_pss_bytes: null,
        host_measure: 'uss',
        gpus: []
      },
      available_bytes: 20000 * MiB,
      gpus: [{ index: 0, used_bytes: 3060 * MiB }]
    },
    after: {
      totals: null,
      available_bytes: 20100 * MiB,
      gpus: [{ index: 0, used_bytes: 2560 * MiB }]
    },
    elapsed_ms: 61.5,
    ...overrides
  };
}

/** A releasable: a fork pool of two workers holding 100 MiB between them. */
export function makeReleasable(
  overrides: Partial<Releasable> = {}
): Releasable {
  return {
    kind: 'mp_pool',
    name: 'pool',
    label: 'multiprocessing Pool (2 workers, fork)',
    processes: [
      { pid: 4420, start_time: 2729500, role: 'mp_pool_worker' },
      { pid: 4421, start_time: 2729501, role: 'mp_pool_worker' }
    ],
    host_bytes: 100 * MiB,
    gpus: [],
    ...overrides
  };
}

/** A release_engine result: `releasable` released, nothing left to release. */
export function makeReleaseResult(
  releasable: Releasable = makeReleasable(),
  overrides: Partial<ReleaseOutcome> = {}
): ReleaseEngineResult {
  const stop = makeStopResult();
  return {
    mode: 'release',
    releasables: [],
    released: {
      kind: releasable.kind,
      name: releasable.name,
      outcome: 'released',
      reason: null,
      steps: [{ action: 'pool.terminate()', ok: true, error: null }],
      processes: releasable.processes,
      still_alive: [],
      waited_s: 0.12,
      before: stop.before,
      after: stop.after,
      ...overrides
    },
    elapsed_ms: 130
  };
}
