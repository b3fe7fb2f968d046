/**
 * The rows of a history window that a chart a few hundred pixels wide
 * needs. A day at 20 Hz is 1.7 million rows; drawn into 300 pixel columns,
 * all but a few per column fall on the same pixels. Per column this keeps
 * the first and the last row, each series' lowest and highest, and the rows
 * on either side of a change between known and unknown, so that a gap stays
 * a gap. Drawn as steps, the chart is the same to the pixel, and a render
 * costs about as much with 24 hours in view as with 5 minutes.
 */
import { HistoryWindow } from '../../model/MemoryHistory';

/**
 * Below this many rows per pixel column, every row is drawn, because
 * thinning would save almost nothing.
 */
const ROWS_PER_COLUMN_KEPT_WHOLE = 4;

/**
 * Reduces `win` to the rows that a chart of `columns` pixel columns,
 * spanning `from` to `to` seconds, needs to draw the same picture; returns
 * `win` itself when it has few rows for that width.
 */
export function rowsForChart(
  win: HistoryWindow,
  from: number,
  to: number,
  columns: number
): HistoryWindow {
  const times = win.times;
  const n = times.length;
  const buckets = Math.max(1, Math.floor(columns));
  if (n <= buckets * ROWS_PER_COLUMN_KEPT_WHOLE) {
    return win;
  }
  const series = Array.from(win.series.values());
  const width = to > from ? (to - from) / buckets : 1;
  const keep = new Uint8Array(n);
  const low = new Int32Array(series.length).fill(-1);
  const high = new Int32Array(series.length).fill(-1);
  const keepExtremes = () => {
    for (let s = 0; s < series.length; s++) {
      if (low[s] >= 0) {
        keep[low[s]] = 1;
        keep[high[s]] = 1;
      }
    }
    low.fill(-1);
    high.fill(-1);
  };
  let bucket = -1;
  for (let i = 0; i < n; i++) {
    const b = Math.min(
      buckets - 1,
      Math.max(0, Math.floor((times[i] - from) / width))
    );
    // A new column keeps its first row, and the column before it keeps its
    // last row and each series' extremes.
    if (b !== bucket) {
      if (bucket >= 0) {
        keepExtremes();
        keep[i - 1] = 1;
      }
      bucket = b;
      keep[i] = 1;
    }
    for (let s = 0; s < series.length; s++) {
      const column = series[s];
      const value = column[i];
      const unknown = Number.isNaN(value);
      // Both rows around a change between known and unknown are kept, so that
      // a gap keeps its edges.
      if (i > 0 && unknown !== Number.isNaN(column[i - 1])) {
        keep[i - 1] = 1;
        keep[i] = 1;
      }
      if (!unknown) {
        if (low[s] < 0 || value < column[low[s]]) {
          low[s] = i;
        }
        if (high[s] < 0 || value > column[high[s]]) {
          high[s] = i;
        }
      }
    }
  }
  keepExtremes();
  keep[n - 1] = 1;

  let count = 0;
  for (let i = 0; i < n; i++) {
    count += keep[i];
  }
  const index = new Int32Array(count);
  for (let i = 0, j = 0; i < n; i++) {
    if (keep[i]) {
      index[j++] = i;
    }
  }
  const reduced = new Map<string, Float64Array>();
  for (const [key, column] of win.series) {
    reduced.set(
      key,
      Float64Array.from(index, i => column[i])
    );
  }
  return { times: Float64Array.from(index, i => times[i]), series: reduced };
}

/**
 * Converts a column to what uPlot takes, with null for an unknown value,
 * because uPlot draws a gap for null but not for NaN.
 */
export function toGappedArray(values: Float64Array): (number | null)[] {
  const out = new Array<number | null>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    out[i] = Number.isNaN(v) ? null : v;
  }
  return out;
}
