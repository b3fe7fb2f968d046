/**
 * Tests for the text of a cell run: the badge line, the Cells table's
 * short forms, the tooltip, and the warning level.
 */
import {
  describeCellRecord,
  formatCellBadge,
  formatDelta,
  formatDuration,
  formatDurationShort,
  formatOutcomeShort
} from './cellFormat';
import {
  cellTotalsOf,
  cellWarningLevel,
  summarizeCellRecord
} from '../../model/cellFigures';
import {
  makeCellGpu,
  makeCellRecord,
  makeRamRecord,
  oomRecord
} from '../../testing/cellFixtures';
import { GiB, MiB } from '../../testing/fixtures';

const badge = (r: ReturnType<typeof makeCellRecord>) =>
  formatCellBadge(summarizeCellRecord(r));

describe('cell figures and badge text', () => {
  it('uses GPU figures when there are any: delta summed over devices, peak max', () => {
    const r = makeCellRecord({
      gpus: [
        makeCellGpu({
          index: 0,
          allocated_before_bytes: 1 * GiB,
          allocated_after_bytes: 1.7 * GiB,
          allocated_peak_bytes: 3.4 * GiB
        }),
        makeCellGpu({
          index: 1,
          allocated_before_bytes: 0,
          allocated_after_bytes: 0.5 * GiB,
          allocated_peak_bytes: 1 * GiB
        })
      ]
    });
    const s = summarizeCellRecord(r);
    expect(s.source).toBe('gpu');
    expect(s.deltaBytes).toBe(1.2 * GiB);
    expect(s.peakBytes).toBe(3.4 * GiB);
    expect(badge(r)).toBe('+1.2 GiB \u00b7 peak 3.4 GiB \u00b7 2.1 s');
  });

  it('falls back to RAM figures without GPU figures', () => {
    const r = makeRamRecord();
    const s = summarizeCellRecord(r);
    expect(s.source).toBe('ram');
    expect(s.deltaBytes).toBe(20 * MiB);
    expect(badge(r)).toBe('+20 MiB \u00b7 peak 600 MiB \u00b7 2.1 s');
    expect(describeCellRecord(r, s)).toContain('RAM');
    expect(
      describeCellRecord(
        makeCellRecord(),
        summarizeCellRecord(makeCellRecord())
      )
    ).toContain('GPU memory');
  });

  it('shows the host RAM a GPU cell moved by a GiB or more beside its GPU figures', () => {
    const host = (before: number, after: number, peak: number) => ({
      rss_before_bytes: before,
      rss_after_bytes: after,
      rss_peak_bytes: peak,
      peak_exact: true
    });
    // A DataFrame loaded in a CUDA notebook shows what stays.
    const loaded = makeCellRecord({ host: host(2 * GiB, 22 * GiB, 23 * GiB) });
    expect(badge(loaded)).toBe(
      '+1 GiB \u00b7 peak 3 GiB \u00b7 RAM +20 GiB \u00b7 2.1 s'
    );
    // Data that was read, converted and dropped shows what came and went.
    const transient = makeCellRecord({
      host: host(2 * GiB, 2 * GiB + 100 * MiB, 14 * GiB)
    });
    expect(badge(transient)).toBe(
      '+1 GiB \u00b7 peak 3 GiB \u00b7 RAM peak +12 GiB \u00b7 2.1 s'
    );
    expect(summarizeCellRecord(transient).ramAlongside).toEqual({
      deltaBytes: 100 * MiB,
      peakRiseBytes: 12 * GiB
    });
    // Below a GiB, or when unknown, the GPU figures stand alone.
    expect(badge(makeCellRecord())).toBe(
      '+1 GiB \u00b7 peak 3 GiB \u00b7 2.1 s'
    );
    const unknown = makeCellRecord({
      host: {
        rss_before_bytes: null,
        rss_after_bytes: 30 * GiB,
        rss_peak_bytes: 30 * GiB,
        peak_exact: false
      }
    });
    expect(summarizeCellRecord(unknown).ramAlongside).toBeNull();
    // A RAM cell's figures are RAM already.
    expect(
      summarizeCellRecord(
        makeRamRecord({ host: host(1 * GiB, 21 * GiB, 21 * GiB) })
      ).ramAlongside
    ).toBeNull();
    // And its RAM peak warns against the machine's RAM.
    const totals = { gpuTotals: new Map([[0, 80 * GiB]]), hostTotal: 24 * GiB };
    expect(
      cellWarningLevel(loaded, summarizeCellRecord(loaded), totals, 90)
    ).toBe('warning');
    expect(
      cellWarningLevel(transient, summarizeCellRecord(transient), totals, 90)
    ).toBe('normal');
  });

  it('marks an approximate peak with ~', () => {
    const r = makeCellRecord({
      peak_exact: false,
      gpus: [makeCellGpu({ peak_exact: false })]
    });
    expect(badge(r)).toContain('peak ~3 GiB');
    expect(describeCellRecord(r, summarizeCellRecord(r))).toContain(
      'approximate'
    );
    const ram = makeRamRecord({
      host: {
        rss_before_bytes: 1,
        rss_after_bytes: 1,
        rss_peak_bytes: 2 * GiB,
        peak_exact: false
      }
    });
    expect(badge(ram)).toContain('peak ~2 GiB');
  });

  it('says error, interrupted and out of memory', () => {
    expect(badge(oomRecord())).toMatch(/ \u00b7 out of memory$/);
    expect(badge(makeCellRecord({ status: 'interrupted' }))).toMatch(
      / \u00b7 interrupted$/
    );
    const err = makeCellRecord({
      status: 'error',
      error: { type: 'ValueError', message_head: 'bad', out_of_memory: false }
    });
    expect(badge(err)).toMatch(/ \u00b7 error$/);
    const text = describeCellRecord(err, summarizeCellRecord(err));
    expect(text).toContain('Status: error \u2014 ValueError: bad');
    expect(
      describeCellRecord(oomRecord(), summarizeCellRecord(oomRecord()))
    ).toContain('(out of memory)');
  });

  it('says why the peak of a cell the kernel died running is approximate', () => {
    const died = makeCellRecord({
      status: 'died',
      peak_exact: false,
      gpus: [makeCellGpu({ peak_exact: false })]
    });
    const text = describeCellRecord(died, summarizeCellRecord(died));
    expect(text).toContain('the kernel died before the cell could be measured');
    expect(text).not.toContain('peak counters not reset');
  });

  it('says just under a second as a second, not as 1000 ms', () => {
    expect(formatDuration(0.9994)).toBe('999 ms');
    expect(formatDuration(0.9996)).toBe('1.0 s');
    expect(formatDuration(1)).toBe('1.0 s');
  });

  it("writes the Cells table's durations without spaces from a minute on", () => {
    expect(formatDurationShort(0.119)).toBe('119 ms');
    expect(formatDurationShort(59.9)).toBe('59 s');
    expect(formatDurationShort(60)).toBe('1m00s');
    expect(formatDurationShort(192)).toBe('3m12s');
    expect(formatDurationShort(599)).toBe('9m59s');
    expect(formatDurationShort(754)).toBe('12m');
    expect(formatDurationShort(3599)).toBe('59m');
    expect(formatDurationShort(3900)).toBe('1h05m');
    expect(formatDurationShort(35999)).toBe('9h59m');
    expect(formatDurationShort(100 * 3600)).toBe('100h');
    for (const s of [0.999, 9.9, 59, 599, 3599, 35999, 99 * 3600]) {
      expect(formatDurationShort(s).length).toBeLessThanOrEqual(6);
    }
    expect(formatDurationShort(null)).toBe('\u2014');
  });

  it("fits the Cells table's status in five characters, the tooltip having the rest", () => {
    const short = (r: ReturnType<typeof makeCellRecord>) =>
      formatOutcomeShort(summarizeCellRecord(r));
    const err = makeCellRecord({
      status: 'error',
      error: {
        type: 'ZeroDivisionError',
        message_head: 'x',
        out_of_memory: false
      }
    });
    expect(short(makeCellRecord())).toBe('ok');
    expect(short(err)).toBe('error');
    expect(short(oomRecord())).toBe('OOM');
    expect(short(makeCellRecord({ status: 'interrupted' }))).toBe('intr.');
    expect(short(makeCellRecord({ status: 'died' }))).toBe('died');
    for (const r of [
      err,
      oomRecord(),
      makeCellRecord({ status: 'interrupted' }),
      makeCellRecord({ status: 'died' })
    ]) {
      expect(short(r).length).toBeLessThanOrEqual(5);
    }
  });

  it('gives the per-device breakdown and RSS in the tooltip', () => {
    const r = makeCellRecord();
    const text = describeCellRecord(r, summarizeCellRecord(r));
    expect(text).toContain(
      'GPU 0: allocated 1 GiB \u2192 2 GiB (peak 3 GiB); reserved 2 GiB \u2192 4 GiB'
    );
    expect(text).toContain('Host RSS: 500 MiB \u2192 520 MiB (peak 600 MiB)');
  });

  it('shows unknown as a dash, not zero', () => {
    const r = makeCellRecord({
      gpus: [
        makeCellGpu({
          allocated_before_bytes: null,
          allocated_peak_bytes: null
        })
      ]
    });
    expect(badge(r)).toBe('\u2014 \u00b7 peak \u2014 \u00b7 2.1 s');
  });

  it('formats deltas and durations', () => {
    expect(formatDelta(0)).toBe('\u00b10 B');
    expect(formatDelta(-512 * MiB)).toBe('-512 MiB');
    expect(formatDelta(null)).toBe('\u2014');
    expect(formatDuration(0.1234)).toBe('123 ms');
    expect(formatDuration(2.19)).toBe('2.1 s');
    expect(formatDuration(42.7)).toBe('42 s');
    expect(formatDuration(192)).toBe('3 min 12 s');
    expect(formatDuration(3900)).toBe('1 h 5 min');
  });

  it('warns when a peak is above the threshold share of its device', () => {
    const totals = { gpuTotals: new Map([[0, 4 * GiB]]), hostTotal: 1 * GiB };
    const r = makeCellRecord(); // Its peak of 3 GiB is 75 % of 4 GiB.
    const s = summarizeCellRecord(r);
    expect(cellWarningLevel(r, s, totals, 85)).toBe('normal');
    expect(cellWarningLevel(r, s, totals, 70)).toBe('warning');
    const ram = makeRamRecord(); // Its peak is 600 MiB of 1 GiB.
    expect(cellWarningLevel(ram, summarizeCellRecord(ram), totals, 50)).toBe(
      'warning'
    );
    expect(
      cellWarningLevel(
        ram,
        summarizeCellRecord(ram),
        { ...totals, hostTotal: null },
        50
      )
    ).toBe('normal');
    expect(
      cellWarningLevel(
        oomRecord(),
        summarizeCellRecord(oomRecord()),
        totals,
        99
      )
    ).toBe('warning');
  });

  it('reads device totals from the model', () => {
    const totals = cellTotalsOf({
      hello: {
        devices: [
          { index: 0, total_bytes: 8 },
          { index: 1, total_bytes: null }
        ]
      },
      latest: {
        host: { total_bytes: 64 },
        gpus: [{ index: 1, total_bytes: 16 }]
      }
    });
    expect(Array.from(totals.gpuTotals)).toEqual([
      [0, 8],
      [1, 16]
    ]);
    expect(totals.hostTotal).toBe(64);
  });
});
