/**
 * The figures the UI shows for one executed cell, derived from its
 * CellMemoryRecord: one delta and one peak, from the GPU when the record has
 * any GPU figure, else from host RAM (the kernel's RSS); and for a GPU cell
 * that moved host RAM by a GiB or more (a DataFrame loaded, a dataset read
 * into memory: what gets a kernel OOM-killed), that too. Kept out of the views
 * so that the badge, the history table, the export and the saved metadata
 * agree, and so that the arithmetic is unit-tested.
 *
 * An unknown figure stays null, so a delta is null as soon as one of its
 * inputs is.
 */
import { CellMemoryRecord } from '../protocol/cell';

/** Where a cell's figures come from. */
export type CellMemorySource = 'gpu' | 'ram';

/** Host RAM a GPU cell moved by at least this (change, or peak above its start) is shown beside its GPU figures. */
export const RAM_ALONGSIDE_BYTES = 2 ** 30;

/** The host RAM a GPU cell moved, where it is worth showing beside its GPU figures. */
export interface RamAlongside {
  /** RSS after - before; null when unknown. */
  deltaBytes: number | null;
  /** RSS peak - before; null when unknown. */
  peakRiseBytes: number | null;
}

/**
 * 'ok' | 'error' | 'interrupted' | 'oom' (an error that was out-of-memory) |
 * 'died' (the kernel died running it: a record the frontend wrote, see
 * diedCellRecord.ts).
 */
export type CellOutcome = 'ok' | 'error' | 'interrupted' | 'oom' | 'died';

/** The figures the UI shows for one executed cell. */
export interface CellSummary {
  source: CellMemorySource;
  /**
   * GPU: allocated after - before, summed over devices; RAM: RSS after -
   * before. Null when unknown.
   */
  deltaBytes: number | null;
  /** GPU: the largest allocated peak of any device; RAM: the RSS peak. */
  peakBytes: number | null;
  /** False: the peak was sampled (approximate, shown with "~"). */
  peakExact: boolean;
  durationS: number;
  /** The record's status as sent ('ok', 'error', 'interrupted', ...). */
  status: string;
  outcome: CellOutcome;
  outOfMemory: boolean;
  /** Exception class name (kernel text); null when none. */
  errorType: string | null;
  /**
   * GPU cells only: the host RAM it moved by RAM_ALONGSIDE_BYTES or more;
   * null otherwise (absent: saved figures, which keep one source).
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

/** Device totals a cell's peak is compared with (for the warning level). */
export interface CellTotals {
  /** Total bytes per CUDA ordinal (from hello or samples). */
  gpuTotals: ReadonlyMap<number, number>;
  /** The machine's RAM; null when unknown. */
  hostTotal: number | null;
}

/**
 * 'warning' when the cell's peak went above `thresholdPercent` of its device
 * (any GPU's allocated peak against that GPU's total; without GPU figures,
 * the RSS peak against the machine's RAM), or it ran out of memory.
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
    // The host's RAM too: a GPU cell can fill it (data loaded for the GPU).
    return record.gpus.some(g =>
      above(g.allocated_peak_bytes, totals.gpuTotals.get(g.index))
    ) || above(record.host.rss_peak_bytes, totals.hostTotal)
      ? 'warning'
      : 'normal';
  }
  return above(summary.peakBytes, totals.hostTotal) ? 'warning' : 'normal';
}

/**
 * Device totals known to the model: per GPU from the latest sample (else
 * from hello), and the machine's RAM from the latest sample.
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
