/**
 * Tests for the rows that a chart draws of a long window: far fewer rows
 * that give the same picture to the pixel, because each pixel column keeps
 * its first and last row, every series' lowest and highest, and the edges of
 * every gap.
 */
import { rowsForChart } from './chartRows';
import { HistoryWindow } from '../../model/MemoryHistory';

function win(
  times: number[],
  columns: { [key: string]: number[] }
): HistoryWindow {
  return {
    times: Float64Array.from(times),
    series: new Map(
      Object.entries(columns).map(([k, v]) => [k, Float64Array.from(v)])
    )
  };
}

/**
 * The lowest and highest known value of `key` in each of `columns` columns;
 * a column without one gets Infinity and -Infinity.
 */
function extremes(
  w: HistoryWindow,
  key: string,
  from: number,
  to: number,
  columns: number
) {
  const out: [number, number][] = Array.from({ length: columns }, () => [
    Infinity,
    -Infinity
  ]);
  const values = w.series.get(key)!;
  w.times.forEach((t, i) => {
    const b = Math.min(
      columns - 1,
      Math.floor((t - from) / ((to - from) / columns))
    );
    if (!Number.isNaN(values[i])) {
      out[b][0] = Math.min(out[b][0], values[i]);
      out[b][1] = Math.max(out[b][1], values[i]);
    }
  });
  return out;
}

describe('rowsForChart', () => {
  it('gives a short window back as it is', () => {
    const w = win([1, 2, 3], { a: [1, 2, 3] });
    expect(rowsForChart(w, 0, 3, 300)).toBe(w);
  });

  it("keeps every column's first, last, lowest and highest row of every series, and far fewer rows", () => {
    const n = 100_000;
    const times = Array.from({ length: n }, (_, i) => i);
    const a = times.map(
      i => Math.sin(i / 50) * 1000 + (i % 997 === 0 ? 5000 : 0)
    ); // Every 997th row is a spike one row wide, which its column must keep.
    const b = times.map(i => (i * 7919) % 1000);
    const w = win(times, { a, b });
    const drawn = rowsForChart(w, 0, n, 300);
    expect(drawn.times.length).toBeLessThan(300 * 10);
    expect(extremes(drawn, 'a', 0, n, 300)).toEqual(
      extremes(w, 'a', 0, n, 300)
    );
    expect(extremes(drawn, 'b', 0, n, 300)).toEqual(
      extremes(w, 'b', 0, n, 300)
    );
    expect(drawn.times[0]).toBe(0);
    expect(drawn.times[drawn.times.length - 1]).toBe(n - 1);
    // Rows stay in time order, each with its own values.
    for (let i = 1; i < drawn.times.length; i++) {
      expect(drawn.times[i]).toBeGreaterThan(drawn.times[i - 1]);
    }
    const at = drawn.times.indexOf(997 * 50);
    expect(drawn.series.get('a')![at]).toBe(a[997 * 50]);
  });

  it('keeps a gap a gap: the rows on both sides of every change between known and unknown', () => {
    const n = 10_000;
    const times = Array.from({ length: n }, (_, i) => i);
    // A gap of three rows lies inside one column.
    const a = times.map(i => (i >= 4000 && i < 4003 ? NaN : 1));
    const drawn = rowsForChart(win(times, { a }), 0, n, 100);
    const values = drawn.series.get('a')!;
    const gapAt = Array.from(drawn.times).indexOf(4000);
    expect(Array.from(drawn.times.slice(gapAt - 1, gapAt + 1))).toEqual([
      3999, 4000
    ]);
    expect(Number.isNaN(values[gapAt])).toBe(true);
    expect(Array.from(drawn.times)).toContain(4003);
    expect(values[Array.from(drawn.times).indexOf(4003)]).toBe(1);
  });
});
