/**
 * Keeps one notebook session's data in the browser between pages: its cell
 * history (CellHistoryPersistence) and its memory timeline
 * (TimelinePersistence), each while its setting asks for it. The settings
 * can change at any time (`update`), and a keeper is then started or
 * stopped at once rather than at the next page. Both keepers follow the
 * notebook when it is renamed.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { IDisposable } from '@lumino/disposable';

import {
  CellHistoryPersistence,
  ICellRecordStore
} from './CellHistoryPersistence';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { ITimelineStore, TimelinePersistence } from './TimelinePersistence';

/** Which of the session's histories the browser should keep now. */
export interface KeptHistories {
  cells: boolean;
  timeline: boolean;
}

/**
 * Saves and restores one notebook session's records and timeline in the browser
 * database.
 */
export class SessionPersistence implements IDisposable {
  constructor(options: SessionPersistence.IOptions) {
    this._sessionContext = options.sessionContext;
    this._model = options.model;
    this._recordStore = options.recordStore;
    this._timelineStore = options.timelineStore;
    this._sessionContext.propertyChanged.connect(this._onProperty, this);
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Keeps what `wanted` asks for from this call on; a part whose store is
   * missing is not kept. Settles when any keeper stopped here has written
   * what it held.
   */
  update(wanted: KeptHistories): Promise<void> {
    if (this._isDisposed) {
      return Promise.resolve();
    }
    const written: Promise<void>[] = [];
    const notebook = () => this._sessionContext.path;
    if (wanted.cells && this._recordStore && !this._cells) {
      this._cells = new CellHistoryPersistence({
        history: this._model.cells,
        store: this._recordStore,
        notebook
      });
    } else if (!wanted.cells && this._cells) {
      written.push(this._cells.flush());
      this._cells.dispose();
      this._cells = null;
    }
    if (wanted.timeline && this._timelineStore && !this._timeline) {
      this._timeline = new TimelinePersistence({
        model: this._model,
        store: this._timelineStore,
        notebook
      });
    } else if (!wanted.timeline && this._timeline) {
      written.push(this._timeline.flush());
      this._timeline.dispose();
      this._timeline = null;
    }
    return Promise.all(written).then(() => undefined);
  }

  /** Writes what is waiting now, because the page is going away. */
  flush(): void {
    void this._cells?.flush();
    void this._timeline?.flush();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._sessionContext.propertyChanged.disconnect(this._onProperty, this);
    this._cells?.dispose();
    this._timeline?.dispose();
    this._cells = null;
    this._timeline = null;
  }

  private _onProperty(_: unknown, property: string): void {
    if (property === 'path') {
      void this._cells?.notebookRenamed();
      void this._timeline?.notebookRenamed();
    }
  }

  private _sessionContext: Pick<ISessionContext, 'path' | 'propertyChanged'>;
  private _model: KernelMemoryModel;
  private _recordStore: ICellRecordStore | null;
  private _timelineStore: ITimelineStore | null;
  private _cells: CellHistoryPersistence | null = null;
  private _timeline: TimelinePersistence | null = null;
  private _isDisposed = false;
}

/** The types that go with SessionPersistence. */
export namespace SessionPersistence {
  /** The options a new SessionPersistence is constructed with. */
  export interface IOptions {
    sessionContext: Pick<ISessionContext, 'path' | 'propertyChanged'>;
    model: KernelMemoryModel;
    recordStore: ICellRecordStore | null;
    timelineStore: ITimelineStore | null;
  }
}
