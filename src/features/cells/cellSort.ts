/**
 * Sorts the cell history table with a pure function over its entries. The
 * sort is stable, so entries with equal keys keep their record order, and
 * unknown values go last in either direction. Figures that are not part of a
 * record, such as the bytes still alive from a cell, which allocation
 * recording sends separately, come in through a `CellSortContext`.
 */
import { CellHistoryEntry } from '../../model/CellHistory';
import { cellLoadOf } from './cellLoad';
import { clusterAlongside } from './cellClusterFigures';
import { processesAlongside, processesShown } from './cellProcessFigures';

/** A column that the cell history table can be sorted by. */
export type CellSortKey =
  | 'execution_count'
  | 'delta'
  | 'peak'
  | 'gpu_mean'
  | 'gpu_max'
  | 'energy'
  | 'duration'
  | 'status'
  | 'alive'
  | 'processes'
  | 'cluster';

/** Every sort column of the cell history table, in the order of its columns. */
export const CELL_SORT_KEYS: readonly CellSortKey[] = [
  'execution_count',
  'delta',
  'peak',
  'gpu_mean',
  'gpu_max',
  'energy',
  'duration',
  'status',
  'alive',
  'processes',
  'cluster'
];

/** The order in which a column is sorted. */
export type SortDirection = 'ascending' | 'descending';

/**
 * The direction a column sorts in at its first click: the figures largest
 * first (what a user hunting memory looks for), the count and the status
 * in their reading order.
 */
export const FIRST_SORT_DIRECTION: Readonly<
  Record<CellSortKey, SortDirection>
> = {
  execution_count: 'ascending',
  delta: 'descending',
  peak: 'descending',
  gpu_mean: 'descending',
  gpu_max: 'descending',
  energy: 'descending',
  duration: 'descending',
  status: 'ascending',
  alive: 'descending',
  processes: 'descending',
  cluster: 'descending'
};

/**
 * The sort the user chose for the cell history table: a column and a direction.
 */
export interface CellSort {
  key: CellSortKey;
  direction: SortDirection;
}

/** What a sort reads besides the records. */
export interface CellSortContext {
  /**
   * Bytes still alive from the entry's cell, or null when the entry has no
   * such figure (not recorded, or an earlier run of its cell).
   */
  aliveBytes?: (entry: CellHistoryEntry) => number | null;
}

/** Severity order of statuses: ok < interrupted < error < out of memory < kernel died. */
const OUTCOME_RANK = { ok: 0, interrupted: 1, error: 2, oom: 3, died: 4 };

/** The value an entry sorts by; null sorts last. */
export function cellSortValue(
  entry: CellHistoryEntry,
  key: CellSortKey,
  context: CellSortContext = {}
): number | null {
  switch (key) {
    case 'execution_count':
      return entry.record.execution_count;
    case 'delta':
      return entry.summary.deltaBytes;
    case 'peak':
      return entry.summary.peakBytes;
    case 'gpu_mean':
      return cellLoadOf(entry.record)?.meanPercent ?? null;
    case 'gpu_max':
      return cellLoadOf(entry.record)?.maxPercent ?? null;
    case 'energy':
      return cellLoadOf(entry.record)?.energyJoules ?? null;
    case 'duration':
      return entry.summary.durationS;
    case 'status':
      return OUTCOME_RANK[entry.summary.outcome];
    case 'alive':
      return context.aliveBytes?.(entry) ?? null;
    case 'processes': {
      const p = processesAlongside(entry.record);
      return p ? processesShown(p).bytes : null;
    }
    case 'cluster':
      return clusterAlongside(entry.record)?.deltaBytes ?? null;
  }
}

/**
 * Returns a sorted copy of `entries`, which are in record order. Each
 * entry's key is read once, before the O(n log n) sort compares numbers.
 */
export function sortCellEntries(
  entries: readonly CellHistoryEntry[],
  sort: CellSort,
  context: CellSortContext = {}
): CellHistoryEntry[] {
  const sign = sort.direction === 'ascending' ? 1 : -1;
  const n = entries.length;
  const keys = new Float64Array(n);
  const known = new Uint8Array(n);
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const v = cellSortValue(entries[i], sort.key, context);
    order[i] = i;
    if (v !== null && Number.isFinite(v)) {
      keys[i] = v;
      known[i] = 1;
    }
  }
  order.sort((a, b) => {
    if (known[a] !== known[b]) {
      return known[a] ? -1 : 1; // Unknown values go last in either direction.
    }
    if (known[a] && keys[a] !== keys[b]) {
      return keys[a] < keys[b] ? -sign : sign;
    }
    return a - b; // Equal keys keep their record order, so the sort is stable.
  });
  return order.map(i => entries[i]);
}
