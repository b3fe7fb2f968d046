/**
 * Tests the cell history that the browser keeps: the IndexedDB store (run on
 * fake-indexeddb, which has the same API), CellHistory.restore, and pages
 * that come and go around one kernel (a reload, a second tab, a helper
 * delivered again, a clear).
 */
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';

import { CellHistory, CellHistoryChange } from '../model/CellHistory';
import { CellHistoryPersistence } from './CellHistoryPersistence';
import { restoreCellSessions } from './cellSessionsRestore';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { IndexedDbCellRecordStore } from './IndexedDbCellRecordStore';
import { makeCellRecord, manyRecords } from '../testing/cellFixtures';
import { makeHello, wire } from '../testing/fixtures';

const NOTEBOOK = 'work/train.ipynb';

/** Makes records of a series; later series get later start times. */
function records(count: number, startedBase: number, firstId = 1) {
  return manyRecords(count, firstId).map(r => ({
    ...r,
    started: startedBase + r.record_id
  }));
}

/** Simulates one page: a model fed the way the connection feeds it, with its history kept by persistence. */
function page(store: IndexedDbCellRecordStore, capacity = 10_000) {
  const model = new KernelMemoryModel({
    historyCapacity: 10,
    cellHistoryCapacity: capacity
  });
  const persistence = new CellHistoryPersistence({
    history: model.cells,
    store,
    notebook: () => NOTEBOOK,
    flushDelayMs: 1
  });
  return { model, persistence };
}

function ids(h: CellHistory): string[] {
  return h.entries.map(e => `${e.session}:${e.record.record_id}`);
}

describe('restoreCellSessions', () => {
  it('puts saved sessions before the live one and numbers them in order', () => {
    const h = new CellHistory(100);
    h.startSession('live');
    h.merge(records(2, 3000));
    restoreCellSessions(h, [
      { identity: 'old-1', floor: 0, records: records(2, 1000) },
      { identity: 'old-2', floor: 0, records: records(1, 2000) }
    ]);
    expect(ids(h)).toEqual(['1:1', '1:2', '2:1', '3:1', '3:2']);
    expect(h.session).toBe(3);
    expect(h.identity).toBe('live');
    expect(h.identityOf(1)).toBe('old-1');
    // Live records keep coming into the live session.
    expect(h.add(makeCellRecord({ record_id: 3, cell_id: 'x' }))!.key).toBe(
      '3:3'
    );
  });

  it('merges a saved session of the live series with it, without duplicates, and keeps its floor', () => {
    const h = new CellHistory(100);
    h.startSession('live');
    h.merge(records(3, 1000, 4)); // Ids 4 to 6 arrived live.
    restoreCellSessions(h, [
      { identity: 'live', floor: 2, records: records(5, 1000) }
    ]);
    expect(ids(h)).toEqual(['1:3', '1:4', '1:5', '1:6']);
    expect(h.floor).toBe(2);
    expect(h.merge(records(6, 1000))).toEqual([]); // The kernel's history reply brings nothing new.
  });

  it('before any hello, makes the newest saved session current', () => {
    const h = new CellHistory(100);
    const changes: CellHistoryChange[] = [];
    h.changed.connect((_, c) => changes.push(c));
    restoreCellSessions(h, [
      { identity: 'old', floor: 0, records: records(1, 1000) },
      { identity: 'now', floor: 0, records: records(2, 2000) }
    ]);
    expect(h.identity).toBe('now');
    expect(changes).toEqual([{ kind: 'restored' }]);
    expect(h.latestForCell('cell-2')!.key).toBe('2:2');
  });

  it('gives a session whose records were all cleared no number, unless it is the current one', () => {
    const h = new CellHistory(100);
    h.startSession('live');
    restoreCellSessions(h, [
      { identity: 'cleared', floor: 9, records: [] },
      { identity: 'old', floor: 0, records: records(1, 1000) }
    ]);
    expect(ids(h)).toEqual(['1:1']);
    expect(h.session).toBe(2);
  });

  it('keeps to its capacity, dropping the oldest', () => {
    const h = new CellHistory(3);
    h.startSession('live');
    h.merge(records(2, 3000));
    restoreCellSessions(h, [
      { identity: 'old', floor: 0, records: records(4, 1000) }
    ]);
    expect(ids(h)).toEqual(['1:4', '2:1', '2:2']);
  });
});

