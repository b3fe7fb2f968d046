/**
 * Tests the timeline that the browser keeps: MemoryHistory's restore and
 * what it announces, the reading and assembly of chunks,
 * TimelinePersistence between pages (a reload after a restart, two tabs, a
 * process that ended while no page watched), and the IndexedDB store (run
 * on fake-indexeddb, which has the same API).
 */
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import {
  HistoryAddition,
  MemoryHistory,
  SeriesKey
} from '../model/MemoryHistory';
import {
  assembleTimeline,
  parseTimelineChunk,
  storedChunk
} from './savedTimeline';
import { TimelineChunk, TimelineChunkBuilder } from './TimelineChunkBuilder';
import {
  ITimelineStore,
  StoredTimelineChunk,
  TimelinePersistence
} from './TimelinePersistence';
import { IndexedDbCellRecordStore } from './IndexedDbCellRecordStore';
import {
  IndexedDbTimelineStore,
  TIMELINE_MAX_AGE_S
} from './IndexedDbTimelineStore';
import { makeCellRecord } from '../testing/cellFixtures';
import { makeHello, makeSample, MiB, wire } from '../testing/fixtures';

const RSS = SeriesKey.hostRss;
const NOTEBOOK = 'work/train.ipynb';

function rss(history: MemoryHistory): number[] {
  const { series } = history.window(-Infinity);
  return Array.from(series.get(RSS) ?? []);
}

function times(history: MemoryHistory): number[] {
  return Array.from(history.window(-Infinity).times);
}

function chunk(
  identity: string | null,
  rows: [number, number][],
  marks: TimelineChunk['marks'] = []
): TimelineChunk {
  return {
    identity,
    times: Float64Array.from(rows, r => r[0]),
    series: new Map([[RSS, Float64Array.from(rows, r => r[1])]]),
    marks
  };
}

class MemoryTimelineStore implements ITimelineStore {
  chunks: (StoredTimelineChunk & { notebook: string })[] = [];
  saves = 0;
  failing = false;
  async load(notebook: string) {
    if (this.failing) {
      throw new Error('quota exceeded');
    }
    return this.chunks
      .filter(c => c.notebook === notebook)
      .map(({ id, chunk }) => ({ id, chunk }));
  }
  async save(notebook: string, chunk: TimelineChunk) {
    if (this.failing) {
      throw new Error('quota exceeded');
    }
    this.saves++;
    this.chunks.push({ notebook, id: this._next++, chunk });
  }
  async replace(
    notebook: string,
    ids: readonly number[],
    chunk: TimelineChunk
  ) {
    this.chunks = this.chunks.filter(
      c => !(c.notebook === notebook && ids.includes(c.id))
    );
    if (chunk.times.length) {
      this.chunks.push({ notebook, id: this._next++, chunk });
    }
  }
  async forgetAll() {
    this.chunks = [];
  }
  private _next = 1;
}

/** Simulates one page: a model fed the way the connection feeds it, with its timeline kept. */
function page(store: ITimelineStore, capacity = 1000, notebook = NOTEBOOK) {
  const model = new KernelMemoryModel({ historyCapacity: capacity });
  const persistence = new TimelinePersistence({
    model,
    store,
    notebook: () => notebook,
    flushDelayMs: 1
  });
  const hello = (series: string) =>
    model.ingest(wire(makeHello({ record_series: series })));
  const sample = (time: number, rssMiB: number, seq = Math.round(time)) =>
    model.ingest(
      wire(
        makeSample({
          seq,
          time,
          gpus: [],
          host: { ...makeSample().host, rss_bytes: rssMiB * MiB }
        })
      )
    );
  return { model, persistence, hello, sample };
}

const settle = () => new Promise(resolve => setTimeout(resolve, 5));

