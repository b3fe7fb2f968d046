/**
 * A notebook's timeline as the browser keeps it. It is stored in chunks,
 * each holding the rows and kernel marks that one page added in a few
 * seconds, with the kernel run (the hello's `record_series`) they came from.
 * Two tabs of one notebook both keep what they saw, so chunks can overlap,
 * and `assembleTimeline` makes one timeline of them again. What is read back
 * is checked like a kernel message, because the store may hold chunks
 * written by another version of the extension.
 */
import {
  isGapRow,
  KernelMark,
  KernelMarkKind,
  SeriesKey
} from '../model/MemoryHistory';
import type { TimelineChunk } from './TimelineChunkBuilder';

const MARK_KINDS: readonly KernelMarkKind[] = ['died', 'restarted', 'changed'];

/** Parses a chunk read back from the store; returns null when it does not parse as one. */
export function parseTimelineChunk(value: unknown): TimelineChunk | null {
  if (typeof value !== 'object' || value === null) {
    return null;
  }
  const raw = value as { [key: string]: unknown };
  const identity = raw.identity;
  if (identity !== null && typeof identity !== 'string') {
    return null;
  }
  const times = numbers(raw.times);
  if (!times || times.some(t => !Number.isFinite(t))) {
    return null;
  }
  if (typeof raw.series !== 'object' || raw.series === null) {
    return null;
  }
  const series = new Map<string, Float64Array>();
  for (const [key, column] of Object.entries(raw.series)) {
    const values = numbers(column);
    if (!isSeriesKey(key) || !values || values.length !== times.length) {
      return null;
    }
    series.set(key, values);
  }
  if (!Array.isArray(raw.marks)) {
    return null;
  }
  const marks: KernelMark[] = [];
  for (const mark of raw.marks) {
    const { time, kind } = (mark ?? {}) as { time?: unknown; kind?: unknown };
    if (
      typeof time !== 'number' ||
      !Number.isFinite(time) ||
      !MARK_KINDS.includes(kind as KernelMarkKind)
    ) {
      return null;
    }
    marks.push({ time, kind: kind as KernelMarkKind });
  }
  return { identity, times, series, marks };
}

/**
 * Converts a chunk to the form it is stored in: plain objects and arrays of
 * numbers (NaN included), which every structured clone keeps as they are.
 */
export function storedChunk(chunk: TimelineChunk): {
  identity: string | null;
  times: number[];
  series: { [key: string]: number[] };
  marks: KernelMark[];
} {
  const series: { [key: string]: number[] } = {};
  for (const [key, column] of chunk.series) {
    series[key] = Array.from(column);
  }
  return {
    identity: chunk.identity,
    times: Array.from(chunk.times),
    series,
    marks: chunk.marks
  };
}

/**
 * Assembles one timeline from chunks in any order. The rows are sorted by
 * time, a row kept twice (by two tabs) appears once, and at most the
 * `capacity` newest rows are kept. Where the kernel run changes without a
 * gap (a page closed while its kernel lived, and the next page watched
 * another process), a gap row is put between the runs so that their lines
 * do not join. The result is itself a chunk, of the newest run, which the
 * store keeps in place of the chunks it was made from.
 */
