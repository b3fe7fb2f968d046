/**
 * The cell records of every notebook, kept in the browser's IndexedDB
 * (./vramDatabase.ts).
 *
 * Records are keyed by [notebook path, record series, record id], so a
 * record saved twice (by two tabs of one notebook) is kept once. The clear
 * floors are stored beside them, keyed by [notebook path, record series].
 * What is read back is checked like a kernel message (`parseCellRecord`),
 * because the database may hold records written by another version of the
 * extension; records that do not parse are dropped.
 */
import type { CellMemoryRecord } from '../protocol/cell';
import { loadMessageReaders } from '../protocol/messageReaders';
import { SavedCellSession } from '../model/CellHistory';
import {
  ICellRecordStore,
  SavedCellRecord,
  SeriesFloor
} from './CellHistoryPersistence';
import type { IPathKeyedStore } from './followNotebookFiles';
import {
  CELL_FLOORS as FLOORS,
  CELL_RECORDS as RECORDS,
  done,
  pathRanges,
  renamedPath,
  request,
  VramDatabase
} from './vramDatabase';

interface RecordRow {
  notebook: string;
  identity: string;
  recordId: number;
  record: unknown;
}

interface FloorRow {
  notebook: string;
  identity: string;
  floor: number;
  /**
   * The kernel's time (Unix seconds) of the series' latest record when the
   * history was cleared. It uses the same clock as the records' `started`,
   * which for a remote kernel may differ from this browser's; when no record
   * came, it is this browser's time. It places a session without records
   * among the sessions that have some.
   */
  time: number;
}

/** The cell record store kept in the browser's IndexedDB. */
export class IndexedDbCellRecordStore
  implements ICellRecordStore, IPathKeyedStore
{
  constructor(factory: IDBFactory = indexedDB) {
    this._database = new VramDatabase(factory);
  }

  async load(notebook: string, capacity: number): Promise<SavedCellSession[]> {
    // Before the transaction, which would end at an await of anything else.
    const { parseCellRecord } = await loadMessageReaders();
    const db = await this._open();
    const tx = db.transaction([RECORDS, FLOORS], 'readwrite');
    const [rows, floors] = await Promise.all([
      request<RecordRow[]>(
        tx.objectStore(RECORDS).getAll(notebookRange(notebook))
      ),
      request<FloorRow[]>(
        tx.objectStore(FLOORS).getAll(notebookRange(notebook))
      )
    ]);
    type Session = {
      identity: string;
      floor: number;
      first: number;
      records: CellMemoryRecord[];
    };
    const sessions = new Map<string, Session>();
    const sessionOf = (identity: string): Session => {
      let session = sessions.get(identity);
      if (!session) {
        session = { identity, floor: 0, first: Infinity, records: [] };
        sessions.set(identity, session);
      }
      return session;
    };
    for (const floor of floors) {
      if (
        typeof floor.floor === 'number' &&
        typeof floor.identity === 'string'
      ) {
        const session = sessionOf(floor.identity);
        session.floor = Math.max(session.floor, floor.floor);
        session.first = Math.min(session.first, Number(floor.time) || Infinity);
      }
    }
    const kept: { row: RecordRow; record: CellMemoryRecord }[] = [];
    for (const row of rows) {
      const parsed = parseCellRecord(row.record, 'saved record');
      if ('record' in parsed && typeof row.identity === 'string') {
        kept.push({ row, record: parsed.record });
      }
    }
    // Beyond the capacity, the oldest records are dropped, from the store too.
    const excess = kept.length - Math.max(0, capacity);
    if (excess > 0) {
      kept.sort(
        (a, b) =>
          a.record.started - b.record.started || a.row.recordId - b.row.recordId
      );
      const store = tx.objectStore(RECORDS);
      for (const { row } of kept.splice(0, excess)) {
        store.delete([row.notebook, row.identity, row.recordId]);
      }
    }
    for (const { row, record } of kept) {
      const session = sessionOf(row.identity);
      session.records.push(record);
      session.first = Math.min(session.first, record.started);
    }
    await done(tx);
    return Array.from(sessions.values())
      .sort((a, b) => a.first - b.first)
      .map(s => ({
        identity: s.identity,
        floor: s.floor,
        records: s.records.sort((a, b) => a.record_id - b.record_id)
      }));
  }

  async save(
    notebook: string,
    records: readonly SavedCellRecord[]
  ): Promise<void> {
    if (!records.length) {
      return;
    }
    const db = await this._open();
    const tx = db.transaction(RECORDS, 'readwrite');
    const store = tx.objectStore(RECORDS);
    for (const { identity, record } of records) {
      const row: RecordRow = {
        notebook,
        identity,
        recordId: record.record_id,
        record
      };
      store.put(row);
    }
    await done(tx);
  }

  async clear(notebook: string, floors: readonly SeriesFloor[]): Promise<void> {
    const db = await this._open();
    const tx = db.transaction([RECORDS, FLOORS], 'readwrite');
    tx.objectStore(RECORDS).delete(notebookRange(notebook));
    const store = tx.objectStore(FLOORS);
    store.delete(notebookRange(notebook));
    for (const { identity, floor, time } of floors) {
      const row: FloorRow = {
        notebook,
        identity,
        floor,
        time: time ?? Date.now() / 1000
      };
      store.put(row);
    }
    await done(tx);
  }

  async moveNotebook(from: string, to: string): Promise<void> {
    const db = await this._open();
    const tx = db.transaction([RECORDS, FLOORS], 'readwrite');
    for (const name of [RECORDS, FLOORS]) {
      const store = tx.objectStore(name);
      for (const range of pathRanges(from, 'key prefix')) {
        const rows = await request<{ notebook: string }[]>(store.getAll(range));
        store.delete(range);
        for (const row of rows) {
          store.put({ ...row, notebook: renamedPath(row.notebook, from, to) });
        }
      }
    }
    await done(tx);
  }

  async forgetNotebook(path: string): Promise<void> {
    const db = await this._open();
    const tx = db.transaction([RECORDS, FLOORS], 'readwrite');
    for (const range of pathRanges(path, 'key prefix')) {
      tx.objectStore(RECORDS).delete(range);
      tx.objectStore(FLOORS).delete(range);
    }
    await done(tx);
  }

  async forgetAll(): Promise<void> {
    const db = await this._open();
    const tx = db.transaction([RECORDS, FLOORS], 'readwrite');
    tx.objectStore(RECORDS).clear();
    tx.objectStore(FLOORS).clear();
    await done(tx);
  }

  private _open(): Promise<IDBDatabase> {
    return this._database.open();
  }

  private _database: VramDatabase;
}

/** A key range of every key that starts with the notebook's path; it relies on arrays sorting after strings. */
function notebookRange(notebook: string): IDBKeyRange {
  return IDBKeyRange.bound([notebook], [notebook, []]);
}