describe('MemoryHistory.restoreEarlier', () => {
  it('puts the earlier rows and marks in front of those held, with a gap after them', () => {
    const h = new MemoryHistory(100);
    h.append(200, new Map([[RSS, 5]]));
    const restored = h.restoreEarlier({
      times: [100, 110, 110, 150],
      series: new Map([[RSS, [1, 2, NaN, 3]]]),
      marks: [{ time: 110, kind: 'restarted' }]
    });
    expect(restored).toBe(4);
    expect(times(h)).toEqual([100, 110, 110, 150, 150, 200]);
    expect(rss(h)).toEqual([1, 2, NaN, 3, NaN, 5]);
    expect(h.marks).toEqual([{ time: 110, kind: 'restarted' }]);
  });

  it('adds no gap where the earlier rows reach the rows held (one process, seen throughout)', () => {
    const h = new MemoryHistory(100);
    h.append(150, new Map([[RSS, 3]]));
    h.append(160, new Map([[RSS, 4]]));
    h.restoreEarlier({
      times: [100, 150],
      series: new Map([[RSS, [1, 3]]]),
      marks: []
    });
    expect(times(h)).toEqual([100, 150, 160]);
    expect(rss(h)).toEqual([1, 3, 4]);
  });

  it('keeps to its capacity (the newest rows) and is not announced as added', () => {
    const h = new MemoryHistory(3);
    const added: HistoryAddition[] = [];
    h.added.connect((_, a) => added.push(a));
    h.restoreEarlier({
      times: [1, 2, 3, 4],
      series: new Map([[RSS, [1, 2, 3, 4]]]),
      marks: []
    });
    expect(times(h)).toEqual([3, 4, 4]);
    expect(rss(h)).toEqual([3, 4, NaN]);
    expect(added).toEqual([]);
  });

  it("takes its gap out when the helper's rows span it, and keeps it when they start after it", () => {
    const spanned = new MemoryHistory(100);
    spanned.restoreEarlier({
      times: [100, 150],
      series: new Map([[RSS, [1, 3]]]),
      marks: []
    });
    spanned.append(300, new Map([[RSS, 9]])); // live, after the reload
    expect(spanned.merge([140, 150, 200], new Map([[RSS, [2, 3, 4]]]))).toBe(2);
    expect(times(spanned)).toEqual([100, 140, 150, 200, 300]);
    expect(rss(spanned)).toEqual([1, 2, 3, 4, 9]);

    const after = new MemoryHistory(100);
    after.restoreEarlier({
      times: [100, 150],
      series: new Map([[RSS, [1, 3]]]),
      marks: []
    });
    after.merge([200, 250], new Map([[RSS, [4, 5]]]));
    expect(rss(after)).toEqual([1, 3, NaN, 4, 5]);
  });

  it('announces live rows, merged rows and marks', () => {
    const h = new MemoryHistory(100);
    const added: HistoryAddition[] = [];
    h.added.connect((_, a) => added.push(a));
    h.append(10, new Map([[RSS, 1]]));
    h.merge([5, 10], new Map([[RSS, [0.5, 1]]]));
    h.markKernelEnd(20, 'died');
    expect(added.map(a => a.kind)).toEqual([
      'row',
      'rows',
      'row',
      'row',
      'mark'
    ]);
    const merged = added[1] as Extract<HistoryAddition, { kind: 'rows' }>;
    expect(Array.from(merged.rows.times)).toEqual([5]); // only the row that was new
    expect(Array.from(merged.rows.series.get(RSS)!)).toEqual([0.5]);
    expect(added[4]).toEqual({
      kind: 'mark',
      mark: { time: 20, kind: 'died' }
    });
  });
});

