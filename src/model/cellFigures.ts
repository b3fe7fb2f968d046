/**
 * The figures the UI shows for one executed cell, derived from its
 * CellMemoryRecord. There is one delta and one peak, taken from the GPU when
 * the record has any GPU figure and otherwise from host RAM (the kernel's
 * RSS). A GPU cell that moved host RAM by a GiB or more also shows that
 * move, because loading a DataFrame or reading a dataset into memory is what
 * gets a kernel killed for lack of memory. These figures are kept out of the
 * views so that the badge, the history table, the export and the saved
 * metadata agree, and so that the arithmetic is unit-tested.
 *
 * An unknown figure stays null, so a delta is null as soon as one of its
 * inputs is.
 */
import { CellMemoryRecord } from '../protocol/cell';

/** Where a cell's figures come from. */
export type CellMemorySource = 'gpu' | 'ram';

/**
 * When a GPU cell moved host RAM by at least this much, either as a change
 * or as a peak above its start, the move is shown beside its GPU figures.
 */
export const RAM_ALONGSIDE_BYTES = 2 ** 30;

/** The host RAM a GPU cell moved, where it is worth showing beside its GPU figures. */
export interface RamAlongside {
  /** The RSS after the cell less the RSS before it, or null when unknown. */
  deltaBytes: number | null;
  /** The RSS peak less the RSS before the cell, or null when unknown. */
  peakRiseBytes: number | null;
}

/**
 * How a cell's run ended. 'oom' is an error that was out-of-memory. 'died'
 * means the kernel died running the cell; such a record is written by the
 * frontend (see diedCellRecord.ts).
 */
export type CellOutcome = 'ok' | 'error' | 'interrupted' | 'oom' | 'died';

/** The figures the UI shows for one executed cell. */
export interface CellSummary {
  source: CellMemorySource;
  /**
   * For a GPU cell, the allocated bytes after less those before, summed over
   * devices; for a RAM cell, the RSS after less the RSS before. It is null
   * when unknown.
   */
  deltaBytes: number | null;
  /**
   * For a GPU cell, the largest allocated peak of any device; for a RAM cell,
   * the RSS peak.
   */
  peakBytes: number | null;
  /**
   * False when the peak was sampled, which makes it approximate, so it is
   * shown with "~".
   */
  peakExact: boolean;
  durationS: number;
  /** The record's status as sent ('ok', 'error', 'interrupted', ...). */
  status: string;
  outcome: CellOutcome;
  outOfMemory: boolean;
  /** The exception's class name as the kernel wrote it, or null when none. */
  errorType: string | null;
  /**
   * For GPU cells only, the host RAM that the cell moved when it moved it by
   * RAM_ALONGSIDE_BYTES or more, and null otherwise. It is absent from saved
   * figures, which keep only one source.
   */
  ramAlongside?: RamAlongside | null;
}

function known(v: number | null | undefined): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** True when the record carries at least one GPU figure. */
export function hasGpuFigures(record: CellMemoryRecord): boolean {
  return record.gpus.some(
    g =>
      known(g.allocated_before_bytes) ||
      known(g.allocated_after_bytes) ||
      known(g.allocated_peak_bytes)
  );
}

