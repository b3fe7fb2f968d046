/**
 * Tests that what the browser keeps by notebook path follows the files. The
 * real IndexedDB stores (run on fake-indexeddb, which has the same API) are
 * driven by the contents manager's file changes.
 */
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { Contents } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';

import { followNotebookFiles, IPathKeyedStore } from './followNotebookFiles';
import { TimelineChunkBuilder } from './TimelineChunkBuilder';
import { SeriesKey } from '../model/MemoryHistory';
import { IndexedDbCellRecordStore } from './IndexedDbCellRecordStore';
import { IndexedDbTimelineStore } from './IndexedDbTimelineStore';
import { manyRecords } from '../testing/cellFixtures';

const RSS = SeriesKey.hostRss;

function setUp() {
  const factory = new IDBFactory();
  const records = new IndexedDbCellRecordStore(factory);
  const timeline = new IndexedDbTimelineStore(factory, () => 1000);
  const fileChanged = new Signal<unknown, Contents.IChangedArgs>({});
  const stop = followNotebookFiles(fileChanged, [records, timeline]);
  const emit = (change: Contents.IChangedArgs) => fileChanged.emit(change);
  /** Keeps three records, a clear floor and a timeline chunk under `notebook`. */
  const keep = async (notebook: string) => {
    await records.save(
      notebook,
      manyRecords(3).map(record => ({ identity: 'run-1', record }))
    );
    await records.clear(notebook, [{ identity: 'run-1', floor: 2, time: 2 }]); // records 1-2 cleared...
    await records.save(
      notebook,
      manyRecords(3)
        .slice(2)
        .map(record => ({ identity: 'run-1', record }))
    ); // ...3 not
    const builder = new TimelineChunkBuilder();
    builder.addRow(990, new Map([[RSS, 1]]));
    await timeline.save(notebook, builder.take('run-1'));
  };
  /** Returns what is kept under `notebook`: [series, floor, record ids] and the timeline's row count. */
  const kept = async (notebook: string) => ({
    cells: (await records.load(notebook, 100)).map(s => [
      s.identity,
      s.floor,
      s.records.map(r => r.record_id)
    ]),
    rows: (await timeline.load(notebook)).reduce(
      (n, s) => n + s.chunk.times.length,
      0
    )
  });
  /** Waits until the stores' writes that a change started are done. */
  const settle = async () => {
    await records.load('-', 1);
    await timeline.load('-');
  };
  return { records, timeline, stop, emit, keep, kept, settle };
}

const NOTHING = { cells: [], rows: 0 };
const KEPT = { cells: [['run-1', 2, [3]]], rows: 1 };

describe('followNotebookFiles', () => {
  it("moves a renamed notebook's records, clear floor and timeline: a new notebook named as the old one finds none", async () => {
    const { emit, keep, kept, settle } = setUp();
    await keep('Untitled.ipynb');
    await keep('Untitled1.ipynb');
    emit({
      type: 'rename',
      oldValue: { path: 'Untitled.ipynb' },
      newValue: { path: 'train.ipynb' }
    });
    await settle();
    expect(await kept('train.ipynb')).toEqual(KEPT);
    expect(await kept('Untitled.ipynb')).toEqual(NOTHING);
    expect(await kept('Untitled1.ipynb')).toEqual(KEPT); // Another notebook, whose path merely starts the same way.
  });

  it('moves every notebook in a renamed folder, and none in a folder whose name only starts alike', async () => {
    const { emit, keep, kept, settle } = setUp();
    await keep('work/a.ipynb');
    await keep('work/deep/b.ipynb');
    await keep('work2/c.ipynb');
    emit({
      type: 'rename',
      oldValue: { path: 'work' },
      newValue: { path: 'runs/work' }
    });
    await settle();
    expect(await kept('runs/work/a.ipynb')).toEqual(KEPT);
    expect(await kept('runs/work/deep/b.ipynb')).toEqual(KEPT);
    expect(await kept('work/a.ipynb')).toEqual(NOTHING);
    expect(await kept('work2/c.ipynb')).toEqual(KEPT);
  });

  it('forgets a deleted notebook, and the notebooks of a deleted folder', async () => {
    const { emit, keep, kept, settle } = setUp();
    await keep('old.ipynb');
    await keep('dir/x.ipynb');
    await keep('keep.ipynb');
    emit({ type: 'delete', oldValue: { path: 'old.ipynb' }, newValue: null });
    emit({ type: 'delete', oldValue: { path: 'dir' }, newValue: null });
    await settle();
    expect(await kept('old.ipynb')).toEqual(NOTHING);
    expect(await kept('dir/x.ipynb')).toEqual(NOTHING);
    expect(await kept('keep.ipynb')).toEqual(KEPT);
  });

  it('forgets what another file left under the path of a notebook made anew', async () => {
    const { emit, keep, kept, settle } = setUp();
    await keep('Untitled.ipynb'); // Deleted from a terminal, so this page never heard of it.
    emit({
      type: 'new',
      oldValue: null,
      newValue: { path: 'Untitled.ipynb', type: 'notebook' }
    });
    await settle();
    expect(await kept('Untitled.ipynb')).toEqual(NOTHING);
  });

  it('leaves the stores alone for a save, a plain file made, and once stopped', () => {
    const calls: string[] = [];
    const store: IPathKeyedStore = {
      moveNotebook: async (from, to) => void calls.push(`move ${from} ${to}`),
      forgetNotebook: async path => void calls.push(`forget ${path}`)
    };
    const fileChanged = new Signal<unknown, Contents.IChangedArgs>({});
    const stop = followNotebookFiles(fileChanged, [store]);
    fileChanged.emit({
      type: 'save',
      oldValue: null,
      newValue: { path: 'a.ipynb', type: 'notebook' }
    });
    fileChanged.emit({
      type: 'new',
      oldValue: null,
      newValue: { path: 'notes.txt', type: 'file' }
    });
    fileChanged.emit({
      type: 'rename',
      oldValue: { path: 'a.ipynb' },
      newValue: { path: 'a.ipynb' }
    });
    expect(calls).toEqual([]);
    fileChanged.emit({
      type: 'delete',
      oldValue: { path: 'a.ipynb' },
      newValue: null
    });
    stop();
    fileChanged.emit({
      type: 'delete',
      oldValue: { path: 'b.ipynb' },
      newValue: null
    });
    expect(calls).toEqual(['forget a.ipynb']);
  });
});
