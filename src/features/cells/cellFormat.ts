/**
 * The text shown for one executed cell: the badge line ("+1.2 GiB · peak
 * 3.4 GiB · 2.1 s"), the history table's cells, and the tooltip with the
 * per-device breakdown. The functions are pure. What they return may contain
 * text from the kernel (error type and message), so the views put it into
 * the DOM through textContent or title only.
 */
import { ByteUnits, formatBytes, UNKNOWN_TEXT } from '../../text/format';
import { ProcessesAlongside, processesShown } from './cellProcessFigures';
import {
  CellOutcome,
  CellSummary,
  RAM_ALONGSIDE_BYTES,
  RamAlongside
} from '../../model/cellFigures';
import { CellMemoryRecord } from '../../protocol/cell';
import { trans } from '../../text/translation';

const SEP = ' \u00b7 ';

/** "+1.2 GiB", "-512 MiB", "±0 B"; "—" for unknown. */
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

/** "3.4 GiB" for an exact peak, "~3.4 GiB" for a sampled one. */
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

/** "120 ms", "2.1 s", "12 s", "3 min 12 s", "1 h 5 min". */
export function formatDuration(seconds: number | null | undefined): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
    return UNKNOWN_TEXT;
  }
  if (seconds < 1) {
    const ms = Math.round(seconds * 1000);
    // Just under a second rounds up to a whole one: say it as a second is said.
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
 * Each outcome's word in the badge and tooltip, and in the Cells table's
 * narrow column: a function, so that it is translated when shown.
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

/** Short status word: "ok", "error", "interrupted", "out of memory", "kernel died". */
export function formatOutcome(summary: CellSummary): string {
  // A status the kernel named otherwise (a newer helper's) is said as it came.
  if (summary.outcome === 'error' && summary.status !== 'error') {
    return summary.status;
  }
  return outcomeWords(summary.outcome).full;
}

/**
 * The Cells table's duration: formatDuration up to a minute, then without
 * spaces and at most six characters ("3m12s", "12m", "1h05m", "14h"), so
 * that a training cell's time fits its narrow column ("3 min 12 s" was
 * cut); the row's tooltip has the long form.
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
    return `${Math.floor(seconds / 60)}m`; // "12m": "12m34s" was wider than "999 ms"
  }
  if (seconds < 36000) {
    return `${Math.floor(seconds / 3600)}h${two(Math.floor((seconds % 3600) / 60))}m`;
  }
  return `${Math.floor(seconds / 3600)}h`;
}

/**
 * The Cells table's status: at most five characters, to be read whole in
 * its narrow column ("interrupted" and error class names were cut to
 * "inte…", "Zer…"); the row's tooltip has the whole status and the error.
 */
export function formatOutcomeShort(summary: CellSummary): string {
  return outcomeWords(summary.outcome).short;
}

/**
 * The badge line: "+1.2 GiB · peak 3.4 GiB · 2.1 s" (+ " · error" etc.),
 * with the kernel's processes where they held memory worth showing; `extra`
 * (the GPU load, "GPU 93%") goes between the memory figures and the duration.
 */
export function formatCellBadge(
  summary: CellSummary,
  units: ByteUnits = 'binary',
  withOutcome = true,
  processes: ProcessesAlongside | null = null,
  extra: readonly string[] = []
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
    ...extra,
    formatDuration(summary.durationS)
  ];
  if (summary.outcome !== 'ok' && withOutcome) {
    parts.push(formatOutcome(summary));
  }
  return parts.join(SEP);
}

/** "RAM +20 GiB" (what stayed), else "RAM peak +20 GiB" (what came and went), for a GPU cell's badge. */
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
 * The badge's words for the kernel's processes: "processes +400 MiB" (what
 * they hold more after the cell), else "processes max ~400 MiB" (what came
 * and went, sampled); with ", GPU +1.0 GiB" where they moved GPU memory.
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

/** The Cells table's processes column: "+400 MiB" (what they hold more), or "~500 MiB" (their sampled maximum). */
export function formatProcessesShort(
  p: ProcessesAlongside,
  units: ByteUnits = 'binary'
): string {
  const shown = processesShown(p);
  return shown.stayed
    ? formatDelta(shown.bytes, units)
    : formatPeak(shown.bytes, false, units);
}

/** The tooltip's lines for the kernel's processes around a cell. */
export function describeCellProcesses(
  record: CellMemoryRecord,
  units: ByteUnits = 'binary'
): string[] {
  const p = record.processes;
  if (!p) {
    return [];
  }
  const readings = trans._n(
    '%1 reading, %2 s apart',
    '%1 readings, %2 s apart',
    p.samples,
    p.sample_spacing_s.toFixed(1)
  );
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

/** "[7]", or "[ ]" when the kernel gave no execution count. */
export function formatExecutionCount(count: number | null): string {
  return count === null ? '[ ]' : `[${count}]`;
}

function arrow(
  before: number | null,
  after: number | null,
  units: ByteUnits
): string {
  return `${formatBytes(before, units)} \u2192 ${formatBytes(after, units)}`;
}

/** Characters of the error message shown in a tooltip. */
const TOOLTIP_MESSAGE_CHARS = 300;

/**
 * The tooltip: what the figures are (GPU or RAM), per-device breakdown,
 * host RSS, duration and status. Several lines of plain text.
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