export function assembleTimeline(
  chunks: readonly TimelineChunk[],
  capacity: number
): TimelineChunk {
  const keys = Array.from(
    new Set(chunks.flatMap(chunk => Array.from(chunk.series.keys())))
  );
  // Usually the chunks follow one another (one page at a time, with no rows
  // merged late), so sorting them by their first rows puts all rows in time
  // order and no row sort is needed.
  const ordered = inTimeOrder(chunks);
  const source = ordered ?? chunks.filter(chunk => chunk.times.length > 0);
  const columnsOf = source.map(chunk => keys.map(key => chunk.series.get(key)));
  const total = source.reduce((n, chunk) => n + chunk.times.length, 0);
  // Address every row as (chunk, index), and note whether it is a gap row,
  // in which every figure is unknown.
  const rowChunk = new Int32Array(total);
  const rowIndex = new Int32Array(total);
  const rowGap = new Uint8Array(total);
  let r = 0;
  source.forEach((chunk, c) => {
    const columns = columnsOf[c];
    for (let i = 0; i < chunk.times.length; i++, r++) {
      rowChunk[r] = c;
      rowIndex[r] = i;
      rowGap[r] = isGapRow(columns, i) ? 1 : 0;
    }
  });
  const timeOf = (row: number) => source[rowChunk[row]].times[rowIndex[row]];
  const order = Array.from({ length: total }, (_, row) => row);
  if (!ordered) {
    // At equal times, the row with figures goes before the gap row that
    // ends them.
    order.sort((a, b) => timeOf(a) - timeOf(b) || rowGap[a] - rowGap[b]);
  }
  // Leave room for at most one extra gap row per chunk, where the run
  // changes.
  const times = new Float64Array(total + source.length);
  const columns = keys.map(() => new Float64Array(total + source.length));
  let n = 0;
  let run: string | null = null;
  const put = (time: number, row: number | null) => {
    times[n] = time;
    for (let k = 0; k < keys.length; k++) {
      const column =
        row === null || rowGap[row] ? undefined : columnsOf[rowChunk[row]][k];
      columns[k][n] =
        column === undefined ? NaN : column[rowIndex[row as number]];
    }
    n++;
  };
  let previousGap = false;
  for (const row of order) {
    const time = timeOf(row);
    const gap = rowGap[row] === 1;
    if (n > 0 && times[n - 1] === time && previousGap === gap) {
      continue; // The same row was kept twice, by two tabs.
    }
    const identity = source[rowChunk[row]].identity;
    if (identity !== null) {
      if (run !== null && identity !== run && n > 0 && !previousGap && !gap) {
        put(times[n - 1], null);
      }
      run = identity;
    }
    put(time, row);
    previousGap = gap;
  }
  const start = Math.max(0, n - Math.max(0, capacity));
  const series = new Map<string, Float64Array>();
  keys.forEach((key, k) => series.set(key, columns[k].slice(start, n)));
  const oldest = n > start ? times[start] : Infinity;
  const marks = new Map<string, KernelMark>();
  for (const chunk of chunks) {
    for (const mark of chunk.marks) {
      if (mark.time >= oldest) {
        marks.set(`${mark.time} ${mark.kind}`, mark);
      }
    }
  }
  return {
    identity: run,
    times: times.slice(start, n),
    series,
    marks: Array.from(marks.values()).sort((a, b) => a.time - b.time)
  };
}

/** Sorts the chunks by their first row and returns them when that puts every row in time order; null otherwise. */
function inTimeOrder(chunks: readonly TimelineChunk[]): TimelineChunk[] | null {
  const sorted = chunks
    .filter(chunk => chunk.times.length > 0)
    .sort((a, b) => a.times[0] - b.times[0]);
  let last = -Infinity;
  for (const chunk of sorted) {
    for (const time of chunk.times) {
      if (time < last) {
        return null;
      }
      last = time;
    }
  }
  return sorted;
}

function numbers(value: unknown): Float64Array | null {
  // The value was read back through structured clone, possibly from another
  // realm, so `instanceof` cannot be trusted.
  if (Object.prototype.toString.call(value) === '[object Float64Array]') {
    return Float64Array.from(value as Float64Array);
  }
  // A null is an unknown figure, written by a copy that stored NaN the way
  // JSON does.
  if (
    Array.isArray(value) &&
    value.every(v => typeof v === 'number' || v === null)
  ) {
    return Float64Array.from(value, v => (v === null ? NaN : v));
  }
  return null;
}

function isSeriesKey(key: string): boolean {
  return key === SeriesKey.hostRss || SeriesKey.parseGpu(key) !== null;
}
