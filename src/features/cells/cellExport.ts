/**
 * Writes the cell history as CSV or JSON. The functions are pure; the
 * caller downloads what they return.
 *
 * Each CSV field is written by csvField (src/text/csvField.ts), which
 * defuses the text that comes from the kernel (error type and message, cell
 * id) so that a spreadsheet does not run it as a formula.
 */
import { CellHistoryEntry } from '../../model/CellHistory';
import { csvField } from '../../text/csvField';
import { cellHintKinds, cellHints } from './cellHints';
import { CellLoadSummary, cellLoadOf } from './cellLoad';
import { processesAlongside } from './cellProcessFigures';

/** The CSV columns, in order. */
export const CSV_COLUMNS = [
  // The kernel process that ran the cell, counted 1, 2, … in this history,
  // because record ids start again with each process.
  'kernel_start',
  'record_id',
  'execution_count',
  'cell_id',
  'started_iso',
  'duration_s',
  'status',
  'out_of_memory',
  'error_type',
  'error_message',
  'source',
  'delta_bytes',
  'peak_bytes',
  'peak_exact',
  'gpu_allocated_before_bytes',
  'gpu_allocated_after_bytes',
  'gpu_allocated_peak_bytes',
  'gpu_reserved_before_bytes',
  'gpu_reserved_after_bytes',
  'gpu_reserved_peak_bytes',
  'rss_before_bytes',
  'rss_after_bytes',
  'rss_peak_bytes',
  // The GPU load (see cellLoad.ts) gives the busiest GPU's utilisation and
  // the energy of every GPU.
  'gpu_util_mean_percent',
  'gpu_util_max_percent',
  'gpu_energy_joules',
  // How much of the cell the driver's buffer covered: full, partial or none.
  'gpu_load_coverage',
  'gpu_throttle_reasons',
  // The hints' kinds (see cellHints.ts), judged by today's thresholds.
  'hints',
  // The kernel's processes around the cell; the fields are empty where the
  // record has none.
  'processes_before',
  'processes_after',
  'processes_host_before_bytes',
  'processes_host_after_bytes',
  'processes_host_sampled_max_bytes',
  'processes_gpu_before_bytes',
  'processes_gpu_after_bytes',
  'processes_gpu_sampled_max_bytes',
  'processes_sample_spacing_s',
  // The cluster's workers around the cell (sampled); the fields are empty
  // where no cluster was attached during the cell.
  'cluster_workers_before',
  'cluster_workers_after',
  'cluster_before_bytes',
  'cluster_after_bytes',
  'cluster_sampled_max_bytes',
  'cluster_sample_spacing_s'
] as const;

/**
 * The sum of a figure over `items`, such as devices; null if any lacks it or
 * there are none, because a partial sum would pass for the whole.
 */
function sumOf<T>(
  items: readonly T[],
  pick: (item: T) => number | null
): number | null {
  if (!items.length) {
    return null;
  }
  let sum = 0;
  for (const item of items) {
    const v = pick(item);
    if (v === null) {
      return null;
    }
    sum += v;
  }
  return sum;
}

/** The ISO 8601 text of a Unix time in seconds; empty when the time is not valid. */
function isoTime(unixSeconds: number): string {
  const date = new Date(unixSeconds * 1000);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}

/** The CSV fields of the record's GPU load; they are empty where it has none. */
function loadFields(entry: CellHistoryEntry): string[] {
  const load = cellLoadOf(entry.record);
  return [
    csvField(load?.meanPercent ?? null),
    csvField(load?.maxPercent ?? null),
    csvField(load?.energyJoules ?? null),
    csvField(load?.coverage ?? null, true),
    csvField(load ? load.throttleReasons.join(' ') : null, true),
    csvField(cellHintKinds(cellHints(entry.record, load)), true)
  ];
}

/**
 * The derived load figures of the JSON export; the keys are absent where the
 * record has no load.
 */
function derivedLoad(
  entry: CellHistoryEntry,
  load: CellLoadSummary | null
): object {
  if (!load) {
    return {};
  }
  return {
    gpu_util_mean_percent: load.meanPercent,
    gpu_util_max_percent: load.maxPercent,
    gpu_energy_joules: load.energyJoules,
    gpu_load_coverage: load.coverage,
    hints: cellHints(entry.record, load).map(h => h.kind)
  };
}

/**
 * The processes' figures that the badge shows, for the JSON's `derived`;
 * each is null where the processes held nothing worth showing.
 */
