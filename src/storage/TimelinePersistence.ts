/**
 * Keeps a notebook's memory timeline in the browser, so that a reloaded
 * page, a second tab or the notebook opened again tomorrow charts what the
 * kernels before the current one held, and more than the last hour of the
 * current one: the helper keeps only its own process's last samples.
 *
 * It listens to the model's MemoryHistory and writes what is added (live
 * rows, rows merged late, kernel marks) in chunks: one write per
 * `flushDelayMs`, and one at once when a kernel process ends (the mark).
 * Each chunk names the kernel run its rows came from (the hello's
 * `record_series`), so that the timeline read back breaks where the run
 * changed unseen. At start it reads what earlier pages kept into the
 * history (`restoreEarlier`), and puts one chunk in place of the many it
 * read, the oldest beyond the history's capacity left out; it does the same
 * each time it has written as many rows as the history holds, so that a
 * page open for days keeps at most about twice that, not every sample since
 * it opened (and chunks past the store's age limit go then too). Where the
 * chunks go is an ITimelineStore (IndexedDB in JupyterLab, in-memory in
 * tests). Store failures are reported once on the console and the timeline
 * carries on in memory.
 */
import { IDisposable } from '@lumino/disposable';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { HistoryAddition, MemoryHistory } from '../model/MemoryHistory';
import { TimelineChunk, TimelineChunkBuilder } from './TimelineChunkBuilder';
import { StoreQueue } from './StoreQueue';

/** A chunk as stored, with the id the store gave it. */
export interface StoredTimelineChunk {
  id: number;
  chunk: TimelineChunk;
}

/** Where notebooks' timeline chunks are kept between pages. */
export interface ITimelineStore {
  /**
   * The notebook's chunks, in the order they were written. Chunks past the
   * store's age limit (of every notebook) are dropped from it.
   */
  load(notebook: string): Promise<StoredTimelineChunk[]>;
  save(notebook: string, chunk: TimelineChunk): Promise<void>;
  /** Put `chunk` in place of the chunks `ids`, in one write (an empty chunk: drop them). */
  replace(
    notebook: string,
    ids: readonly number[],
    chunk: TimelineChunk
  ): Promise<void>;
  /** Forget every notebook's chunks (the browser is no longer to keep them). */
  forgetAll(): Promise<void>;
}

/** Writes a notebook's timeline to the browser database in chunks. */
export class TimelinePersistence implements IDisposable {
  constructor(options: TimelinePersistence.IOptions) {
    this._model = options.model;
    this._store = options.store;
    this._notebook = options.notebook;
    this._flushDelayMs = options.flushDelayMs ?? 10_000;
    this._identity = this._model.cells.identity;
    this._model.history.added.connect(this._onAdded, this);
    const notebook = this._notebook();
    this.ready = this._storeQueue.run(() => this._compact(notebook, true));
  }

  /** Settles when the kept timeline was read (or reading failed). */
  readonly ready: Promise<void>;

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Write what is waiting now (a kernel ended, the page goes away). */
  flush(): Promise<void> {
    this._storeQueue.cancelFlush();
    if (this._pending.isEmpty) {
      return this._storeQueue.settled;
    }
    const chunk = this._pending.take(this._identity);
    const notebook = this._notebook();
    const saved = this._storeQueue.run(() => this._store.save(notebook, chunk));
    this._rowsWritten += chunk.times.length;
    if (this._rowsWritten < this._model.history.capacity) {
      return saved;
    }
    this._rowsWritten = 0;
    return this._storeQueue.run(() => this._compact(notebook, false));
  }

  /**
   * The notebook was renamed or moved: keep the whole timeline under its
   * new name (the old one's chunks stay where they were, as a copy).
   */
  notebookRenamed(): Promise<void> {
    const history = this._model.history;
    const { times, series } = history.window(-Infinity);
    this._pending.addRows(times, series);
    for (const mark of history.marks) {
      this._pending.addMark(mark);
    }
    return this.flush();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    void this.flush();
    this._isDisposed = true;
    this._model.history.added.disconnect(this._onAdded, this);
  }

  /**
   * Read the notebook's chunks (the store drops those past its age limit)
   * and put one in their place, without the rows past the history's
   * capacity; at start (`restore`), what was read goes into the history.
   */
  private async _compact(notebook: string, restore: boolean): Promise<void> {
    const stored = await this._store.load(notebook);
    if (
      (restore && this._isDisposed) ||
      notebook !== this._notebook() ||
      !stored.length
    ) {
      return;
    }
    // Assembling loads with the first kept timeline, not with the page.
    const { assembleTimeline } = await import('./savedTimeline');
    if ((restore && this._isDisposed) || notebook !== this._notebook()) {
      return;
    }
    const chunks = stored.map(s => s.chunk);
    const timeline = assembleTimeline(chunks, this._model.history.capacity);
    if (restore) {
      this._model.restoreTimeline(timeline);
    }
    const rows = chunks.reduce((n, chunk) => n + chunk.times.length, 0);
    if (stored.length > 1 || rows > timeline.times.length) {
      await this._store.replace(
        notebook,
        stored.map(s => s.id),
        timeline
      );
    }
  }

  private _onAdded(_: MemoryHistory, addition: HistoryAddition): void {
    this._followRun();
    switch (addition.kind) {
      case 'row':
        this._pending.addRow(addition.time, addition.values);
        break;
      case 'rows':
        this._pending.addRows(addition.rows.times, addition.rows.series);
        break;
      case 'mark':
        // A process ended: what it held is kept now, not in a few seconds.
        this._pending.addMark(addition.mark);
        void this.flush();
        return;
    }
    this._storeQueue.flushLater(() => void this.flush(), this._flushDelayMs);
  }

  /**
   * The model now hears another kernel run: what is waiting came from the
   * one before (kept under its name), unless that was not known yet (then
   * it is this one's: rows heard before this page's first hello).
   */
  private _followRun(): void {
    const identity = this._model.cells.identity;
    if (identity === this._identity) {
      return;
    }
    if (this._identity !== null) {
      void this.flush();
    }
    this._identity = identity;
  }

  private _model: KernelMemoryModel;
  private _store: ITimelineStore;
  private _notebook: () => string;
  private _flushDelayMs: number;
  private _identity: string | null;
  private _pending = new TimelineChunkBuilder();
  private _storeQueue = new StoreQueue('the memory timeline');
  private _isDisposed = false;
  /** Rows written since the chunks were last put together (`_compact`). */
  private _rowsWritten = 0;
}

/** The types that go with TimelinePersistence. */
export namespace TimelinePersistence {
  /** The options a new TimelinePersistence is constructed with. */
  export interface IOptions {
    model: KernelMemoryModel;
    store: ITimelineStore;
    /** The notebook's path now (the store's key). */
    notebook: () => string;
    /** How long added rows wait to be written together (ms). */
    flushDelayMs?: number;
  }
}
