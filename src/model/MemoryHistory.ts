/**
 * The memory history of one kernel: a shared time axis and one column per
 * series (host RSS, per-GPU allocated/reserved/process, and the GPU's load:
 * SM utilisation and power, from live samples only), all in ring buffers
 * that advance in lockstep, so row i of every column belongs to time i.
 *
 * A figure that is unknown in a sample is stored as NaN, which the chart
 * draws as a gap.
 *
 * What is added (live rows, rows merged late, kernel marks) is announced by
 * `added`, so that TimelinePersistence can keep it in the browser. What
 * TimelinePersistence brings back from there goes in front with
 * `restoreEarlier` and is not announced, because it was kept already.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { RingBuffer } from './RingBuffer';

/** Names of the recorded series. */
export namespace SeriesKey {
  /** The key of the series of the kernel's host RSS. */
  export const hostRss = 'host.rss';
  /**
   * A figure that is kept per GPU: memory (bytes), or load (`sm`: SM
   * utilisation in percent; `power`: watts).
   */
  export type GpuFigure = 'allocated' | 'reserved' | 'process' | 'sm' | 'power';
  /** Builds the key of a GPU's series from the GPU's index and the figure. */
  export function gpu(index: number, figure: GpuFigure): string {
    return `gpu${index}.${figure}`;
  }
  /**
   * Parses a GPU series key back into its parts, or returns null for other
   * keys.
   */
  export function parseGpu(
    key: string
  ): { index: number; figure: GpuFigure } | null {
    const match = /^gpu(\d+)\.(allocated|reserved|process|sm|power)$/.exec(key);
    return match
      ? { index: Number(match[1]), figure: match[2] as GpuFigure }
      : null;
  }
}

/** Why a kernel process's line ends on the chart. */
export type KernelMarkKind = 'died' | 'restarted' | 'changed';

/** Where one kernel process's figures end and the next one's begin. */
export interface KernelMark {
  /** The time in Unix seconds, on the kernel's clock. */
  time: number;
  kind: KernelMarkKind;
}

/**
 * Rows stored as columns. `series` holds one column per key, as long as
 * `times`, with NaN where a figure is unknown.
 */
export interface HistoryRows {
  times: ArrayLike<number>;
  series: ReadonlyMap<string, ArrayLike<number>>;
}

/**
 * The rows and marks that a browser kept of a notebook's earlier timeline,
 * in ascending time, with the gap rows included.
 */
export interface EarlierTimeline extends HistoryRows {
  marks: readonly KernelMark[];
}

/** What went into the history: one live row, rows merged late, or a kernel mark. */
export type HistoryAddition =
  | { kind: 'row'; time: number; values: ReadonlyMap<string, number> }
  | { kind: 'rows'; rows: HistoryRows }
  | { kind: 'mark'; mark: KernelMark };

/** A copy of the rows in a time range, ready for a chart. */
export interface HistoryWindow {
  /** The times in Unix seconds, ascending. */
  times: Float64Array;
  /**
   * One column per key, as long as `times`, with NaN where the figure was
   * unknown.
   */
  series: Map<string, Float64Array>;
}

/**
 * The memory history of one kernel, with a shared time axis and one column per
 * series.
 */
export class MemoryHistory {
  constructor(capacity: number) {
    this._times = new RingBuffer(capacity);
  }

  get capacity(): number {
    return this._times.capacity;
  }

  /** The number of rows held. */
  get length(): number {
    return this._times.length;
  }

  /** The keys of every series seen so far, in order of first appearance. */
  get seriesKeys(): string[] {
    return Array.from(this._columns.keys());
  }

  /**
   * The time of the newest row in Unix seconds, or NaN when the history is
   * empty.
   */
  get lastTime(): number {
    return this._times.last();
  }

  /**
   * Appends one row. Series absent from `values` get NaN, and a series seen
   * for the first time gets NaN for all earlier rows, so that every column
   * stays as long as the time axis. It costs O(number of series).
   */
  append(time: number, values: ReadonlyMap<string, number>): void {
    for (const key of values.keys()) {
      if (!this._columns.has(key)) {
        this._columns.set(
          key,
          RingBuffer.filled(this._times.capacity, this._times.length, NaN)
        );
      }
    }
    this._times.push(time);
    for (const [key, column] of this._columns) {
      const value = values.get(key);
      column.push(value === undefined ? NaN : value);
    }
    this._added.emit({ kind: 'row', time, values });
  }

  /**
   * Emits rows and marks as they are added, but not those that
   * `restoreEarlier` puts back.
   */
  get added(): ISignal<this, HistoryAddition> {
    return this._added;
  }