describe('IndexedDbCellRecordStore', () => {
  it('saves, loads by series in time order, and keeps one copy of a record saved twice', async () => {
    const store = new IndexedDbCellRecordStore(new IDBFactory());
    await store.save(
      NOTEBOOK,
      records(2, 2000).map(record => ({ identity: 'b', record }))
    );
    await store.save(
      NOTEBOOK,
      records(3, 1000).map(record => ({ identity: 'a', record }))
    );
    await store.save(
      NOTEBOOK,
      records(3, 1000).map(record => ({ identity: 'a', record }))
    );
    await store.save(
      'other.ipynb',
      records(1, 500).map(record => ({ identity: 'z', record }))
    );
    const saved = await store.load(NOTEBOOK, 100);
    expect(
      saved.map(s => [s.identity, s.records.map(r => r.record_id)])
    ).toEqual([
      ['a', [1, 2, 3]],
      ['b', [1, 2]]
    ]);
  });

  it('clears one notebook, remembers the floor of its live series', async () => {
    const store = new IndexedDbCellRecordStore(new IDBFactory());
    await store.save(
      NOTEBOOK,
      records(3, 1000).map(record => ({ identity: 'a', record }))
    );
    await store.save(
      'other.ipynb',
      records(1, 500).map(record => ({ identity: 'z', record }))
    );
    await store.clear(NOTEBOOK, [{ identity: 'a', floor: 3, time: 1003 }]);
    expect(await store.load(NOTEBOOK, 100)).toEqual([
      { identity: 'a', floor: 3, records: [] }
    ]);
    expect((await store.load('other.ipynb', 100))[0].records).toHaveLength(1);
  });

  it("forgets every notebook's records and floors at once", async () => {
    const store = new IndexedDbCellRecordStore(new IDBFactory());
    await store.save(
      NOTEBOOK,
      records(3, 1000).map(record => ({ identity: 'a', record }))
    );
    await store.clear(NOTEBOOK, [{ identity: 'a', floor: 3, time: 1003 }]);
    await store.save(
      'other.ipynb',
      records(1, 500).map(record => ({ identity: 'z', record }))
    );
    await store.forgetAll();
    expect(await store.load(NOTEBOOK, 100)).toEqual([]);
    expect(await store.load('other.ipynb', 100)).toEqual([]);
  });

  it('drops the oldest records beyond the capacity, from the store too', async () => {
    const store = new IndexedDbCellRecordStore(new IDBFactory());
    await store.save(
      NOTEBOOK,
      records(5, 1000).map(record => ({ identity: 'a', record }))
    );
    expect(
      (await store.load(NOTEBOOK, 2))[0].records.map(r => r.record_id)
    ).toEqual([4, 5]);
    expect(
      (await store.load(NOTEBOOK, 100))[0].records.map(r => r.record_id)
    ).toEqual([4, 5]);
  });

  it('drops saved records that do not read as records (another version, a hand edit)', async () => {
    const factory = new IDBFactory();
    const store = new IndexedDbCellRecordStore(factory);
    const bad = {
      ...makeCellRecord({ record_id: 2 }),
      started: 'yesterday'
    } as any;
    await store.save(NOTEBOOK, [
      { identity: 'a', record: makeCellRecord({ record_id: 1 }) },
      { identity: 'a', record: bad }
    ]);
    const saved = await store.load(NOTEBOOK, 100);
    expect(saved[0].records.map(r => r.record_id)).toEqual([1]);
  });
});

