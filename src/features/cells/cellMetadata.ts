/**
 * The figures of a cell's latest record as saved in the cell's metadata when
 * the setting `storeRecordsInNotebookMetadata` is on, so that a saved
 * notebook shows its memory profile when reopened. Only numbers, booleans
 * and two words from fixed lists (the outcome and the source) are saved, so
 * that no text from the kernel, such as error messages or names, goes into
 * the notebook file.
 */
import {
  CellMemorySource,
  CellOutcome,
  CellSummary
} from '../../model/cellFigures';
import { CellHistoryEntry } from '../../model/CellHistory';

/** The metadata key under which a cell's figures are saved. */
export const CELL_METADATA_KEY = 'jupyterlab_vram';

/**
 * The figures of a cell's latest record in the form they are saved in the
 * cell's metadata.
 */
export interface SavedCellFigures {
  /** The format's version; a value of another version is not read. */
  version: 1;
  execution_count: number | null;
  /** When the cell started, in Unix seconds by the kernel's clock. */
  started: number;
  duration_s: number;
  outcome: CellOutcome;
  source: CellMemorySource;
  delta_bytes: number | null;
  peak_bytes: number | null;
  peak_exact: boolean;
}

/**
 * Takes the figures to save in a cell's metadata from its latest history entry.
 */
export function savedFiguresOf(entry: CellHistoryEntry): SavedCellFigures {
  const s = entry.summary;
  return {
    version: 1,
    execution_count: entry.record.execution_count,
    started: entry.record.started,
    duration_s: s.durationS,
    outcome: s.outcome,
    source: s.source,
    delta_bytes: s.deltaBytes,
    peak_bytes: s.peakBytes,
    peak_exact: s.peakExact
  };
}

/** The outcomes that saved figures may name; any other makes the value unreadable. */
const OUTCOMES: readonly string[] = [
  'ok',
  'error',
  'interrupted',
  'oom',
  'died'
];

/** `v` if it is a finite number, or else null. */
function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/**
 * Reads saved figures back, checking every field because the file may have
 * been edited by hand; returns null when the value is not a valid version-1
 * object.
 */
export function readSavedFigures(value: unknown): SavedCellFigures | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return null;
  }
  const v = value as { [key: string]: unknown };
  const started = num(v.started);
  const duration = num(v.duration_s);
  if (
    v.version !== 1 ||
    started === null ||
    duration === null ||
    typeof v.outcome !== 'string' ||
    !OUTCOMES.includes(v.outcome) ||
    (v.source !== 'gpu' && v.source !== 'ram') ||
    typeof v.peak_exact !== 'boolean'
  ) {
    return null;
  }
  const count = num(v.execution_count);
  return {
    version: 1,
    execution_count: count !== null && Number.isInteger(count) ? count : null,
    started,
    duration_s: duration,
    outcome: v.outcome as CellOutcome,
    source: v.source,
    delta_bytes: num(v.delta_bytes),
    peak_bytes: num(v.peak_bytes),
    peak_exact: v.peak_exact
  };
}

/**
 * Makes the summary that a badge is rendered from out of saved figures. An
 * out-of-memory outcome gets the status "error", as a live record's does.
 */
export function summaryOfSaved(saved: SavedCellFigures): CellSummary {
  const status = saved.outcome === 'oom' ? 'error' : (saved.outcome as string);
  return {
    source: saved.source,
    deltaBytes: saved.delta_bytes,
    peakBytes: saved.peak_bytes,
    peakExact: saved.peak_exact,
    durationS: saved.duration_s,
    status,
    outcome: saved.outcome,
    outOfMemory: saved.outcome === 'oom',
    errorType: null
  };
}

/**
 * Whether two saved values are the same, so that figures already saved are
 * not written again.
 */
export function sameSavedFigures(
  a: SavedCellFigures | null,
  b: SavedCellFigures
): boolean {
  if (!a) {
    return false;
  }
  return (Object.keys(b) as (keyof SavedCellFigures)[]).every(
    k => a[k] === b[k]
  );
}