function processesDerived(record: CellHistoryEntry['record']): {
  processes_host_delta_bytes: number | null;
  processes_host_sampled_max_bytes: number | null;
  processes_gpu_delta_bytes: number | null;
} {
  const p = processesAlongside(record);
  return {
    processes_host_delta_bytes: p?.hostDeltaBytes ?? null,
    processes_host_sampled_max_bytes: p?.hostSampledMaxBytes ?? null,
    processes_gpu_delta_bytes: p?.gpuDeltaBytes ?? null
  };
}

/** The largest known value; null when none is known. */
function largest(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length ? Math.max(...known) : null;
}

/** The processes' fields of one record; they are empty where the record has none. */
function processFields(entry: CellHistoryEntry): string[] {
  const p = entry.record.processes;
  if (!p) {
    return Array.from({ length: 9 }, () => csvField(null));
  }
  return [
    csvField(p.processes_before),
    csvField(p.processes_after),
    csvField(p.host_before_bytes),
    csvField(p.host_after_bytes),
    csvField(p.host_sampled_max_bytes),
    csvField(sumOf(p.gpus, g => g.before_bytes)),
    csvField(sumOf(p.gpus, g => g.after_bytes)),
    // The sampled maximum is the largest device's, because maxima sampled at
    // different times do not add up over devices.
    csvField(largest(p.gpus.map(g => g.sampled_max_bytes))),
    csvField(p.sample_spacing_s)
  ];
}

/** The cluster's fields of one record; they are empty where it has none. */
function clusterFields(entry: CellHistoryEntry): string[] {
  const c = entry.record.cluster;
  if (!c) {
    return Array.from({ length: 6 }, () => csvField(null));
  }
  return [
    csvField(c.workers_before),
    csvField(c.workers_after),
    csvField(c.before_bytes),
    csvField(c.after_bytes),
    csvField(c.sampled_max_bytes),
    csvField(c.sample_spacing_s)
  ];
}

/** Writes the history as CSV text: a header line, then one line per record. */
export function cellHistoryToCsv(entries: readonly CellHistoryEntry[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const entry of entries) {
    const r = entry.record;
    const s = entry.summary;
    const fields = [
      csvField(entry.session),
      csvField(r.record_id),
      csvField(r.execution_count),
      csvField(r.cell_id, true),
      csvField(isoTime(r.started)),
      csvField(r.duration_s),
      csvField(r.status, true),
      csvField(s.outOfMemory),
      csvField(r.error?.type ?? null, true),
      csvField(r.error?.message_head ?? null, true),
      csvField(s.source),
      csvField(s.deltaBytes),
      csvField(s.peakBytes),
      csvField(s.peakExact),
      csvField(sumOf(entry.record.gpus, g => g.allocated_before_bytes)),
      csvField(sumOf(entry.record.gpus, g => g.allocated_after_bytes)),
      csvField(sumOf(entry.record.gpus, g => g.allocated_peak_bytes)),
      csvField(sumOf(entry.record.gpus, g => g.reserved_before_bytes)),
      csvField(sumOf(entry.record.gpus, g => g.reserved_after_bytes)),
      csvField(sumOf(entry.record.gpus, g => g.reserved_peak_bytes)),
      csvField(r.host.rss_before_bytes),
      csvField(r.host.rss_after_bytes),
      csvField(r.host.rss_peak_bytes),
      ...loadFields(entry),
      ...processFields(entry),
      ...clusterFields(entry)
    ];
    lines.push(fields.join(','));
  }
  return lines.join('\r\n') + '\r\n';
}

/**
 * Writes the history as JSON: the records exactly as the kernel sent them,
 * per device, each with the derived figures that the panel shows.
 */
export function cellHistoryToJson(
  entries: readonly CellHistoryEntry[],
  meta: { notebook: string | null; exportedAt: Date }
): string {
  return JSON.stringify(
    {
      format: 'jupyterlab-vram-cell-history',
      version: 1,
      notebook: meta.notebook,
      exported_at: meta.exportedAt.toISOString(),
      records: entries.map(e => ({
        ...e.record,
        derived: {
          kernel_start: e.session,
          source: e.summary.source,
          delta_bytes: e.summary.deltaBytes,
          peak_bytes: e.summary.peakBytes,
          peak_exact: e.summary.peakExact,
          outcome: e.summary.outcome,
          ...derivedLoad(e, cellLoadOf(e.record)),
          ...processesDerived(e.record)
        }
      }))
    },
    null,
    2
  );
}

/**
 * The export's file name, made from the notebook's path: "dir/analysis.ipynb"
 * gives "analysis-memory-history.csv".
 */
export function exportFileName(
  notebookPath: string | null,
  format: 'csv' | 'json'
): string {
  const base = (notebookPath ?? '').split('/').pop() ?? '';
  const stem = base.replace(/\.ipynb$/i, '') || 'notebook';
  return `${stem}-memory-history.${format}`;
}