describe('saved timeline chunks', () => {
  it('read back only when every part is what a chunk holds', () => {
    const good = storedChunk(
      chunk(
        'run-1',
        [
          [1, 10],
          [2, NaN]
        ],
        [{ time: 2, kind: 'died' }]
      )
    );
    const parsed = parseTimelineChunk(good)!;
    expect(parsed.identity).toBe('run-1');
    expect(Array.from(parsed.series.get(RSS)!)).toEqual([10, NaN]);
    expect(parseTimelineChunk({ ...good, times: [1, 2] })).not.toBeNull(); // Plain arrays parse too.
    expect(parseTimelineChunk({ ...good, times: [1] })).toBeNull(); // The columns have another length.
    expect(
      parseTimelineChunk({ ...good, series: { 'gpu0.free': [1, 2] } })
    ).toBeNull();
    expect(
      parseTimelineChunk({ ...good, marks: [{ time: 2, kind: 'exploded' }] })
    ).toBeNull();
    expect(parseTimelineChunk({ ...good, times: [1, Infinity] })).toBeNull();
    expect(parseTimelineChunk({ ...good, identity: 7 })).toBeNull();
    expect(parseTimelineChunk('chunk')).toBeNull();
  });

  it('assemble into one timeline: in time order, a row two tabs kept once, a gap where the run changed unseen', () => {
    const timeline = assembleTimeline(
      [
        chunk('run-1', [
          [1, 10],
          [2, 11]
        ]),
        chunk('run-1', [
          [2, 11],
          [3, 12]
        ]), // the second tab's copy
        chunk('run-2', [
          [10, 50],
          [11, 51]
        ]),
        chunk(null, [[12, 52]]) // Heard before the page's first hello, so there is no run to compare.
      ],
      100
    );
    expect(Array.from(timeline.times)).toEqual([1, 2, 3, 3, 10, 11, 12]);
    expect(Array.from(timeline.series.get(RSS)!)).toEqual([
      10,
      11,
      12,
      NaN,
      50,
      51,
      52
    ]);
    expect(timeline.identity).toBe('run-2');
  });

  it('assemble to at most the capacity, with the marks of the rows kept', () => {
    const timeline = assembleTimeline(
      [
        chunk(
          'run-1',
          [
            [1, 10],
            [2, 11],
            [2, NaN]
          ],
          [{ time: 2, kind: 'restarted' }]
        ),
        chunk(
          'run-2',
          [
            [5, 20],
            [6, 21]
          ],
          [{ time: 6.5, kind: 'died' }]
        )
      ],
      3
    );
    expect(Array.from(timeline.times)).toEqual([2, 5, 6]);
    expect(Array.from(timeline.series.get(RSS)!)).toEqual([NaN, 20, 21]);
    expect(timeline.marks).toEqual([
      { time: 2, kind: 'restarted' },
      { time: 6.5, kind: 'died' }
    ]);
  });

  it('gather rows with series that come and go into equal columns', () => {
    const builder = new TimelineChunkBuilder();
    builder.addRow(1, new Map([[RSS, 1]]));
    builder.addRow(2, new Map([[SeriesKey.gpu(0, 'allocated'), 7]]));
    builder.addRows([3], new Map([[RSS, [3]]]));
    const taken = builder.take('run');
    expect(Array.from(taken.series.get(RSS)!)).toEqual([1, NaN, 3]);
    expect(Array.from(taken.series.get('gpu0.allocated')!)).toEqual([
      NaN,
      7,
      NaN
    ]);
    expect(builder.isEmpty).toBe(true);
  });
});

