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
  }

  private _times: RingBuffer;
  private _columns = new Map<string, RingBuffer>();
}
