/**
 * The memory of the kernel's processes around one cell, from its record's
 * `processes` (docs/protocol.md): how their host memory and GPU memory moved,
 * and their sampled maximum. Shown beside the kernel's own figures only where
 * the processes held memory worth showing: a cell that forked a pool of
 * 400 MB workers moves the kernel's own RSS by almost nothing.
 *
 * The figures are worked out from the record when a badge, a row or an
 * export needs them, not when the record comes in, so that this module loads
 * with the cells' views rather than with the page.
 */
import type { CellMemoryRecord } from '../../protocol/cell';

/**
 * The size from which the processes' memory is worth showing: a record's
 * processes are shown where any of their figures reaches it.
 */
export const PROCESSES_ALONGSIDE_BYTES = 16 * 2 ** 20;

/** The memory of the kernel's processes around one cell. */
export interface ProcessesAlongside {
  /** Their host memory after the cell minus before it; null when unknown. */
  hostDeltaBytes: number | null;
  /**
   * The largest of the readings of their host memory taken during the cell;
   * a peak between two readings is missed.
   */
  hostSampledMaxBytes: number | null;
  /**
   * Their GPU memory after the cell minus before it, summed over the devices
   * that have both figures; null when none has.
   */
  gpuDeltaBytes: number | null;
  /** Their GPU memory's sampled maximum, the largest of any device. */
  gpuSampledMaxBytes: number | null;
  /** How many processes the kernel had when the cell started. */
  processesBefore: number;
  /** How many processes the kernel had when the cell ended. */
  processesAfter: number;
  /** The seconds between two readings of the maximum. */
  sampleSpacingS: number;
  /** How many readings the maximum rests on. */
  samples: number;
}

/** Whether `v` is a known, finite figure. */
function known(v: number | null | undefined): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** `after` minus `before`; null when either is unknown. */
function difference(
  before: number | null,
  after: number | null
): number | null {
  return known(before) && known(after) ? after - before : null;
}

/**
 * The processes' GPU change, summed over devices, and their sampled
 * maximum, which is the largest device's because maxima sampled apart do
 * not add up.
 */
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

/** Each record's figures, worked out once, which is safe because records are never changed. */
const figuresOf = new WeakMap<object, ProcessesAlongside | null>();

/** The processes' figures of a record; null where it has none, or none worth showing. */
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

/** Works out a record's figures; null where its processes hold nothing worth showing. */
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
 * The one figure of the processes that a narrow place, such as the badge or
 * the table's column, shows: how much more they hold after the cell, where
 * that is worth showing (`stayed`), or else their sampled maximum.
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
