/**
 * The hints the frontend draws from a cell's GPU load (the helper sends
 * figures, not verdicts, so a record kept from an older session is judged
 * by today's thresholds): "input-bound?" for a long cell that left the GPU
 * mostly idle, and "throttled" for a cell whose clocks were held back for
 * power or heat. docs/cells.md says where they show and why.
 */
import type { CellMemoryRecord } from '../../protocol/cell';
import { formatLoadPercent } from '../../text/gpuLoadText';
import { trans } from '../../text/translation';
import { formatDuration } from './cellFormat';
import type { CellLoadSummary } from './cellLoad';

/**
 * A cell must run at least this long (seconds) for its low utilisation to hint
 * at an input-bound loop.
 */
export const INPUT_BOUND_MIN_DURATION_S = 10;

/** Below this mean SM utilisation (percent) a long cell gets the "input-bound?" hint. */
export const INPUT_BOUND_BELOW_MEAN_PERCENT = 30;

/**
 * The least that a cell's highest utilisation sample, in percent, must
 * reach for the "input-bound?" hint. The GPU must have run something during
 * the cell, because a cell of CPU work alone is no input-bound loop.
 */
export const INPUT_BOUND_MIN_MAX_PERCENT = 1;

/**
 * The snippet offered with the "input-bound?" hint: a DataLoader with workers
 * and pinned memory.
 */
export const INPUT_BOUND_SNIPPET_ID = 'dataloader-pinning';

/** Throttle reasons that mean the power limit held the clocks back. */
const POWER_REASONS: ReadonlySet<string> = new Set([
  'sw_power_cap',
  'hw_power_brake_slowdown'
]);

/** Throttle reasons that mean heat held the clocks back. */
const HEAT_REASONS: ReadonlySet<string> = new Set([
  'sw_thermal_slowdown',
  'hw_thermal_slowdown'
]);

/** NVML's hardware slowdown reason, which may mean either a power brake or overheating. */
const POWER_OR_HEAT_REASON = 'hw_slowdown';

/** What held a cell's clocks back. */
export type ThrottleCause = 'power' | 'heat' | 'power-or-heat';

/** A hint about one cell's GPU load. */
export type CellHint =
  | {
      kind: 'input-bound';
      meanPercent: number;
      durationS: number;
      /** Whether the mean rests on less than the whole cell (`partial` or `none` coverage). */
      partial: boolean;
    }
  | { kind: 'throttled'; causes: ThrottleCause[] };

/**
 * The causes among `reasons`, power before heat. "Power or heat" is given
 * only when neither is named, because beside them it would add nothing.
 */
function throttleCauses(reasons: readonly string[]): ThrottleCause[] {
  const causes: ThrottleCause[] = [];
  if (reasons.some(r => POWER_REASONS.has(r))) {
    causes.push('power');
  }
  if (reasons.some(r => HEAT_REASONS.has(r))) {
    causes.push('heat');
  }
  if (!causes.length && reasons.includes(POWER_OR_HEAT_REASON)) {
    causes.push('power-or-heat');
  }
  return causes;
}

/** The hints for `record`, whose load is `load`; there are none without a load. */
export function cellHints(
  record: CellMemoryRecord,
  load: CellLoadSummary | null
): CellHint[] {
  if (!load) {
    return [];
  }
  const hints: CellHint[] = [];
  const mean = load.meanPercent;
  if (
    mean !== null &&
    record.duration_s >= INPUT_BOUND_MIN_DURATION_S &&
    mean < INPUT_BOUND_BELOW_MEAN_PERCENT &&
    (load.maxPercent ?? 0) >= INPUT_BOUND_MIN_MAX_PERCENT
  ) {
    hints.push({
      kind: 'input-bound',
      meanPercent: mean,
      durationS: record.duration_s,
      partial: load.coverage !== 'full'
    });
  }
  const causes = throttleCauses(load.throttleReasons);
  if (causes.length) {
    hints.push({ kind: 'throttled', causes });
  }
  return hints;
}

/** The short name of a hint, for the badge: "input-bound?" or "throttled: power". */
export function cellHintLabel(hint: CellHint): string {
  if (hint.kind === 'input-bound') {
    return trans.__('input-bound?');
  }
  return trans.__('throttled: %1', hint.causes.map(causeText).join(', '));
}

/** A throttle cause in words. */
function causeText(cause: ThrottleCause): string {
  switch (cause) {
    case 'power':
      return trans.__('power');
    case 'heat':
      return trans.__('heat');
    case 'power-or-heat':
      return trans.__('power or heat');
  }
}

/** Words the hint as a sentence, for a tooltip or the Cells tab's detail. */
export function cellHintText(hint: CellHint): string {
  if (hint.kind === 'input-bound') {
    const text = trans.__(
      'Input-bound? The GPU was busy %1 of the time on average over %2: the loop may be waiting for data. A DataLoader with worker processes and pinned memory may keep it busy.',
      formatLoadPercent(hint.meanPercent),
      formatDuration(hint.durationS)
    );
    return hint.partial
      ? `${text} ${trans.__("(The driver's buffer did not cover the whole cell: the mean rests partly on the helper's own readings.)")}`
      : text;
  }
  return trans.__(
    'Throttled: the GPU held its clocks back for %1 while the cell ran.',
    hint.causes.map(causeText).join(', ')
  );
}

/** The hints' kinds, for `data-vram-hints` ("input-bound throttled"); null when none. */
export function cellHintKinds(hints: readonly CellHint[]): string | null {
  return hints.length ? hints.map(h => h.kind).join(' ') : null;
}
