/**
 * The text shown for one executed cell: the badge line ("+1.2 GiB · peak
 * 3.4 GiB · 2.1 s"), the history table's cells, and the tooltip with the
 * per-device breakdown. The functions are pure. What they return may contain
 * text from the kernel (error type and message), so the views put it into
 * the DOM through textContent or title only.
 */
import { ByteUnits, formatBytes, UNKNOWN_TEXT } from '../../text/format';
import { ProcessesAlongside, processesShown } from './cellProcessFigures';
import { ClusterAlongside, clusterAlongside } from './cellClusterFigures';
import {
  CellOutcome,
  CellSummary,
  RAM_ALONGSIDE_BYTES,
  RamAlongside
} from '../../model/cellFigures';
import { CellMemoryRecord } from '../../protocol/cell';
import { trans } from '../../text/translation';

/** The separator between the badge's parts. */
const SEP = ' \u00b7 ';

/**
 * Writes a change in bytes with its sign, such as "+1.2 GiB", "-512 MiB" or
 * "±0 B", or "—" when it is unknown.
 */
export function formatDelta(
  bytes: number | null | undefined,
  units: ByteUnits = 'binary'
): string {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) {
    return UNKNOWN_TEXT;
  }
  if (bytes === 0) {
    return '\u00b10 B';
  }
  const text = formatBytes(Math.abs(bytes), units);
  return (bytes > 0 ? '+' : '-') + text;
}

/** Writes a peak: "3.4 GiB" for an exact one, "~3.4 GiB" for a sampled one. */
export function formatPeak(
  bytes: number | null,
  exact: boolean,
  units: ByteUnits = 'binary'
): string {
  if (bytes === null) {
    return UNKNOWN_TEXT;
  }
  return (exact ? '' : '~') + formatBytes(bytes, units);
}

/**
 * Writes a duration as the badge and the tooltips show it: "120 ms",
 * "2.1 s", "12 s", "3 min 12 s" or "1 h 5 min".
 */
export function formatDuration(seconds: number | null | undefined): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
    return UNKNOWN_TEXT;
  }
  if (seconds < 1) {
    const ms = Math.round(seconds * 1000);
    // A time just under a second rounds to 1000 ms, which is written as a
    // whole second is written.
    return ms < 1000 ? `${ms} ms` : '1.0 s';
  }
  if (seconds < 10) {
    return `${(Math.floor(seconds * 10) / 10).toFixed(1)} s`;
  }
  if (seconds < 60) {
    return `${Math.floor(seconds)} s`;
  }
  if (seconds < 3600) {
    const m = Math.floor(seconds / 60);
    const s = Math.floor(seconds % 60);
    return s ? `${m} min ${s} s` : `${m} min`;
  }
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return m ? `${h} h ${m} min` : `${h} h`;
}

/**
 * Each outcome's words: the full one for the badge and the tooltip, and the
 * short one for the Cells table's narrow column. It is a function so that
 * the words are translated when shown.
 */
function outcomeWords(outcome: CellOutcome): { full: string; short: string } {
  switch (outcome) {
    case 'ok':
      return { full: trans.__('ok'), short: trans.__('ok') };
    case 'error':
      return { full: trans.__('error'), short: trans.__('error') };
    case 'oom':
      return { full: trans.__('out of memory'), short: trans.__('OOM') };
    case 'interrupted':
      return { full: trans.__('interrupted'), short: trans.__('intr.') };
    case 'died':
      return { full: trans.__('kernel died'), short: trans.__('died') };
  }
}

/**
 * The status's word in the badge and the tooltip: "ok", "error",
 * "interrupted", "out of memory" or "kernel died".
 */
export function formatOutcome(summary: CellSummary): string {
  // A status that the kernel named otherwise, such as a newer helper's, is
  // shown as it came.
  if (summary.outcome === 'error' && summary.status !== 'error') {
    return summary.status;
  }
  return outcomeWords(summary.outcome).full;
}

/**
 * The Cells table's duration: as formatDuration writes it up to a minute,
 * and from then on without spaces and in at most six characters ("3m12s",
 * "12m", "1h05m", "14h"), so that a training cell's time fits the narrow
 * column, where "3 min 12 s" would be cut. The row's tooltip has the long
 * form.
 */
export function formatDurationShort(
  seconds: number | null | undefined
): string {
  if (
    typeof seconds !== 'number' ||
    !Number.isFinite(seconds) ||
    seconds < 60
  ) {
    return formatDuration(seconds);
  }
  const two = (n: number) => String(n).padStart(2, '0');
  if (seconds < 600) {
    return `${Math.floor(seconds / 60)}m${two(Math.floor(seconds % 60))}s`;
  }
  if (seconds < 3600) {
    // From 10 minutes on, the seconds are left out, because "12m34s" is
    // wider than "999 ms".
    return `${Math.floor(seconds / 60)}m`;
  }
  if (seconds < 36000) {
    return `${Math.floor(seconds / 3600)}h${two(Math.floor((seconds % 3600) / 60))}m`;
  }
  return `${Math.floor(seconds / 3600)}h`;
}

