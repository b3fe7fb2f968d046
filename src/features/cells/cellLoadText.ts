/**
 * The text of a cell's GPU load: the badge's "GPU 93%", and the lines the
 * badge's and the Cells row's tooltips add under the memory figures (per
 * GPU: mean and maximum utilisation, energy, throttling, how much of the
 * cell the driver's buffer covered), with the hints. The functions are pure,
 * and what they return goes into the DOM as text.
 */
import type { CellMemoryRecord } from '../../protocol/cell';
import type { CellGpuLoad } from '../../protocol/load';
import { ByteUnits } from '../../text/format';
import {
  formatJoules,
  formatLoadPercent,
  throttleReasonsText,
  unavailableText
} from '../../text/gpuLoadText';
import { trans } from '../../text/translation';
import { CellSummary } from '../../model/cellFigures';
import { describeCellRecord, formatDuration } from './cellFormat';
import { cellHints, cellHintText } from './cellHints';
import { CellLoadSummary, cellLoadOf } from './cellLoad';

/**
 * The badge's load figure, "GPU 93%"; "GPU ~93%" when the driver's buffer
 * did not cover the whole cell; null when the mean is unknown.
 */
export function formatBadgeLoad(load: CellLoadSummary | null): string | null {
  if (!load || load.meanPercent === null) {
    return null;
  }
  const percent = formatLoadPercent(load.meanPercent);
  return load.coverage === 'full'
    ? trans.__('GPU %1', percent)
    : trans.__('GPU ~%1', percent);
}

/**
 * Says in words what `coverage` means, such as "the driver's buffer covered
 * only the last 12 s of the cell's 30 s"; a word this page does not know is
 * given as it came.
 */
export function coverageText(
  coverage: string,
  coveredS: number,
  durationS: number
): string {
  switch (coverage) {
    case 'full':
      return trans.__("the driver's buffer covered the whole cell");
    case 'partial':
      return trans.__(
        "the driver's buffer covered only the last %1 of the cell's %2",
        formatDuration(coveredS),
        formatDuration(durationS)
      );
    case 'none':
      return trans.__("the driver's buffer held no sample of the cell");
    default:
      return coverage;
  }
}

/** A figure that a MIG instance took from its parent card, in words. */
function parentFigureText(figure: string): string {
  switch (figure) {
    case 'sm_mean_percent':
      return trans.__('utilisation');
    case 'energy_joules':
      return trans.__('energy');
    case 'throttle_reasons':
      return trans.__('throttling');
    default:
      return figure;
  }
}

/**
 * The line of one GPU's load: its mean and highest utilisation, its energy,
 * and how much of the cell the driver's buffer covered.
 */
function deviceLine(d: CellGpuLoad, durationS: number): string {
  const mean =
    d.sm_mean_percent === null
      ? unavailableText(d.unavailable.sm_mean_percent)
      : formatLoadPercent(d.sm_mean_percent);
  const energy =
    d.energy_joules === null
      ? unavailableText(d.unavailable.energy_joules)
      : d.energy_method === 'power_samples'
        ? trans.__('%1 (from power samples)', formatJoules(d.energy_joules))
        : formatJoules(d.energy_joules);
  const parent = d.parent_figures.length
    ? ` ${trans.__("(%1: the whole GPU's)", d.parent_figures.map(parentFigureText).join(', '))}`
    : '';
  return (
    trans.__(
      'GPU %1 load: mean %2, max %3 (%4 samples); energy %5; %6',
      d.index,
      mean,
      formatLoadPercent(d.sm_max_percent),
      d.utilization_samples,
      energy,
      coverageText(d.coverage, d.covered_s, durationS)
    ) + parent
  );
}

/**
 * The line that says what held GPU `d`'s clocks back, or why that is
 * unknown; null when nothing did, or when there is no reason to give.
 */
function throttleLine(d: CellGpuLoad): string | null {
  if (d.throttle_reasons === null) {
    return d.unavailable.throttle_reasons
      ? trans.__(
          'GPU %1 throttling: %2',
          d.index,
          unavailableText(d.unavailable.throttle_reasons)
        )
      : null;
  }
  return d.throttle_reasons.length
    ? trans.__(
        'GPU %1 held back by: %2',
        d.index,
        throttleReasonsText(d.throttle_reasons)
      )
    : null;
}

/**
 * The lines of each GPU of `load`: one with its utilisation, energy and
 * coverage, and one more for throttling where there is something to say.
 */
export function cellLoadDeviceLines(
  record: CellMemoryRecord,
  load: CellLoadSummary
): string[] {
  const lines: string[] = [];
  for (const d of load.devices) {
    lines.push(deviceLine(d, record.duration_s));
    const throttle = throttleLine(d);
    if (throttle) {
      lines.push(throttle);
    }
  }
  return lines;
}

/** The tooltip lines of a record's GPU load and its hints; none without load figures. */
export function cellLoadLines(record: CellMemoryRecord): string[] {
  const load = cellLoadOf(record);
  if (!load) {
    return [];
  }
  return [
    ...cellLoadDeviceLines(record, load),
    ...cellHints(record, load).map(cellHintText)
  ];
}

/** Words a cell run's tooltip: describeCellRecord's lines, with the GPU load's lines under them. */
export function describeCellWithLoad(
  record: CellMemoryRecord,
  summary: CellSummary,
  units: ByteUnits = 'binary'
): string {
  return [
    describeCellRecord(record, summary, units),
    ...cellLoadLines(record)
  ].join('\n');
}