  /**
   * Records that the kernel process behind the figures ended at `time`,
   * because it died, was restarted, or the notebook changed kernel. Its last
   * figures held until then, since samples come only when a figure moves, so
   * they are repeated at `time`. Then comes a row with every figure unknown,
   * so that the next process's line does not join this one's, and a mark.
   * Marks older than the oldest row held are dropped with that row.
   */
  markKernelEnd(time: number, kind: KernelMarkKind): void {
    if (this.length > 0 && time > this.lastTime) {
      const held = new Map<string, number>();
      for (const [key, column] of this._columns) {
        held.set(key, column.last());
      }
      this.append(time, held);
    }
    this.append(time, new Map());
    const oldest = this._times.get(0);
    const mark = { time, kind };
    this._marks = [...this._marks.filter(m => m.time >= oldest), mark];
    this._added.emit({ kind: 'mark', mark });
  }

  /**
   * Where kernel processes ended, oldest first. Some marks may be older than
   * the rows held.
   */
  get marks(): readonly KernelMark[] {
    return this._marks;
  }

  /** The newest value of one series, or NaN when it is unknown or absent. */
  latest(key: string): number {
    const column = this._columns.get(key);
    return column ? column.last() : NaN;
  }

  /**
   * The newest rows with time >= `fromTime` (all rows for -Infinity), in
   * ascending time. It costs O(rows in the window), so the chart reads only
   * what it shows, however long the history is.
   *
   * The window is found by walking back from the newest row, and it stops
   * where time goes backwards, because the kernel clock stepped back or
   * samples were injected out of order. That keeps the window monotonic.
   */
  window(fromTime: number): HistoryWindow {
    const times = this._times;
    let start = times.length;
    let next = Infinity;
    while (start > 0) {
      const t = times.get(start - 1);
      if (t < fromTime || t > next) {
        break;
      }
      next = t;
      start--;
    }
    const series = new Map<string, Float64Array>();
    for (const [key, column] of this._columns) {
      series.set(key, column.slice(start));
    }
    return { times: this._times.slice(start), series };
  }

  /**
   * Takes in rows that arrived late, such as the helper's timeline recovered
   * after a page reload or a reconnect. Each row whose time is not held yet
   * goes in at its place in time. A row already held, because the same
   * sample was received live, is skipped, and so is a row at or before
   * `after`. `series` holds one column per key, as long as `times`, with NaN
   * where a figure is unknown. Returns the number of rows added. It costs
   * O(rows held + rows given), which is fine because it runs once per
   * connection, not per sample.
   *
   * If rows are given on both sides of the gap that `restoreEarlier` put
   * after the browser's rows, one process ran on across it, so the gap is
   * removed.
   */
  merge(
    times: ArrayLike<number>,
    series: ReadonlyMap<string, ArrayLike<number>>,
    after = -Infinity
  ): number {
    const heldTimes = this._times.slice();
    const held = new Set(heldTimes);
    const added: number[] = [];
    let before = false;
    let beyond = false;
    const gap = this._restoredGap;
    for (let i = 0; i < times.length; i++) {
      const t = times[i];
      if (!Number.isFinite(t) || t <= after) {
        continue;
      }
      if (gap !== null) {
        before ||= t <= gap;
        beyond ||= t > gap;
      }
      if (!held.has(t)) {
        held.add(t);
        added.push(i);
      }
    }
    let heldColumns: Map<string, Float64Array> | null = null;
    let dropped = -1;
    if (before && beyond) {
      heldColumns = this._heldColumns();
      dropped = this._restoredGapIndex(heldTimes, heldColumns);
    }
    if (added.length === 0 && dropped < 0) {
      return 0;
    }
    if (dropped >= 0) {
      this._restoredGap = null;
    }
    heldColumns ??= this._heldColumns();
    // The helper keeps its rows in time order, but they are sorted here all
    // the same, since they are few. They are then merged into the held rows
    // in one pass; a held row goes first on a tie, and held rows keep their
    // order.
    added.sort((a, b) => times[a] - times[b]);
    const rows: Row[] = [];
    let h = 0;
    let a = 0;
    while (h < heldTimes.length || a < added.length) {
      if (
        a >= added.length ||
        (h < heldTimes.length && heldTimes[h] <= times[added[a]])
      ) {
        if (h !== dropped) {
          rows.push({ time: heldTimes[h], index: h, columns: heldColumns });
        }
        h++;
      } else {
        rows.push({ time: times[added[a]], index: added[a], columns: series });
        a++;
      }
    }
    this._rebuild(rows, new Set([...heldColumns.keys(), ...series.keys()]));
    if (added.length) {
      const addedSeries = new Map<string, Float64Array>();
      for (const [key, column] of series) {
        addedSeries.set(
          key,
          Float64Array.from(added, i => column[i])
        );
      }
      const addedTimes = Float64Array.from(added, i => times[i]);
      this._added.emit({
        kind: 'rows',
        rows: { times: addedTimes, series: addedSeries }
      });
    }
    return added.length;
  }