describe('TimelinePersistence', () => {
  it('brings the earlier process back after a restart and a reload', async () => {
    const store = new MemoryTimelineStore();
    const first = page(store);
    await first.persistence.ready;
    first.hello('process-1');
    first.sample(100, 300);
    first.sample(101, 310);
    first.model.captureBeforeRestart(102);
    first.model.settleRestart(); // The user restarted, which adds a mark that is written at once.
    first.hello('process-2');
    first.sample(103, 40);
    await settle();
    first.persistence.dispose();

    // After a reload, the kernel's helper knows only process 2.
    const second = page(store);
    second.hello('process-2');
    second.sample(110, 41);
    await second.persistence.ready;
    const h = second.model.history;
    // The mark is at the process's last sample, where its figures end.
    expect(times(h)).toEqual([100, 101, 101, 103, 103, 110]);
    expect(rss(h)).toEqual([300, 310, NaN, 40, NaN, 41].map(v => v * MiB));
    expect(h.marks).toEqual([{ time: 101, kind: 'restarted' }]);
    // The helper's timeline of process 2 spans the page's break, so there is
    // no gap there.
    second.model.recoverTimeline({
      times: [103, 105, 110],
      rss_bytes: [40 * MiB, 45 * MiB, 41 * MiB],
      gpus: []
    });
    expect(rss(h)).toEqual([300, 310, NaN, 40, 45, 41].map(v => v * MiB));
  });

  it('writes rows together after the delay, and a kernel end at once', async () => {
    const store = new MemoryTimelineStore();
    const { model, persistence, hello, sample } = page(store);
    (persistence as any)._flushDelayMs = 60_000;
    await persistence.ready;
    hello('run-1');
    sample(1, 1);
    sample(2, 2);
    await settle();
    expect(store.saves).toBe(0);
    model.noteKernelChange(3);
    await settle();
    expect(store.saves).toBe(1);
    expect(Array.from(store.chunks[0].chunk.times)).toEqual([1, 2, 2]);
    expect(store.chunks[0].chunk.marks).toEqual([{ time: 2, kind: 'changed' }]);
    expect(store.chunks[0].chunk.identity).toBe('run-1');
    persistence.dispose();
  });

  it('names rows by the run they came from, and rows heard before the first hello by the run that follows', async () => {
    const store = new MemoryTimelineStore();
    const { persistence, hello, sample } = page(store);
    (persistence as any)._flushDelayMs = 60_000;
    await persistence.ready;
    sample(1, 1); // Overheard before this page's hello.
    hello('run-1');
    sample(2, 2);
    hello('run-2'); // Another process; the end of the first one was not seen.
    sample(3, 3);
    await persistence.flush();
    expect(
      store.chunks.map(c => [c.chunk.identity, Array.from(c.chunk.times)])
    ).toEqual([
      ['run-1', [1, 2]],
      ['run-2', [3]]
    ]);
    persistence.dispose();
  });

  it('puts one chunk in place of those it read, without rows past the capacity', async () => {
    const store = new MemoryTimelineStore();
    await store.save(
      NOTEBOOK,
      chunk('run-1', [
        [1, 1],
        [2, 2]
      ])
    );
    await store.save(
      NOTEBOOK,
      chunk('run-1', [
        [3, 3],
        [4, 4]
      ])
    );
    await store.save('other.ipynb', chunk('run-9', [[1, 1]]));
    const { persistence } = page(store, 3);
    await persistence.ready;
    const mine = store.chunks.filter(c => c.notebook === NOTEBOOK);
    expect(mine.length).toBe(1);
    expect(Array.from(mine[0].chunk.times)).toEqual([2, 3, 4]);
    expect(store.chunks.filter(c => c.notebook === 'other.ipynb').length).toBe(
      1
    );
    persistence.dispose();
  });

  it('keeps at most about twice the history in the store while the page stays open for days', async () => {
    const factory = new IDBFactory();
    let now = 1_000_000;
    const store = new IndexedDbTimelineStore(factory, () => now);
    const capacity = 60;
    const model = new KernelMemoryModel({ historyCapacity: capacity });
    const persistence = new TimelinePersistence({
      model,
      store,
      notebook: () => NOTEBOOK,
      flushDelayMs: 1
    });
    await persistence.ready;
    model.ingest(wire(makeHello({ record_series: 'run-1' })));
    let mostStored = 0;
    for (let i = 0; i < 2000; i++) {
      now += 1;
      model.ingest(
        wire(
          makeSample({
            seq: i,
            time: now,
            gpus: [],
            host: { ...makeSample().host, rss_bytes: i * MiB }
          })
        )
      );
      if (i % 25 === 0) {
        await persistence.flush();
        const stored = (await store.load(NOTEBOOK)).reduce(
          (n, s) => n + s.chunk.times.length,
          0
        );
        mostStored = Math.max(mostStored, stored);
      }
    }
    await persistence.flush();
    expect(mostStored).toBeLessThanOrEqual(2 * capacity + 25);
    // A page opened now reads the newest rows, as this page holds them.
    const later = new KernelMemoryModel({ historyCapacity: capacity });
    const reopened = new TimelinePersistence({
      model: later,
      store: new IndexedDbTimelineStore(factory, () => now),
      notebook: () => NOTEBOOK
    });
    await reopened.ready;
    const kept = rss(later.history).filter(value => !Number.isNaN(value)); // A gap follows these rows.
    expect(kept.length).toBeGreaterThan(capacity - 5);
    expect(kept).toEqual(rss(model.history).slice(-kept.length));
    expect(kept.slice(-1)).toEqual([1999 * MiB]);
    persistence.dispose();
    reopened.dispose();
  });

  it('keeps the whole timeline under a new name when the notebook is renamed', async () => {
    const store = new MemoryTimelineStore();
    let name = NOTEBOOK;
    const model = new KernelMemoryModel({ historyCapacity: 100 });
    const persistence = new TimelinePersistence({
      model,
      store,
      notebook: () => name,
      flushDelayMs: 1
    });
    await persistence.ready;
    model.ingest(wire(makeHello()));
    model.ingest(wire(makeSample({ seq: 1, time: 5, gpus: [] })));
    await settle();
    name = 'moved.ipynb';
    await persistence.notebookRenamed();
    const moved = store.chunks.filter(c => c.notebook === 'moved.ipynb');
    expect(moved.map(c => Array.from(c.chunk.times))).toEqual([[5]]);
    persistence.dispose();
  });

  it('carries on in memory when the store fails, and says so once on the console', async () => {
    const store = new MemoryTimelineStore();
    store.failing = true;
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    const { model, persistence, hello, sample } = page(store);
    await persistence.ready;
    hello('run-1');
    sample(1, 1);
    await persistence.flush();
    sample(2, 2);
    await persistence.flush();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(times(model.history)).toEqual([1, 2]);
    warn.mockRestore();
    persistence.dispose();
  });
});

