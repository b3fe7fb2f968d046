/**
 * The memory of the kernel's processes around one cell, from its record's
 * `processes` (docs/protocol.md): how their host memory and GPU memory moved,
 * and their sampled maximum. Shown beside the kernel's own figures only where
 * the processes held memory worth showing: a cell that forked a pool of
 * 400 MB workers moves the kernel's own RSS by almost nothing.
 *
 * Worked out from the record when a badge, a row or an export needs it, not
 * when the record comes in: this module then loads with the cells' views,
 * not with the page.
 */
import type { CellMemoryRecord } from '../../protocol/cell';

/** The processes' memory a cell's badge shows where any of it reaches this. */
export const PROCESSES_ALONGSIDE_BYTES = 16 * 2 ** 20;

/** The memory of the kernel's processes around one cell. */
export interface ProcessesAlongside {
  /** Their host memory after - before; null when unknown. */
  hostDeltaBytes: number | null;
  /** The largest of their host memory's readings during the cell (sampled). */
  hostSampledMaxBytes: number | null;
  /** Their GPU memory after - before, summed over devices; null when no device lists any. */
  gpuDeltaBytes: number | null;
  /** Their GPU memory's sampled maximum, the largest of any device. */
  gpuSampledMaxBytes: number | null;
  processesBefore: number;
  processesAfter: number;
  /** Seconds between two readings of the maximum. */
  sampleSpacingS: number;
  samples: number;
}

function known(v: number | null | undefined): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

function difference(
  before: number | null,
  after: number | null
): number | null {
  return known(before) && known(after) ? after - before : null;
}

/** The GPU figures summed over devices (the maximum: the largest device's). */
function gpuFigures(gpus: NonNullable<CellMemoryRecord['processes']>['gpus']): {
  delta: number | null;
  max: number | null;
} {
  let delta: number | null = null;
  let max: number | null = null;
  for (const g of gpus) {
    const d = difference(g.before_bytes, g.after_bytes);
    if (d !== null) {
      delta = (delta ?? 0) + d;
    }
    if (known(g.sampled_max_bytes)) {
      max = Math.max(max ?? 0, g.sampled_max_bytes);
    }
  }
  return { delta, max };
}

/** Each record's figures, worked out once (records are never changed). */
const figuresOf = new WeakMap<object, ProcessesAlongside | null>();

/** The processes' figures of a record; null where it has none (or none worth showing). */
export function processesAlongside(
  record: Pick<CellMemoryRecord, 'processes'>
): ProcessesAlongside | null {
  let figures = figuresOf.get(record);
  if (figures === undefined) {
    figures = workOut(record);
    figuresOf.set(record, figures);
  }
  return figures;
}

function workOut(
  record: Pick<CellMemoryRecord, 'processes'>
): ProcessesAlongside | null {
  const p = record.processes;
  if (!p) {
    return null;
  }
  const gpu = gpuFigures(p.gpus);
  const figures: ProcessesAlongside = {
    hostDeltaBytes: difference(p.host_before_bytes, p.host_after_bytes),
    hostSampledMaxBytes: p.host_sampled_max_bytes,
    gpuDeltaBytes: gpu.delta,
    gpuSampledMaxBytes: gpu.max,
    processesBefore: p.processes_before,
    processesAfter: p.processes_after,
    sampleSpacingS: p.sample_spacing_s,
    samples: p.samples
  };
  const worth = [
    figures.hostDeltaBytes === null ? null : Math.abs(figures.hostDeltaBytes),
    p.host_after_bytes,
    p.host_sampled_max_bytes,
    figures.gpuDeltaBytes === null ? null : Math.abs(figures.gpuDeltaBytes),
    gpu.max
  ].some(v => known(v) && v >= PROCESSES_ALONGSIDE_BYTES);
  return worth ? figures : null;
}

/**
 * The one figure a narrow place shows of them: what they hold more after the
 * cell where that is worth showing (`stayed`), else their sampled maximum.
 */
export function processesShown(p: ProcessesAlongside): {
  bytes: number | null;
  stayed: boolean;
} {
  const stayed =
    p.hostDeltaBytes !== null &&
    Math.abs(p.hostDeltaBytes) >= PROCESSES_ALONGSIDE_BYTES;
  return stayed
    ? { bytes: p.hostDeltaBytes, stayed }
    : { bytes: p.hostSampledMaxBytes, stayed };
}