/**
 * The Cells table's status in at most five characters, so that it is read
 * whole in the narrow column, where "interrupted" or an error's class name
 * would be cut. The row's tooltip has the whole status and the error.
 */
export function formatOutcomeShort(summary: CellSummary): string {
  return outcomeWords(summary.outcome).short;
}

/**
 * Writes the badge line, such as "+1.2 GiB · peak 3.4 GiB · 2.1 s", with the
 * outcome at its end when it is not ok and `withOutcome` is set. The host
 * RAM that a GPU cell moved, and the kernel's processes where they held
 * memory worth showing, follow the memory figures; `extra` (the GPU load,
 * such as "GPU 93%") goes between them and the duration.
 */
export function formatCellBadge(
  summary: CellSummary,
  units: ByteUnits = 'binary',
  withOutcome = true,
  processes: ProcessesAlongside | null = null,
  extra: readonly string[] = [],
  cluster: ClusterAlongside | null = null
): string {
  const parts = [
    formatDelta(summary.deltaBytes, units),
    trans.__(
      'peak %1',
      formatPeak(summary.peakBytes, summary.peakExact, units)
    ),
    ...(summary.ramAlongside
      ? [formatRamAlongside(summary.ramAlongside, units)]
      : []),
    ...(processes ? [formatProcessesAlongside(processes, units)] : []),
    ...(cluster ? [formatClusterAlongside(cluster, units)] : []),
    ...extra,
    formatDuration(summary.durationS)
  ];
  if (summary.outcome !== 'ok' && withOutcome) {
    parts.push(formatOutcome(summary));
  }
  return parts.join(SEP);
}

/**
 * Writes the host RAM that a GPU cell moved, for its badge: "RAM +20 GiB"
 * for what stayed, or else "RAM peak +20 GiB" for what came and went.
 */
export function formatRamAlongside(
  ram: RamAlongside,
  units: ByteUnits = 'binary'
): string {
  if (
    ram.deltaBytes !== null &&
    Math.abs(ram.deltaBytes) >= RAM_ALONGSIDE_BYTES
  ) {
    return trans.__('RAM %1', formatDelta(ram.deltaBytes, units));
  }
  return trans.__('RAM peak %1', formatDelta(ram.peakRiseBytes, units));
}

/**
 * The badge's words for the kernel's processes: "processes +400 MiB" for
 * how much more they hold after the cell, or else "processes max ~400 MiB"
 * for what came and went, as sampled. ", GPU +1.0 GiB" is added where they
 * moved GPU memory.
 */
export function formatProcessesAlongside(
  p: ProcessesAlongside,
  units: ByteUnits = 'binary'
): string {
  const shown = processesShown(p);
  const host = shown.stayed
    ? trans.__('processes %1', formatDelta(shown.bytes, units))
    : trans.__('processes max %1', formatPeak(shown.bytes, false, units));
  return p.gpuDeltaBytes
    ? trans.__('%1, GPU %2', host, formatDelta(p.gpuDeltaBytes, units))
    : host;
}

/**
 * The Cells table's processes column: "+400 MiB" for how much more they
 * hold, or "~500 MiB" for their sampled maximum.
 */
export function formatProcessesShort(
  p: ProcessesAlongside,
  units: ByteUnits = 'binary'
): string {
  const shown = processesShown(p);
  return shown.stayed
    ? formatDelta(shown.bytes, units)
    : formatPeak(shown.bytes, false, units);
}

/** "5 readings, 1.0 s apart": what a sampled maximum rests on. */
function readingsText(r: {
  samples: number;
  sample_spacing_s: number;
}): string {
  return trans._n(
    '%1 reading, %2 s apart',
    '%1 readings, %2 s apart',
    r.samples,
    r.sample_spacing_s.toFixed(1)
  );
}

/** The tooltip's lines for the kernel's processes around a cell; none when the record has none. */
export function describeCellProcesses(
  record: CellMemoryRecord,
  units: ByteUnits = 'binary'
): string[] {
  const p = record.processes;
  if (!p) {
    return [];
  }
  const readings = readingsText(p);
  const lines = [
    trans.__(
      "The kernel's processes: %1 \u2192 %2; host %3, sampled maximum %4 (%5)",
      p.processes_before,
      p.processes_after,
      arrow(p.host_before_bytes, p.host_after_bytes, units),
      formatPeak(p.host_sampled_max_bytes, false, units),
      readings
    )
  ];
  for (const g of p.gpus) {
    lines.push(
      trans.__(
        'Processes on GPU %1: %2 (sampled maximum %3)',
        g.index,
        arrow(g.before_bytes, g.after_bytes, units),
        formatPeak(g.sampled_max_bytes, false, units)
      )
    );
  }
  return lines;
}

/**
 * The badge's words for the cluster's workers: "cluster +1 GiB, sampled max
 * ~9 GiB", what they hold more after the cell and the largest reading, which
 * is sampled and never an exact peak.
 */
