/**
 * Tests the record that the frontend writes for the cell a kernel died
 * running. It is built from the timeline's figures between the cell's start
 * and the last sample, on the kernel's clock, and is never exact. The Cells
 * tab, the badge, the exports and the notebook's saved figures show it as
 * "kernel died".
 */
import { formatCellBadge, formatOutcome } from '../features/cells/cellFormat';
import {
  readSavedFigures,
  savedFiguresOf,
  summaryOfSaved
} from '../features/cells/cellMetadata';
import { diedCellRecord, DIED_STATUS } from './diedCellRecord';
import { KernelDeathFacts } from './kernelDeath';
import { KernelMemoryModel } from './KernelMemoryModel';
import { MemoryHistory, SeriesKey } from './MemoryHistory';
import {
  makeCpuSample,
  makeHello,
  makeSample,
  MiB,
  wire
} from '../testing/fixtures';

/** The kernel's clock runs 1000 s ahead of this page's (a remote kernel). */
const OFFSET = 1000;

function historyOf(rows: [number, number, number?][]): MemoryHistory {
  const history = new MemoryHistory(100);
  for (const [time, rss, allocated] of rows) {
    const values = new Map([[SeriesKey.hostRss, rss]]);
    if (allocated !== undefined) {
      values.set(SeriesKey.gpu(0, 'allocated'), allocated);
      values.set(SeriesKey.gpu(0, 'reserved'), allocated + 64 * MiB);
    }
    history.append(time, values);
  }
  return history;
}

function deathAt(
  browserTime: number,
  lastSampleTime: number,
  figuresAge: number,
  startedAt?: number
): KernelDeathFacts {
  return {
    status: 'autorestarting',
    time: browserTime,
    lastSample: makeCpuSample({ time: lastSampleTime }),
    figuresAge,
    runningCell: {
      cellId: 'cell-7',
      executionCount: 7,
      confirmed: true,
      startedAt
    },
    oomKillsAfter: null,
    machineOomKillsAfter: null
  };
}