/** Works out the figures the UI shows for one cell record. */
export function summarizeCellRecord(record: CellMemoryRecord): CellSummary {
  const gpu = hasGpuFigures(record);
  let deltaBytes: number | null;
  let peakBytes: number | null;
  let peakExact: boolean;
  let ramAlongside: RamAlongside | null = null;
  if (gpu) {
    let delta = 0;
    let deltaKnown = true;
    let peak: number | null = null;
    peakExact = true;
    for (const g of record.gpus) {
      if (known(g.allocated_before_bytes) && known(g.allocated_after_bytes)) {
        delta += g.allocated_after_bytes - g.allocated_before_bytes;
      } else {
        deltaKnown = false;
      }
      if (known(g.allocated_peak_bytes)) {
        peak =
          peak === null
            ? g.allocated_peak_bytes
            : Math.max(peak, g.allocated_peak_bytes);
      }
      peakExact = peakExact && g.peak_exact;
    }
    deltaBytes = deltaKnown ? delta : null;
    peakBytes = peak;
    ramAlongside = ramWorthShowing(record);
  } else {
    const h = record.host;
    deltaBytes =
      known(h.rss_before_bytes) && known(h.rss_after_bytes)
        ? h.rss_after_bytes - h.rss_before_bytes
        : null;
    peakBytes = known(h.rss_peak_bytes) ? h.rss_peak_bytes : null;
    peakExact = h.peak_exact;
  }
  const outOfMemory = record.error?.out_of_memory === true;
  let outcome: CellOutcome;
  if (record.status === 'ok') {
    outcome = 'ok';
  } else if (record.status === 'interrupted') {
    outcome = 'interrupted';
  } else if (record.status === 'died') {
    outcome = 'died';
  } else {
    outcome = outOfMemory ? 'oom' : 'error';
  }
  return {
    source: gpu ? 'gpu' : 'ram',
    deltaBytes,
    peakBytes,
    peakExact,
    durationS: record.duration_s,
    status: record.status,
    outcome,
    outOfMemory,
    errorType: record.error?.type ?? null,
    ramAlongside
  };
}

function ramWorthShowing(record: CellMemoryRecord): RamAlongside | null {
  const h = record.host;
  const deltaBytes =
    known(h.rss_before_bytes) && known(h.rss_after_bytes)
      ? h.rss_after_bytes - h.rss_before_bytes
      : null;
  const peakRiseBytes =
    known(h.rss_before_bytes) && known(h.rss_peak_bytes)
      ? h.rss_peak_bytes - h.rss_before_bytes
      : null;
  const moved =
    (deltaBytes !== null && Math.abs(deltaBytes) >= RAM_ALONGSIDE_BYTES) ||
    (peakRiseBytes !== null && peakRiseBytes >= RAM_ALONGSIDE_BYTES);
  return moved ? { deltaBytes, peakRiseBytes } : null;
}

/**
 * The device totals that a cell's peak is compared with to find its warning
 * level.
 */
export interface CellTotals {
  /** The total bytes per CUDA ordinal, from the hello or the samples. */
  gpuTotals: ReadonlyMap<number, number>;
  /** The machine's RAM, or null when unknown. */
  hostTotal: number | null;
}

/**
 * Returns 'warning' when the cell ran out of memory or its peak went above
 * `thresholdPercent` of its device. For GPU figures, any GPU's allocated
 * peak is compared with that GPU's total; without GPU figures, the RSS peak
 * is compared with the machine's RAM.
 */
export function cellWarningLevel(
  record: CellMemoryRecord,
  summary: CellSummary,
  totals: CellTotals,
  thresholdPercent: number
): 'normal' | 'warning' {
  if (summary.outOfMemory) {
    return 'warning';
  }
  const above = (part: number | null, total: number | null | undefined) =>
    known(part) &&
    known(total) &&
    total > 0 &&
    (part / total) * 100 >= thresholdPercent;
  if (summary.source === 'gpu') {
    // The host's RAM is checked too, because a GPU cell can fill it with the
    // data it loads for the GPU.
    return record.gpus.some(g =>
      above(g.allocated_peak_bytes, totals.gpuTotals.get(g.index))
    ) || above(record.host.rss_peak_bytes, totals.hostTotal)
      ? 'warning'
      : 'normal';
  }
  return above(summary.peakBytes, totals.hostTotal) ? 'warning' : 'normal';
}

/**
 * The device totals known to the model: each GPU's from the latest sample
 * (or else from the hello), and the machine's RAM from the latest sample.
 */
export function cellTotalsOf(model: {
  hello: { devices: { index: number; total_bytes: number | null }[] } | null;
  latest: {
    host: { total_bytes: number | null };
    gpus: { index: number; total_bytes: number | null }[];
  } | null;
}): CellTotals {
  const gpuTotals = new Map<number, number>();
  for (const d of model.hello?.devices ?? []) {
    if (known(d.total_bytes)) {
      gpuTotals.set(d.index, d.total_bytes);
    }
  }
  for (const g of model.latest?.gpus ?? []) {
    if (known(g.total_bytes)) {
      gpuTotals.set(g.index, g.total_bytes);
    }
  }
  return { gpuTotals, hostTotal: model.latest?.host.total_bytes ?? null };
}