export function formatClusterAlongside(
  c: ClusterAlongside,
  units: ByteUnits = 'binary'
): string {
  return trans.__(
    'cluster %1, sampled max %2',
    formatDelta(c.deltaBytes, units),
    formatPeak(c.sampledMaxBytes, false, units)
  );
}

/** The tooltip's lines for the cluster's workers around a cell; none when the record has none. */
export function describeCellCluster(
  record: CellMemoryRecord,
  units: ByteUnits = 'binary'
): string[] {
  const c = record.cluster;
  const figures = clusterAlongside(record);
  if (!c || !figures) {
    return [];
  }
  const readings = readingsText(c);
  const lines = [
    trans.__(
      "The cluster's workers (%1): %2 → %3; memory %4 (%5), sampled maximum %6 (%7; a rise between two readings is missed)",
      c.clusters.join(', '),
      c.workers_before,
      c.workers_after,
      arrow(c.before_bytes, c.after_bytes, units),
      formatDelta(figures.deltaBytes, units),
      formatPeak(c.sampled_max_bytes, false, units),
      readings
    )
  ];
  if (c.events.length) {
    lines.push(
      trans._n(
        '%1 cluster event while it ran (see the Cluster section)',
        '%1 cluster events while it ran (see the Cluster section)',
        c.events.length
      )
    );
  }
  return lines;
}

/** Writes an execution count as "[7]", or "[ ]" when the kernel gave none. */
export function formatExecutionCount(count: number | null): string {
  return count === null ? '[ ]' : `[${count}]`;
}

/** Writes a change as "before → after", in bytes. */
function arrow(
  before: number | null,
  after: number | null,
  units: ByteUnits
): string {
  return `${formatBytes(before, units)} \u2192 ${formatBytes(after, units)}`;
}

/** The most characters of an error message that a tooltip shows; a longer one is cut. */
const TOOLTIP_MESSAGE_CHARS = 300;

/**
 * Words a cell run's tooltip as lines of plain text: what the figures are
 * (GPU or RAM), the per-device breakdown, the host RSS, the kernel's
 * processes, the duration and the status.
 */
export function describeCellRecord(
  record: CellMemoryRecord,
  summary: CellSummary,
  units: ByteUnits = 'binary',
  options: { saved?: boolean } = {}
): string {
  const lines: string[] = [];
  const what =
    summary.source === 'gpu'
      ? trans.__('GPU memory (PyTorch allocated, summed over devices)')
      : trans.__('RAM (kernel process RSS; no GPU figures for this cell)');
  const count = formatExecutionCount(record.execution_count);
  lines.push(
    options.saved
      ? trans.__('%1 %2 \u2014 saved with the notebook', count, what)
      : `${count} ${what}`
  );
  const delta = formatDelta(summary.deltaBytes, units);
  const peak = formatPeak(summary.peakBytes, summary.peakExact, units);
  lines.push(
    summary.peakExact
      ? trans.__('Change %1, peak %2', delta, peak)
      : summary.outcome === 'died'
        ? trans.__(
            'Change %1, peak %2 (approximate: sampled while the cell ran; the kernel died before the cell could be measured)',
            delta,
            peak
          )
        : trans.__(
            'Change %1, peak %2 (approximate: sampled while the cell ran, peak counters not reset)',
            delta,
            peak
          )
  );
  for (const g of record.gpus) {
    lines.push(
      trans.__(
        'GPU %1: allocated %2 (peak %3); reserved %4',
        g.index,
        arrow(g.allocated_before_bytes, g.allocated_after_bytes, units),
        formatPeak(g.allocated_peak_bytes, g.peak_exact, units),
        arrow(g.reserved_before_bytes, g.reserved_after_bytes, units)
      )
    );
  }
  const h = record.host;
  lines.push(
    trans.__(
      'Host RSS: %1 (peak %2)',
      arrow(h.rss_before_bytes, h.rss_after_bytes, units),
      formatPeak(h.rss_peak_bytes, h.peak_exact, units)
    )
  );
  lines.push(...describeCellProcesses(record, units));
  lines.push(...describeCellCluster(record, units));
  lines.push(trans.__('Duration %1', formatDuration(record.duration_s)));
  let status = trans.__('Status: %1', formatOutcome(summary));
  if (record.error) {
    const message = record.error.message_head;
    status +=
      ' \u2014 ' +
      (record.error.out_of_memory
        ? trans.__('%1 (out of memory)', record.error.type)
        : record.error.type) +
      (message
        ? `: ${message.length > TOOLTIP_MESSAGE_CHARS ? message.slice(0, TOOLTIP_MESSAGE_CHARS - 1) + '\u2026' : message}`
        : '');
  }
  if (summary.outcome === 'died') {
    status +=
      ' ' +
      trans.__(
        'while running this cell. The figures are those sampled from its start to the last sample before the death; the helper died before it could measure the cell.'
      );
  }
  lines.push(status);
  return lines.join('\n');
}
