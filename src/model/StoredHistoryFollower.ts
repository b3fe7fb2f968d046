/**
 * What the browser keeps of a notebook (its cell records and timeline, by
 * path) follows the notebook's file as this JupyterLab changes it:
 *
 * - renamed or moved (a folder of notebooks too): kept under the new path,
 *   and nothing stays under the old one, where a new notebook would find it
 *   ("Untitled.ipynb" renamed, and the next new notebook is named so again);
 * - deleted: forgotten;
 * - made anew (a new notebook, a copy, a new folder): anything kept under its
 *   path is another file's, left there when that file went in a way this
 *   page did not see (another tab, a terminal): forgotten before the new
 *   notebook reads its history (the stores' writes run in the order asked).
 *
 * An open notebook's own keepers also save what they hold under its new path
 * when it is renamed (SessionPersistence): a second copy of the same records
 * and rows, which the stores keep once.
 */
import { Contents } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';
import { ISignal } from '@lumino/signaling';

/** What a store that keeps things by notebook path does as files change. */
export interface IPathKeyedStore {
  /**
   * The file at `from` was renamed `to`: what is kept under it, or under
   * every notebook in it where it is a folder, is kept under the new path.
   */
  moveNotebook(from: string, to: string): Promise<void>;
  /** Forget what is kept under `path` (a notebook, or every notebook in a folder). */
  forgetNotebook(path: string): Promise<void>;
}

export class StoredHistoryFollower implements IDisposable {
  constructor(options: StoredHistoryFollower.IOptions) {
    this._fileChanged = options.fileChanged;
    this._stores = options.stores;
    this._fileChanged.connect(this._onFileChanged, this);
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._fileChanged.disconnect(this._onFileChanged, this);
  }

  private _onFileChanged(_: unknown, change: Contents.IChangedArgs): void {
    const from = change.oldValue?.path;
    const to = change.newValue?.path;
    switch (change.type) {
      case 'rename':
        if (from && to && from !== to) {
          this._each(store => store.moveNotebook(from, to));
        }
        break;
      case 'delete':
        if (from) {
          this._each(store => store.forgetNotebook(from));
        }
        break;
      case 'new':
        // Only notebooks and folders can have a history under their path.
        if (to && (change.newValue?.type === 'notebook' || change.newValue?.type === 'directory')) {
          this._each(store => store.forgetNotebook(to));
        }
        break;
      default:
        break; // a save: the path stays what it was
    }
  }

  private _each(change: (store: IPathKeyedStore) => Promise<void>): void {
    for (const store of this._stores) {
      change(store).catch(reason => {
        if (!this._warned) {
          this._warned = true;
          console.warn('jupyterlab-vram: could not move or forget a notebook\'s kept history', reason);
        }
      });
    }
  }

  private _fileChanged: ISignal<unknown, Contents.IChangedArgs>;
  private _stores: readonly IPathKeyedStore[];
  private _isDisposed = false;
  private _warned = false;
}

export namespace StoredHistoryFollower {
  export interface IOptions {
    /** The contents manager's `fileChanged`: every file change made through this page. */
    fileChanged: ISignal<unknown, Contents.IChangedArgs>;
    stores: readonly IPathKeyedStore[];
  }
}
