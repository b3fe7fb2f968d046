/**
 * The memory history of one kernel: a shared time axis and one column per
 * series (host RSS, per-GPU allocated/reserved/process), all in ring buffers
 * that advance in lockstep, so row i of every column belongs to time i.
 *
 * A figure that is unknown in a sample is stored as NaN (a gap in the chart).
 */
import { RingBuffer } from './RingBuffer';

/** Names of the recorded series. */
export namespace SeriesKey {
  export const hostRss = 'host.rss';
  export type GpuFigure = 'allocated' | 'reserved' | 'process';
  export function gpu(index: number, figure: GpuFigure): string {
    return `gpu${index}.${figure}`;
  }
  /** Parse a GPU series key back; null for non-GPU keys. */
  export function parseGpu(
    key: string
  ): { index: number; figure: GpuFigure } | null {
    const match = /^gpu(\d+)\.(allocated|reserved|process)$/.exec(key);
    return match
      ? { index: Number(match[1]), figure: match[2] as GpuFigure }
      : null;
  }
}

/** Why a kernel process's line ends on the chart. */
export type KernelMarkKind = 'died' | 'restarted' | 'changed';

/** Where one kernel process's figures end and the next one's begin. */
export interface KernelMark {
  /** Unix seconds, the kernel's clock. */
  time: number;
  kind: KernelMarkKind;
}

/** A copy of the rows in a time range, ready for a chart. */
export interface HistoryWindow {
  /** Unix seconds, ascending. */
  times: Float64Array;
  /** Same length as `times`; NaN where the figure was unknown. */
  series: Map<string, Float64Array>;
}

export class MemoryHistory {
  constructor(capacity: number) {
    this._times = new RingBuffer(capacity);
  }

  get capacity(): number {
    return this._times.capacity;
  }

  /** Number of rows held. */
  get length(): number {
    return this._times.length;
  }

  /** Keys of every series seen so far, in order of first appearance. */
  get seriesKeys(): string[] {
    return Array.from(this._columns.keys());
  }

  /** Time of the newest row (Unix seconds); NaN when empty. */
  get lastTime(): number {
    return this._times.last();
  }

  /**
   * Append one row. Series absent from `values` get NaN; a series seen for
   * the first time gets NaN for all earlier rows. O(number of series).
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
  }

  /**
   * The kernel process behind the figures ended at `time` (it died, was
   * restarted, or the notebook changed kernel): its last figures held until
   * then (samples come only when a figure moves), so they are repeated at
   * `time`; then a row with every figure unknown, so that the next
   * process's line does not join this one's; and a mark. Marks older than
   * the oldest row held are dropped with it.
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
    this._marks = [
      ...this._marks.filter(mark => mark.time >= oldest),
      { time, kind }
    ];
  }

  /** Where kernel processes ended, oldest first (some may be older than the rows held). */
  get marks(): readonly KernelMark[] {
    return this._marks;
  }

  /** The newest value of one series; NaN when unknown or absent. */
  latest(key: string): number {
    const column = this._columns.get(key);
    return column ? column.last() : NaN;
  }

  /**
   * The newest rows with time >= `fromTime` (all rows for -Infinity), in
   * ascending time. O(rows in the window): the chart reads only what it
   * shows, however long the history.
   *
   * The window is found by walking back from the newest row, and it stops
   * where time goes backwards (the kernel clock stepped back, or samples
   * were injected out of order): the window is always monotonic.
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
   * Take in rows that arrived late (the helper's timeline, recovered after a
   * page reload or a reconnect): each row whose time is not held yet goes in
   * at its place in time; a row already held (the same sample, received live)
   * is skipped, and so is a row at or before `after`. `series` holds one
   * column per key, as long as `times`; NaN where unknown. Returns the
   * number of rows added. O(rows held + rows given): it is done once per
   * connection, not per sample.
   */
  merge(
    times: ArrayLike<number>,
    series: ReadonlyMap<string, ArrayLike<number>>,
    after = -Infinity
  ): number {
    const heldTimes = this._times.slice();
    const held = new Set(heldTimes);
    const added: number[] = [];
    for (let i = 0; i < times.length; i++) {
      if (Number.isFinite(times[i]) && times[i] > after && !held.has(times[i])) {
        held.add(times[i]);
        added.push(i);
      }
    }
    if (added.length === 0) {
      return 0;
    }
    const heldColumns = new Map<string, Float64Array>();
    for (const [key, column] of this._columns) {
      heldColumns.set(key, column.slice());
    }
    // The given rows in time order (as the helper keeps them; sorted here
    // all the same, they are few), merged into the held ones in one pass:
    // a held row goes first on a tie, and held rows keep their order.
    added.sort((a, b) => times[a] - times[b]);
    const keys = new Set([...heldColumns.keys(), ...series.keys()]);
    const capacity = this._times.capacity;
    this._columns.clear();
    this._times = new RingBuffer(capacity);
    const columns = Array.from(keys, key => {
      const column = new RingBuffer(capacity);
      this._columns.set(key, column);
      return {
        column,
        held: heldColumns.get(key),
        given: series.get(key)
      };
    });
    let h = 0;
    let a = 0;
    while (h < heldTimes.length || a < added.length) {
      const takeHeld =
        a >= added.length ||
        (h < heldTimes.length && heldTimes[h] <= times[added[a]]);
      const i = takeHeld ? h++ : added[a++];
      this._times.push(takeHeld ? heldTimes[i] : times[i]);
      for (const { column, held, given } of columns) {
        const source = takeHeld ? held : given;
        column.push(source === undefined ? NaN : source[i]);
      }
    }
    return added.length;
  }

  /** Keep at most `capacity` newest rows from now on. */
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
  }

  private _times: RingBuffer;
  private _columns = new Map<string, RingBuffer>();
  private _marks: readonly KernelMark[] = [];
}