  /**
   * Puts in front what a browser kept of this timeline from before this
   * page (see TimelinePersistence): its rows older than the oldest row held,
   * and its marks, in their order and with its gap rows. Unless those rows
   * reach the ones held, meaning one process was seen without a break, a
   * gap row follows them, because the kernel may have lived on unwatched or
   * been another one. `merge` takes that gap out again when the helper's
   * rows span it. `added` does not announce these rows, because they were
   * kept already. Returns the number of rows put in.
   */
  restoreEarlier(earlier: EarlierTimeline): number {
    const first = this.length ? this._times.get(0) : Infinity;
    const { times, series } = earlier;
    let count = 0;
    while (count < times.length && times[count] < first) {
      count++;
    }
    if (count === 0) {
      return 0;
    }
    const lastTime = times[count - 1];
    const reachesHeld = count < times.length;
    const endsInGap = isGapRow(series.values(), count - 1);
    const heldColumns = this._heldColumns();
    const rows: Row[] = [];
    for (let i = 0; i < count; i++) {
      rows.push({ time: times[i], index: i, columns: series });
    }
    const addGap = !reachesHeld && !endsInGap;
    if (addGap) {
      rows.push({ time: lastTime, index: 0, columns: new Map() });
    }
    for (let i = 0; i < this.length; i++) {
      rows.push({ time: this._times.get(i), index: i, columns: heldColumns });
    }
    this._rebuild(rows, new Set([...series.keys(), ...heldColumns.keys()]));
    this._restoredGap = addGap ? lastTime : null;
    const oldest = this._times.get(0);
    this._marks = [
      ...earlier.marks.filter(mark => mark.time < first),
      ...this._marks
    ].filter(mark => mark.time >= oldest);
    return count;
  }

  /**
   * Keeps at most the `capacity` newest rows, both at once and after every
   * later addition.
   */
  setCapacity(capacity: number): void {
    this._times.setCapacity(capacity);
    for (const column of this._columns.values()) {
      column.setCapacity(capacity);
    }
  }

  clear(): void {
    this._times.clear();
    this._columns.clear();
    this._marks = [];
    this._restoredGap = null;
  }

  private _heldColumns(): Map<string, Float64Array> {
    const columns = new Map<string, Float64Array>();
    for (const [key, column] of this._columns) {
      columns.set(key, column.slice());
    }
    return columns;
  }

  /**
   * The index among the held rows of the gap row that `restoreEarlier`
   * added, or -1 if it is gone.
   */
  private _restoredGapIndex(
    heldTimes: Float64Array,
    heldColumns: ReadonlyMap<string, Float64Array>
  ): number {
    const gap = this._restoredGap;
    for (let i = heldTimes.length - 1; i >= 0; i--) {
      if (heldTimes[i] < (gap as number)) {
        break;
      }
      if (heldTimes[i] === gap && isGapRow(heldColumns.values(), i)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Holds the newest `capacity` of `rows`, with a column for each of `keys`.
   */
  private _rebuild(rows: readonly Row[], keys: ReadonlySet<string>): void {
    const capacity = this._times.capacity;
    this._columns.clear();
    this._times = new RingBuffer(capacity);
    const columns = Array.from(keys, key => {
      const column = new RingBuffer(capacity);
      this._columns.set(key, column);
      return { key, column };
    });
    for (const row of rows) {
      this._times.push(row.time);
      for (const { key, column } of columns) {
        const source = row.columns.get(key);
        column.push(source === undefined ? NaN : source[row.index]);
      }
    }
  }

  private _times: RingBuffer;
  private _columns = new Map<string, RingBuffer>();
  private _marks: readonly KernelMark[] = [];
  /**
   * The time of the gap row that `restoreEarlier` put after the browser's
   * rows, for as long as that row stands.
   */
  private _restoredGap: number | null = null;
  private _added = new Signal<this, HistoryAddition>(this);
}

/**
 * Whether row `index` is a gap, meaning every figure in it is unknown. A
 * column that the row lacks counts as unknown.
 */
export function isGapRow(
  columns: Iterable<ArrayLike<number> | undefined>,
  index: number
): boolean {
  for (const column of columns) {
    if (column !== undefined && !Number.isNaN(column[index])) {
      return false;
    }
  }
  return true;
}

/** One row to hold, which is row `index` of `columns`. */
interface Row {
  time: number;
  index: number;
  columns: ReadonlyMap<string, ArrayLike<number>>;
}
