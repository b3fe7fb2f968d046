/**
 * Keeps a notebook's memory timeline in the browser, so that a reloaded
 * page, a second tab, or the notebook opened again tomorrow can chart what
 * earlier kernels held and more than the last hour of the current one. This
 * is needed because the helper keeps only its own process's last samples.
 *
 * It listens to the model's MemoryHistory and writes what is added (live
 * rows, rows merged late, kernel marks) in chunks: one write per
 * `flushDelayMs`, and one at once when a kernel process ends (the mark).
 * Each chunk names the kernel run that its rows came from (the hello's
 * `record_series`), so that the timeline read back breaks where the run
 * changed while no page watched. At start it reads what earlier pages kept
 * into the history (`restoreEarlier`) and replaces the many chunks it read
 * with one, leaving out the oldest rows beyond the history's capacity. It
 * does the same each time it has written as many rows as the history holds,
 * so that a page that stays open for days keeps at most about twice that
 * many rows rather than every sample since it opened; chunks past the
 * store's age limit are deleted at the same time. The chunks go to an
 * ITimelineStore (IndexedDB in JupyterLab, an in-memory store in tests). A
 * store failure is reported once on the console, and the timeline carries
 * on in memory.
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
   * Loads the notebook's chunks in the order they were written. Chunks past
   * the store's age limit, of every notebook, are dropped from the store.
   */
  load(notebook: string): Promise<StoredTimelineChunk[]>;
  save(notebook: string, chunk: TimelineChunk): Promise<void>;
  /** Puts `chunk` in place of the chunks `ids` in one write; an empty chunk just drops them. */
  replace(
    notebook: string,
    ids: readonly number[],
    chunk: TimelineChunk
  ): Promise<void>;
  /** Forgets every notebook's chunks, because the browser is not to keep them any more. */
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

  /** Settles when the kept timeline has been read, or reading it failed. */
  readonly ready: Promise<void>;

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Writes what is waiting now, for example because a kernel ended or the page is going away. */
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
   * Called when the notebook was renamed or moved. It keeps the whole
   * timeline under the new name; the chunks under the old name stay where
   * they were, as a copy.
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
   * Reads the notebook's chunks (the store drops those past its age limit)
   * and puts a single chunk in their place, without the rows beyond the
   * history's capacity. At start (`restore`), what was read also goes into
   * the history.
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
    // The assembling code loads with the first kept timeline, not with the
    // page.
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
        // A process ended, so what it held is written now rather than in a
        // few seconds, when the page may already be gone.
        this._pending.addMark(addition.mark);
        void this.flush();
        return;
    }
    this._storeQueue.flushLater(() => void this.flush(), this._flushDelayMs);
  }

  /**
   * Follows a change of kernel run. What is waiting came from the previous
   * run and is written under that run's name, unless that run was not known
   * yet; in that case the waiting rows were heard before this page's first
   * hello and belong to the new run.
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
  /** The rows written since the chunks were last merged (see `_compact`). */
  private _rowsWritten = 0;
}

/** The types that go with TimelinePersistence. */
export namespace TimelinePersistence {
  /** The options a new TimelinePersistence is constructed with. */
  export interface IOptions {
    model: KernelMemoryModel;
    store: ITimelineStore;
    /** Returns the notebook's current path, which is the store's key. */
    notebook: () => string;
    /** How long added rows wait so that they are written together, in ms. */
    flushDelayMs?: number;
  }
}
