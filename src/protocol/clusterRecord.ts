/**
 * The cluster parts of what the kernel records about a cell: a cell
 * record's `cluster` (the memory of the clusters the kernel drives, around
 * the cell) and an out-of-memory diagnosis's `cluster_worker` (which worker
 * the error came from). Both are absent from older helpers, and stay absent
 * rather than becoming empty, so that an older record reads as it did.
 */
import { count } from './processes';
import { readLastFigures } from './cluster';
import { FieldReader, ShapeError } from './reader';
import type { CellCluster, ClusterOomWorker } from './protocol.generated';

/** Reads a list of positive integers (event ids). */
function ids(r: FieldReader, key: string): number[] {
  return r.array(key).map((item, i) => {
    if (typeof item !== 'number' || !Number.isInteger(item) || item < 1) {
      throw new ShapeError(
        `${r.path}.${key}[${i}]: expected a positive integer`
      );
    }
    return item;
  });
}

/** Reads a list of strings (cluster names). */
function names(r: FieldReader, key: string): string[] {
  return r.array(key).map((item, i) => {
    if (typeof item !== 'string') {
      throw new ShapeError(`${r.path}.${key}[${i}]: expected a string`);
    }
    return item;
  });
}

/** Reads a cell record's `cluster`; undefined where the record has none. */
export function readCellCluster(record: FieldReader): CellCluster | undefined {
  const c = record.nullableObject('cluster');
  if (!c) {
    return undefined;
  }
  return {
    clusters: names(c, 'clusters'),
    before_bytes: c.bytes('before_bytes'),
    after_bytes: c.bytes('after_bytes'),
    sampled_max_bytes: c.bytes('sampled_max_bytes'),
    workers_before: count(c, 'workers_before'),
    workers_after: count(c, 'workers_after'),
    samples: count(c, 'samples'),
    sample_spacing_s: c.number('sample_spacing_s'),
    events: ids(c, 'events')
  };
}

/** Reads a diagnosis's `cluster_worker`; null where the error did not come from a worker. */
export function readClusterOomWorker(
  oom: FieldReader
): ClusterOomWorker | null {
  const w = oom.nullableObject('cluster_worker');
  if (!w) {
    return null;
  }
  return {
    engine: w.string('engine'),
    cluster: w.string('cluster'),
    worker: w.nullableString('worker'),
    pid: w.nullableInteger('pid'),
    kind: w.string('kind'),
    last: readLastFigures(w.nullableObject('last'))
  };
}
