/**
 * Keeps a notebook's cell history in the browser, so that nothing is lost
 * when the page reloads, when the notebook opens in a second tab, or when
 * the helper is delivered again. This is needed because the kernel keeps
 * only the last records of its own process, and only while that process
 * lives.
 *
 * It listens to a CellHistory and writes what is added, in batches of one
 * write per `flushDelayMs`. It also writes what is cleared, with the clear
 * floor, so that a kernel's `history` reply cannot bring cleared records
 * back after a reload. At start it reads what an earlier page saved into
 * the history. The records go to an ICellRecordStore (IndexedDB in
 * JupyterLab, an in-memory store in tests). A store failure is reported
 * once on the console, and the history carries on in memory.
 */
import { IDisposable } from '@lumino/disposable';

import { CellMemoryRecord } from '../protocol/cell';
import {
  CellHistory,
  CellHistoryChange,
  SavedCellSession
} from '../model/CellHistory';
import { StoreQueue } from './StoreQueue';

/** A record with the series (one run of a kernel process) that it belongs to. */
export interface SavedCellRecord {
  readonly identity: string;
  readonly record: CellMemoryRecord;
}

/** Says that a record series' ids up to `floor` were cleared or evicted (see CellHistory.floors). */
export interface SeriesFloor {
  readonly identity: string;
  readonly floor: number;
  readonly time: number | null;
}

/** Where a notebook's cell records are kept between pages. */
export interface ICellRecordStore {
  /**
   * Loads the notebook's saved sessions, oldest first, with at most
   * `capacity` records in all; the oldest records beyond that are dropped
   * from the store.
   */
  load(notebook: string, capacity: number): Promise<SavedCellSession[]>;
  /** Adds records; a record that is already saved is replaced by the same one. */
  save(notebook: string, records: readonly SavedCellRecord[]): Promise<void>;
  /**
   * Forgets the notebook's records and remembers each series' `floor`, so
   * that the ids up to it stay cleared when the kernel sends them again.
   * Each floor comes with the kernel's `time` of the series' latest record
   * (null when none came), which orders the series.
   */
  clear(notebook: string, floors: readonly SeriesFloor[]): Promise<void>;
  /** Forgets every notebook's records and floors, because the browser is not to keep them any more. */
  forgetAll(): Promise<void>;
}

/** Writes a notebook's cell records to the browser database as they come in. */
export class CellHistoryPersistence implements IDisposable {
  constructor(options: CellHistoryPersistence.IOptions) {
    this._history = options.history;
    this._store = options.store;
    this._notebook = options.notebook;
    this._flushDelayMs = options.flushDelayMs ?? 250;
    this._history.changed.connect(this._onChanged, this);
    const notebook = this._notebook();
    this.ready = this._storeQueue.run(async () => {
      const saved = await this._store.load(notebook, this._history.capacity);
      if (!saved.length || this._isDisposed || notebook !== this._notebook()) {
        return;
      }
      // This code loads with the first saved history, not with the page.
      const { restoreCellSessions } = await import('./cellSessionsRestore');
      if (!this._isDisposed && notebook === this._notebook()) {
        // If the user cleared the history on this page while the records
        // were being read, only their floors are restored, so that the
        // kernel sending them again does not bring them back either.
        restoreCellSessions(
          this._history,
          this._clearedWhileLoading ? saved.map(allCleared) : saved
        );
      }
      this._loaded = true;
    });
  }

  /** Settles when the saved records have been read, or reading them failed. */
  readonly ready: Promise<void>;

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Writes what is waiting now, for example before the page goes away. */
  flush(): Promise<void> {
    this._storeQueue.cancelFlush();
    const batch = this._pending;
    this._pending = [];
    if (!batch.length) {
      return this._storeQueue.settled;
    }
    const notebook = this._notebook();
    return this._storeQueue.run(() => this._store.save(notebook, batch));
  }

  /**
   * Called when the notebook was renamed or moved. It saves the whole
   * history under the new name; the records under the old name stay where
   * they were, as a copy.
   */
  notebookRenamed(): Promise<void> {
    const history = this._history;
    this._pending = history.entries.map(entry => ({
      identity: history.identityOf(entry.session) ?? '',
      record: entry.record
    }));
    return this.flush();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    void this.flush();
    this._isDisposed = true;
    this._history.changed.disconnect(this._onChanged, this);
  }

  private _onChanged(history: CellHistory, change: CellHistoryChange): void {
    if (change.kind === 'added') {
      for (const entry of change.entries) {
        // Save the series identity rather than the session number, because
        // a later restore may renumber the sessions.
        this._pending.push({
          identity: history.identityOf(entry.session) ?? '',
          record: entry.record
        });
      }
      this._storeQueue.flushLater(() => void this.flush(), this._flushDelayMs);
    } else if (change.kind === 'cleared') {
      this._clearedWhileLoading ||= !this._loaded;
      this._storeQueue.cancelFlush();
      this._pending = [];
      const notebook = this._notebook();
      const floors = history.floors();
      void this._storeQueue.run(() => this._store.clear(notebook, floors));
    }
    // A 'restored' change came from the store, so there is nothing to write.
  }

  private _history: CellHistory;
  private _store: ICellRecordStore;
  private _notebook: () => string;
  private _flushDelayMs: number;
  private _pending: SavedCellRecord[] = [];
  private _storeQueue = new StoreQueue('the cell history');
  private _isDisposed = false;
  /** True once the saved records were read, or reading them failed. */
  private _loaded = false;
  /** True when the user cleared the history before the saved records were read. */
  private _clearedWhileLoading = false;
}

/** Returns `session` with every record cleared, that is with its floor at its highest id. */
function allCleared(session: SavedCellSession): SavedCellSession {
  const highest = session.records.reduce(
    (id, r) => Math.max(id, r.record_id),
    session.floor
  );
  return { ...session, floor: highest };
}

/** The types that go with CellHistoryPersistence. */
export namespace CellHistoryPersistence {
  /** The options a new CellHistoryPersistence is constructed with. */
  export interface IOptions {
    history: CellHistory;
    store: ICellRecordStore;
    /** Returns the notebook's current path, which is the store's key. */
    notebook: () => string;
    /** How long added records wait so that they are written together, in ms. */
    flushDelayMs?: number;
  }
}