describe('diedCellRecord', () => {
  it('takes the figures from the cell start to the last sample, on the kernel clock', () => {
    const history = historyOf([
      [OFFSET + 100, 100 * MiB, 10 * MiB],
      [OFFSET + 105, 500 * MiB, 300 * MiB],
      [OFFSET + 108, 900 * MiB, 200 * MiB]
    ]);
    // The last sample (kernel time 1108) arrived at page time 108; the
    // death was seen at 110; the cell started at page time 103.
    const record = diedCellRecord(
      deathAt(110, OFFSET + 108, 2, 103),
      history,
      12
    )!;
    expect(record).toMatchObject({
      record_id: 12,
      execution_count: 7,
      cell_id: 'cell-7',
      started: OFFSET + 103,
      duration_s: 7,
      status: DIED_STATUS,
      error: null,
      peak_exact: false,
      oom: null,
      host: {
        rss_before_bytes: 100 * MiB,
        rss_after_bytes: 900 * MiB,
        rss_peak_bytes: 900 * MiB,
        peak_exact: false
      }
    });
    expect(record.gpus).toEqual([
      {
        index: 0,
        allocated_before_bytes: 10 * MiB,
        allocated_after_bytes: 200 * MiB,
        allocated_peak_bytes: 300 * MiB,
        reserved_before_bytes: 74 * MiB,
        reserved_after_bytes: 264 * MiB,
        reserved_peak_bytes: 364 * MiB,
        peak_exact: false
      }
    ]);
  });

  it("skips unknown figures (the kernel mark's gap) and rows after the death", () => {
    const history = historyOf([
      [OFFSET + 100, 100 * MiB],
      [OFFSET + 104, 700 * MiB],
      [OFFSET + 106, NaN]
    ]);
    history.append(OFFSET + 300, new Map([[SeriesKey.hostRss, 5000 * MiB]])); // a later process
    const record = diedCellRecord(
      deathAt(110, OFFSET + 104, 6, 101),
      history,
      1
    )!;
    expect(record.host).toEqual({
      rss_before_bytes: 100 * MiB,
      rss_after_bytes: 700 * MiB,
      rss_peak_bytes: 700 * MiB,
      peak_exact: false
    });
    expect(record.gpus).toEqual([]);
  });

  it('a cell whose start is unknown starts at the death; no running cell, no record', () => {
    const history = historyOf([[OFFSET + 100, 100 * MiB]]);
    const record = diedCellRecord(deathAt(110, OFFSET + 100, 10), history, 1)!;
    expect(record.started).toBe(OFFSET + 110);
    expect(record.duration_s).toBe(0);
    expect(record.host.rss_before_bytes).toBe(100 * MiB);
    expect(
      diedCellRecord(
        { ...deathAt(110, OFFSET + 100, 10), runningCell: null },
        history,
        1
      )
    ).toBeNull();
    // A cell not known by id, as when two cells hold the code that another
    // page sent, would read as a console's, so no record is written.
    const unknownCell = {
      cellId: null,
      executionCount: 7,
      confirmed: true,
      startedAt: 103
    };
    expect(
      diedCellRecord(
        { ...deathAt(110, OFFSET + 100, 10), runningCell: unknownCell },
        history,
        1
      )
    ).toBeNull();
  });

  it('is said as "kernel died", and saved with the notebook as such', () => {
    const history = historyOf([
      [OFFSET + 100, 100 * MiB],
      [OFFSET + 104, 700 * MiB]
    ]);
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeHello()));
    model.cells.add({
      ...diedCellRecord(deathAt(110, OFFSET + 104, 6, 101), history, 1)!
    });
    const summary = model.cells.entries[0].summary;
    expect(summary.outcome).toBe('died');
    expect(formatOutcome(summary)).toBe('kernel died');
    expect(formatCellBadge(summary)).toBe(
      '+600 MiB \u00b7 peak ~700 MiB \u00b7 9.0 s \u00b7 kernel died'
    );
    expect(formatCellBadge(summary, 'binary', false)).toBe(
      '+600 MiB \u00b7 peak ~700 MiB \u00b7 9.0 s'
    );
    const saved = readSavedFigures(
      JSON.parse(JSON.stringify(savedFiguresOf(model.cells.entries[0])))
    );
    expect(saved?.outcome).toBe('died');
    expect(summaryOfSaved(saved!).outcome).toBe('died');
  });
});

describe('KernelMemoryModel: the cell a kernel died running gets a record', () => {
  it("numbered after the dead process's records, in its session", () => {
    const model = new KernelMemoryModel({ historyCapacity: 100 });
    model.ingest(wire(makeHello()));
    const now = Date.now() / 1000;
    model.ingest(wire(makeSample({ time: now - 1 })));
    model.cells.add({
      ...diedCellRecord(deathAt(now, now, 0, now - 5), model.history, 4)!,
      status: 'ok'
    });
    model.noteKernelDeath(
      'autorestarting',
      {
        cellId: 'cell-9',
        executionCount: 9,
        confirmed: true,
        startedAt: now - 2
      },
      now
    );
    const last = model.cells.entries[model.cells.length - 1];
    expect(last.record).toMatchObject({
      record_id: 5,
      cell_id: 'cell-9',
      execution_count: 9,
      status: 'died'
    });
    expect(last.session).toBe(model.cells.session);
    expect(model.cells.latestForCell('cell-9')).toBe(last);
    // The restarted process's hello starts a session of its own.
    model.ingest(wire(makeHello({ record_series: 'series-2', pid: 99 })));
    expect(model.cells.session).toBe(last.session + 1);
  });

  it('none without a helper that said hello (no session to put it in), or without a running cell', () => {
    const model = new KernelMemoryModel({ historyCapacity: 100 });
    model.noteKernelDeath(
      'dead',
      { cellId: 'c', executionCount: 1, confirmed: true, startedAt: 1 },
      2
    );
    expect(model.cells.length).toBe(0);
    model.ingest(wire(makeHello()));
    model.noteKernelDeath('dead', null, 3);
    expect(model.cells.length).toBe(0);
  });
});