describe('IndexedDbTimelineStore', () => {
  it('keeps chunks per notebook, in the order written, with their unknown figures', async () => {
    const store = new IndexedDbTimelineStore(new IDBFactory(), () => 1000);
    await store.save(
      NOTEBOOK,
      chunk(
        'run-1',
        [
          [990, 1],
          [991, NaN]
        ],
        [{ time: 991, kind: 'died' }]
      )
    );
    await store.save('other.ipynb', chunk('run-2', [[995, 5]]));
    await store.save(NOTEBOOK, chunk('run-3', [[992, 3]]));
    const loaded = await store.load(NOTEBOOK);
    expect(loaded.map(s => s.chunk.identity)).toEqual(['run-1', 'run-3']);
    expect(Array.from(loaded[0].chunk.series.get(RSS)!)).toEqual([1, NaN]);
    expect(loaded[0].chunk.marks).toEqual([{ time: 991, kind: 'died' }]);

    await store.replace(
      NOTEBOOK,
      loaded.map(s => s.id),
      chunk('run-3', [[992, 3]])
    );
    expect((await store.load(NOTEBOOK)).length).toBe(1);
    expect((await store.load('other.ipynb')).length).toBe(1);
  });

  it("forgets every notebook's chunks at once", async () => {
    const store = new IndexedDbTimelineStore(new IDBFactory(), () => 1000);
    await store.save(NOTEBOOK, chunk('run-1', [[990, 1]]));
    await store.save('other.ipynb', chunk('run-2', [[995, 5]]));
    await store.forgetAll();
    expect([
      (await store.load(NOTEBOOK)).length,
      (await store.load('other.ipynb')).length
    ]).toEqual([0, 0]);
    await store.save(NOTEBOOK, chunk('run-3', [[996, 6]])); // and keeps what comes after
    expect((await store.load(NOTEBOOK)).map(s => s.chunk.identity)).toEqual([
      'run-3'
    ]);
  });

  it('drops chunks past the age limit, of every notebook, when any notebook is read', async () => {
    let now = 10_000;
    const factory = new IDBFactory();
    const store = new IndexedDbTimelineStore(factory, () => now);
    await store.save('old.ipynb', chunk('run-1', [[now - 10, 1]]));
    await store.save(NOTEBOOK, chunk('run-2', [[now - 5, 2]]));
    now += TIMELINE_MAX_AGE_S + 7;
    await store.save(NOTEBOOK, chunk('run-2', [[now, 3]]));
    expect((await store.load(NOTEBOOK)).map(s => s.chunk.identity)).toEqual([
      'run-2'
    ]);
    const fresh = new IndexedDbTimelineStore(factory, () => now);
    expect(await fresh.load('old.ipynb')).toEqual([]);
  });

  it('drops what does not read as a chunk', async () => {
    const factory = new IDBFactory();
    const store = new IndexedDbTimelineStore(factory, () => 1000);
    await store.save(NOTEBOOK, chunk('run-1', [[999, 1]]));
    const db = await new Promise<IDBDatabase>(resolve => {
      const open = factory.open('jupyterlab-vram');
      open.onsuccess = () => resolve(open.result);
    });
    await new Promise(resolve => {
      const tx = db.transaction('timelineChunks', 'readwrite');
      tx.objectStore('timelineChunks').add({
        notebook: NOTEBOOK,
        end: 999,
        times: 'garbage'
      });
      tx.oncomplete = resolve;
    });
    db.close();
    const again = new IndexedDbTimelineStore(factory, () => 1000);
    expect((await again.load(NOTEBOOK)).length).toBe(1);
  });

  it('opens a database of the version before it (cell records only) and keeps its records', async () => {
    const factory = new IDBFactory();
    await new Promise<void>(resolve => {
      const open = factory.open('jupyterlab-vram', 1);
      open.onupgradeneeded = () => {
        open.result.createObjectStore('cellRecords', {
          keyPath: ['notebook', 'identity', 'recordId']
        });
        open.result.createObjectStore('cellFloors', {
          keyPath: ['notebook', 'identity']
        });
      };
      open.onsuccess = () => {
        const db = open.result;
        const tx = db.transaction('cellRecords', 'readwrite');
        const record = makeCellRecord({ record_id: 1, cell_id: 'c1' });
        tx.objectStore('cellRecords').put({
          notebook: NOTEBOOK,
          identity: 'run-1',
          recordId: 1,
          record: wire(record)
        });
        tx.oncomplete = () => {
          db.close();
          resolve();
        };
      };
    });
    const timelines = new IndexedDbTimelineStore(factory, () => 1000);
    await timelines.save(NOTEBOOK, chunk('run-1', [[999, 1]]));
    expect((await timelines.load(NOTEBOOK)).length).toBe(1);
    const records = await new IndexedDbCellRecordStore(factory).load(
      NOTEBOOK,
      100
    );
    expect(records.map(s => s.records.length)).toEqual([1]);
  });
});
