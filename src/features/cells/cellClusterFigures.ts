/**
 * The memory of the clusters the kernel drives around one cell, from its
 * record's `cluster` (protocol/protocol.schema.json, CellCluster): how
 * their workers' memory moved (after minus before) and its sampled
 * maximum. The telemetry is read every few seconds, so the maximum is
 * named "sampled": a rise between two readings is missed, and it is never
 * an exact peak.
 *
 * The figures are worked out from the record when a badge, a tooltip or
 * an export needs them, as the processes' are (cellProcessFigures.ts).
 */
import type { CellMemoryRecord } from '../../protocol/cell';

/** The memory of the clusters' workers around one cell. */
export interface ClusterAlongside {
  /** Their memory after the cell minus before it; null when either is unknown. */
  deltaBytes: number | null;
  /** The largest of the readings before, during and after the cell. */
  sampledMaxBytes: number | null;
  /** How many workers the readings before and after counted. */
  workersBefore: number;
  workersAfter: number;
  /** How many readings the maximum rests on, and their spacing. */
  samples: number;
  sampleSpacingS: number;
  /** How many cluster events were seen while the cell ran. */
  events: number;
}

/** Each record's figures, worked out once: records are never changed. */
const figuresOf = new WeakMap<object, ClusterAlongside | null>();

/** The clusters' figures of a record; null where no cluster was attached during the cell. */
export function clusterAlongside(
  record: Pick<CellMemoryRecord, 'cluster'>
): ClusterAlongside | null {
  let figures = figuresOf.get(record);
  if (figures === undefined) {
    const c = record.cluster;
    figures = c
      ? {
          deltaBytes:
            c.before_bytes === null || c.after_bytes === null
              ? null
              : c.after_bytes - c.before_bytes,
          sampledMaxBytes: c.sampled_max_bytes,
          workersBefore: c.workers_before,
          workersAfter: c.workers_after,
          samples: c.samples,
          sampleSpacingS: c.sample_spacing_s,
          events: c.events.length
        }
      : null;
    figuresOf.set(record, figures);
  }
  return figures;
}
