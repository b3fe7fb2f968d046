/**
 * The parsers of the kernel's process tree: the sample's `processes`, a cell
 * record's `processes`, and the `stop_process` reply (docs/protocol.md,
 * "Every process the kernel started"). `readSample` and the cell record
 * reader call the first two. The `stop_process` reply's reader is in
 * stopProcess.ts, which loads with the first stop rather than with the page.
 *
 * The wire types are generated from protocol/protocol.schema.json
 * (protocol.generated.ts) and re-exported here under the names the frontend
 * imports; every key is read, so a new one is never dropped unseen.
 */
import { FieldReader, Parsed, parseWith, ShapeError } from './reader';
import type {
  CellProcessTree,
  ProcessHostMemory,
  ProcessTree,
  ProcessTreeTotals,
  TreeProcess
} from './protocol.generated';

export type {
  CellProcessTree,
  CellTreeGpu,
  ProcessGpuMemory,
  ProcessHostMemory,
  ProcessTree,
  ProcessTreeTotals,
  StopGpu,
  StopMemory,
  StopProcessResult,
  TreeGpuTotal,
  TreeProcess
} from './protocol.generated';

/** The roles the helper names; a reader keeps any other string as is. */
export type ProcessRole =
  | 'dataloader_worker'
  | 'mp_pool_worker'
  | 'mp_process'
  | 'mp_helper'
  | 'torch_distributed_rank'
  | 'vllm_engine'
  | 'ray_worker'
  | 'raylet'
  | 'ray_node'
  | 'dask_worker'
  | 'dask_nanny'
  | 'other';

/** A non-negative integer (a count, a pid, a start time). */
export function count(r: FieldReader, key: string, least = 0): number {
  const value = r.integer(key);
  if (value < least) {
    throw new ShapeError(
      `${r.path}.${key}: expected an integer of at least ${least}, got ${value}`
    );
  }
  return value;
}

function readHost(r: FieldReader): ProcessHostMemory {
  const rollupAt = r.data['rollup_at'];
  return {
    measure: r.string('measure'),
    host_bytes: r.bytes('host_bytes'),
    uss_bytes: r.bytes('uss_bytes'),
    pss_bytes: r.bytes('pss_bytes'),
    rss_bytes: r.bytes('rss_bytes'),
    swap_bytes: r.bytes('swap_bytes'),
    rollup_at:
      rollupAt === null || rollupAt === undefined ? null : r.number('rollup_at')
  };
}

/** Reads one process of a tree (also the process a `stop_process` reply names). */
export function readProcess(item: unknown, path: string): TreeProcess {
  const p = FieldReader.of(item, path);
  return {
    pid: count(p, 'pid', 1),
    start_time: count(p, 'start_time'),
    ppid: count(p, 'ppid'),
    reparented: p.boolean('reparented'),
    depth: count(p, 'depth', 1),
    name: p.string('name'),
    command: p.string('command'),
    role: p.string('role'),
    role_basis: p.nullableString('role_basis'),
    role_guess: p.boolean('role_guess'),
    host: readHost(p.object('host')),
    gpus: p.array('gpus').map((gpu, i) => {
      const g = FieldReader.of(gpu, `${p.path}.gpus[${i}]`);
      return { index: count(g, 'index'), used_bytes: g.bytes('used_bytes') };
    })
  };
}

/** Reads a tree's totals; null for none. */
export function readTotals(r: FieldReader | null): ProcessTreeTotals | null {
  if (!r) {
    return null;
  }
  return {
    host_bytes: r.bytes('host_bytes'),
    processes_host_bytes: r.bytes('processes_host_bytes'),
    processes_pss_bytes: r.bytes('processes_pss_bytes'),
    host_measure: r.string('host_measure'),
    gpus: r.array('gpus').map((gpu, i) => {
      const g = FieldReader.of(gpu, `${r.path}.gpus[${i}]`);
      return {
        index: count(g, 'index'),
        used_bytes: g.bytes('used_bytes'),
        processes_used_bytes: g.bytes('processes_used_bytes')
      };
    })
  };
}

/** Reads one `ProcessTree` (the value of a sample's `processes`). */
export function readProcessTreeValue(t: FieldReader): ProcessTree {
  return {
    method: t.string('method'),
    read_at: t.number('read_at'),
    processes: t
      .array('processes')
      .map((item, i) => readProcess(item, `${t.path}.processes[${i}]`)),
    totals: readTotals(t.nullableObject('totals'))
  };
}

/** A sample's `processes`: absent (older helpers) or null (no /proc) reads as null. */
export function readProcessTree(sample: FieldReader): ProcessTree | null {
  const tree = sample.nullableObject('processes');
  return tree && readProcessTreeValue(tree);
}

/** A cell record's `processes`: absent (no process at any reading, older helpers) reads as undefined. */
export function readCellProcessTree(
  record: FieldReader
): CellProcessTree | undefined {
  const c = record.nullableObject('processes');
  if (!c) {
    return undefined;
  }
  return {
    host_before_bytes: c.bytes('host_before_bytes'),
    host_after_bytes: c.bytes('host_after_bytes'),
    host_sampled_max_bytes: c.bytes('host_sampled_max_bytes'),
    processes_before: count(c, 'processes_before'),
    processes_after: count(c, 'processes_after'),
    sample_spacing_s: c.number('sample_spacing_s'),
    samples: count(c, 'samples'),
    gpus: c.array('gpus').map((gpu, i) => {
      const g = FieldReader.of(gpu, `${c.path}.gpus[${i}]`);
      return {
        index: count(g, 'index'),
        before_bytes: g.bytes('before_bytes'),
        after_bytes: g.bytes('after_bytes'),
        sampled_max_bytes: g.bytes('sampled_max_bytes')
      };
    })
  };
}

/** Read a `ProcessTree` on its own (a sample's `processes`). Never throws. */
export function parseProcessTree(value: unknown): Parsed<ProcessTree> {
  return parseWith(value, 'processes', readProcessTreeValue);
}

/** Read a cell record's `processes` on its own. Never throws. */
export function parseCellProcessTree(
  value: unknown
): Parsed<CellProcessTree | undefined> {
  return parseWith({ processes: value }, 'record', readCellProcessTree);
}
