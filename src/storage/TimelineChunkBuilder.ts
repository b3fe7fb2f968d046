/**
 * Gathers the rows and kernel marks of a page's next timeline chunk, which
 * savedTimeline.ts later reads back and assembles. It is the part of keeping
 * the timeline that runs from start-up; the rest loads when a notebook's
 * kept timeline is first read.
 */
import type { KernelMark } from '../model/MemoryHistory';

/**
 * A stretch of a notebook's timeline as it is saved in the browser database.
 */
export interface TimelineChunk {
  /** The kernel run that the rows came from; null when the page did not know it yet. */
  identity: string | null;
  /** The row times in the order the page added them, which is ascending except for rows merged late; a gap row has the time of the row before it. */
  times: Float64Array;
  /** One column per series key, as long as `times`; NaN where unknown. */
  series: Map<string, Float64Array>;
  marks: KernelMark[];
}

/** Gathers the rows and marks for the next chunk, in the order they came. */
export class TimelineChunkBuilder {
  get isEmpty(): boolean {
    return this._times.length === 0 && this._marks.length === 0;
  }

  addRow(time: number, values: ReadonlyMap<string, number>): void {
    const at = this._times.length;
    this._times.push(time);
    for (const [key, value] of values) {
      this._column(key, at).push(value);
    }
    this._pad();
  }

  addRows(
    times: ArrayLike<number>,
    series: ReadonlyMap<string, ArrayLike<number>>
  ): void {
    const at = this._times.length;
    for (let i = 0; i < times.length; i++) {
      this._times.push(times[i]);
    }
    for (const [key, values] of series) {
      const column = this._column(key, at);
      for (let i = 0; i < times.length; i++) {
        column.push(values[i]);
      }
    }
    this._pad();
  }

  addMark(mark: KernelMark): void {
    this._marks.push(mark);
  }

  /** Returns what was gathered as a chunk of run `identity`, and empties the builder. */
  take(identity: string | null): TimelineChunk {
    const series = new Map<string, Float64Array>();
    for (const [key, column] of this._columns) {
      series.set(key, Float64Array.from(column));
    }
    const chunk = {
      identity,
      times: Float64Array.from(this._times),
      series,
      marks: this._marks
    };
    this._times = [];
    this._columns.clear();
    this._marks = [];
    return chunk;
  }

  /** Returns the column of `key`, filled with NaN for the `rows` rows that came before it was first seen. */
  private _column(key: string, rows: number): number[] {
    let column = this._columns.get(key);
    if (!column) {
      column = new Array<number>(rows).fill(NaN);
      this._columns.set(key, column);
    }
    return column;
  }

  /** Marks the columns that a row did not mention as unknown (NaN) in that row. */
  private _pad(): void {
    for (const column of this._columns.values()) {
      while (column.length < this._times.length) {
        column.push(NaN);
      }
    }
  }

  private _times: number[] = [];
  private _columns = new Map<string, number[]>();
  private _marks: KernelMark[] = [];
}