describe('CellHistoryPersistence: pages around one kernel', () => {
  it('a reload shows the earlier kernel processes, and the live one once', async () => {
    const store = new IndexedDbCellRecordStore(new IDBFactory());
    const first = page(store);
    await first.persistence.ready;
    first.model.ingest(wire(makeHello({ record_series: 'process-1' })));
    first.model.ingest(wire({ type: 'cells', records: records(3, 1000) }));
    first.model.ingest(wire(makeHello({ record_series: 'process-2', pid: 2 }))); // restarted
    first.model.ingest(wire({ type: 'cells', records: records(2, 2000) }));
    await first.persistence.flush();
    first.persistence.dispose();

    const second = page(store);
    await second.persistence.ready;
    expect(ids(second.model.cells)).toEqual([
      '1:1',
      '1:2',
      '1:3',
      '2:1',
      '2:2'
    ]);
    // The same kernel process answers the reconnect, and its history reply
    // repeats its records. Nothing is doubled, and the earlier process stays
    // earlier.
    second.model.ingest(
      wire(makeHello({ record_series: 'process-2', pid: 2 }))
    );
    second.model.cells.merge(records(2, 2000));
    second.model.ingest(wire({ type: 'cells', records: records(1, 2000, 3) }));
    expect(ids(second.model.cells)).toEqual([
      '1:1',
      '1:2',
      '1:3',
      '2:1',
      '2:2',
      '2:3'
    ]);
  });

  it('a second tab sees what the first saved, and both keep writing one history', async () => {
    const store = new IndexedDbCellRecordStore(new IDBFactory());
    const tabA = page(store);
    await tabA.persistence.ready;
    tabA.model.ingest(wire(makeHello()));
    tabA.model.ingest(wire({ type: 'cells', records: records(2, 1000) }));
    await tabA.persistence.flush();
    const tabB = page(store);
    await tabB.persistence.ready;
    expect(tabB.model.cells.length).toBe(2);
    // The helper sends each record to every comm, so both tabs save it.
    for (const tab of [tabA, tabB]) {
      tab.model.ingest(wire(makeHello()));
      tab.model.ingest(wire({ type: 'cells', records: records(1, 1000, 3) }));
      await tab.persistence.flush();
    }
    const saved = await store.load(NOTEBOOK, 100);
    expect(saved.map(s => s.records.length)).toEqual([3]);
  });

  it('a helper delivered anew into the same process starts a new series; the old records stay', async () => {
    const store = new IndexedDbCellRecordStore(new IDBFactory());
    const { model, persistence } = page(store);
    await persistence.ready;
    model.ingest(wire(makeHello({ record_series: 'bundle-1' })));
    model.ingest(wire({ type: 'cells', records: records(2, 1000) }));
    model.ingest(wire(makeHello({ record_series: 'bundle-2' }))); // same pid
    model.ingest(wire({ type: 'cells', records: records(1, 2000) }));
    expect(ids(model.cells)).toEqual(['1:1', '1:2', '2:1']);
    await persistence.flush();
    expect((await store.load(NOTEBOOK, 100)).map(s => s.identity)).toEqual([
      'bundle-1',
      'bundle-2'
    ]);
  });

  it('a cleared history stays cleared after a reload, though the kernel sends its records again', async () => {
    const store = new IndexedDbCellRecordStore(new IDBFactory());
    const first = page(store);
    await first.persistence.ready;
    first.model.ingest(wire(makeHello()));
    first.model.ingest(wire({ type: 'cells', records: records(3, 1000) }));
    await first.persistence.flush();
    first.model.cells.clear();
    await first.persistence.flush();

    const second = page(store);
    await second.persistence.ready;
    second.model.ingest(wire(makeHello()));
    second.model.cells.merge(records(4, 1000)); // the kernel's history reply
    expect(ids(second.model.cells)).toEqual(['1:4']);
  });

  it('a kernel the notebook switches back to takes up its own series: cleared records stay out, new ones join it', async () => {
    const store = new IndexedDbCellRecordStore(new IDBFactory());
    const { model, persistence } = page(store);
    await persistence.ready;
    model.ingest(wire(makeHello({ record_series: 'k1' })));
    model.ingest(wire({ type: 'cells', records: records(3, 1000) }));
    model.cells.clear();
    model.ingest(wire(makeHello({ record_series: 'k2', pid: 2 }))); // Change Kernel…
    model.ingest(
      wire({
        type: 'cells',
        records: records(1, 2000).map(r => ({ ...r, cell_id: 'cell-1' }))
      })
    );
    model.ingest(wire(makeHello({ record_series: 'k1' }))); // …and back to the first, still running
    model.cells.merge(records(3, 1000)); // its history reply
    expect(ids(model.cells)).toEqual(['2:1']);
    model.ingest(
      wire({
        type: 'cells',
        records: records(1, 1000, 4).map(r => ({ ...r, cell_id: 'cell-1' }))
      })
    );
    expect(ids(model.cells)).toEqual(['1:4', '2:1']);
    expect(model.cells.latestForCell('cell-1')!.key).toBe('1:4'); // The run just made, not k2's.
    // The history is cleared again while k2 is away. After a reload, the
    // cleared records of neither series come back.
    model.cells.clear();
    await persistence.flush();
    const reloaded = page(store);
    await reloaded.persistence.ready;
    reloaded.model.ingest(wire(makeHello({ record_series: 'k1' })));
    reloaded.model.cells.merge(records(4, 1000));
    reloaded.model.ingest(wire(makeHello({ record_series: 'k2', pid: 2 })));
    reloaded.model.cells.merge(records(1, 2000));
    expect(ids(reloaded.model.cells)).toEqual([]);
  });

  it("a cleared series of a kernel whose clock is behind the browser's stays before the later one after a reload", async () => {
    const store = new IndexedDbCellRecordStore(new IDBFactory());
    const browserNow = Date.now() / 1000;
    const kernelNow = browserNow - 600; // A remote kernel whose clock is ten minutes behind.
    const first = page(store);
    await first.persistence.ready;
    first.model.ingest(wire(makeHello({ record_series: 'x' })));
    first.model.ingest(
      wire({ type: 'cells', records: records(2, kernelNow - 100) })
    );
    first.model.cells.clear();
    first.model.ingest(wire(makeHello({ record_series: 'y', pid: 2 }))); // restarted
    first.model.ingest(wire({ type: 'cells', records: records(2, kernelNow) }));
    await first.persistence.flush();

    const second = page(store);
    await second.persistence.ready;
    expect(second.model.cells.identity).toBe('y');
    second.model.ingest(wire(makeHello({ record_series: 'y', pid: 2 })));
    second.model.cells.merge(records(2, kernelNow)); // the live kernel's history reply
    expect(ids(second.model.cells)).toEqual(['1:1', '1:2']); // Each record once; series x, all cleared, gets no session.
  });

  it('saved records that arrive after the live ones still go first', async () => {
    const store = new IndexedDbCellRecordStore(new IDBFactory());
    await store.save(
      NOTEBOOK,
      records(2, 1000).map(record => ({ identity: 'old', record }))
    );
    const { model, persistence } = page(store);
    // The hello and a record come in before the store has answered.
    model.ingest(wire(makeHello({ record_series: 'new' })));
    model.ingest(wire({ type: 'cells', records: records(1, 2000) }));
    await persistence.ready;
    expect(ids(model.cells)).toEqual(['1:1', '1:2', '2:1']);
    expect(model.cells.identity).toBe('new');
  });

  it('a clear made while the history was not kept holds for every series when keeping starts again', async () => {
    const store = new IndexedDbCellRecordStore(new IDBFactory());
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    const keep = () =>
      new CellHistoryPersistence({
        history: model.cells,
        store,
        notebook: () => NOTEBOOK,
        flushDelayMs: 1
      });
    let keeper = keep();
    await keeper.ready;
    model.ingest(wire(makeHello({ record_series: 'p1' })));
    model.ingest(wire({ type: 'cells', records: records(3, 1000) }));
    model.ingest(wire(makeHello({ record_series: 'p2', pid: 2 }))); // a restart
    model.ingest(wire({ type: 'cells', records: records(2, 2000) }));
    await keeper.flush();
    keeper.dispose(); // "Remember the cell history" switched off...
    model.cells.clear(); // ...the user clears...
    keeper = keep(); // ...and switches it on again
    await keeper.ready;
    expect(model.cells.length).toBe(0);
    keeper.dispose();
  });

  it('a clear made while the saved history is read keeps it out', async () => {
    const store = new IndexedDbCellRecordStore(new IDBFactory());
    const first = page(store);
    await first.persistence.ready;
    first.model.ingest(wire(makeHello({ record_series: 'p1' })));
    first.model.ingest(wire({ type: 'cells', records: records(3, 1000) }));
    await first.persistence.flush();
    first.persistence.dispose();
    // After a reload, the restarted kernel speaks, and the user clears the
    // history before the browser's store has answered.
    const reloaded = page(store);
    reloaded.model.ingest(wire(makeHello({ record_series: 'p2', pid: 2 })));
    reloaded.model.ingest(wire({ type: 'cells', records: records(2, 2000) }));
    reloaded.model.cells.clear();
    await reloaded.persistence.ready;
    expect(reloaded.model.cells.length).toBe(0);
    // The kernel sending the earlier process's records again (for a second
    // tab) does not bring them back either.
    await reloaded.persistence.flush();
    const third = page(store);
    await third.persistence.ready;
    expect(third.model.cells.length).toBe(0);
    reloaded.persistence.dispose();
    third.persistence.dispose();
  });

  it('carries on in memory when the browser refuses to store, and says so once', async () => {
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    const broken = {
      load: () => Promise.reject(new Error('QuotaExceededError')),
      save: () => Promise.reject(new Error('QuotaExceededError')),
      clear: () => Promise.reject(new Error('QuotaExceededError')),
      forgetAll: () => Promise.reject(new Error('QuotaExceededError'))
    };
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    const persistence = new CellHistoryPersistence({
      history: model.cells,
      store: broken,
      notebook: () => NOTEBOOK,
      flushDelayMs: 1
    });
    await persistence.ready;
    model.ingest(wire(makeHello()));
    model.ingest(wire({ type: 'cells', records: records(2, 1000) }));
    await persistence.flush();
    expect(model.cells.length).toBe(2);
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });
});
