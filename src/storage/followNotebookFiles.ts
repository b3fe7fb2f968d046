/**
 * Makes what the browser keeps of a notebook (its cell records and
 * timeline, stored by path) follow the notebook's file as this JupyterLab
 * changes it:
 *
 * - When the file is renamed or moved (a folder of notebooks too), the data
 *   is kept under the new path, and nothing stays under the old one, where a
 *   new notebook would find it. For example, "Untitled.ipynb" is renamed,
 *   and the next new notebook gets that name again.
 * - When the file is deleted, the data is forgotten.
 * - When a file is created (a new notebook, a copy, a new folder), anything
 *   kept under its path belongs to another file that went away in a way this
 *   page did not see (another tab, a terminal). It is forgotten before the
 *   new notebook reads its history, which works because the stores run
 *   their writes in the order asked.
 *
 * An open notebook's own keepers also save what they hold under its new
 * path when it is renamed (SessionPersistence). That writes a second copy
 * of the same records and rows, which the stores keep only once.
 */
import { Contents } from '@jupyterlab/services';
import { ISignal } from '@lumino/signaling';

/** What a store that keeps data by notebook path does as files change. */
export interface IPathKeyedStore {
  /**
   * Called when the file at `from` was renamed `to`. What is kept under it,
   * or under every notebook in it when it is a folder, moves to the new
   * path.
   */
  moveNotebook(from: string, to: string): Promise<void>;
  /** Forgets what is kept under `path`, which is a notebook or a folder of notebooks. */
  forgetNotebook(path: string): Promise<void>;
}

/**
 * Applies the file changes made through this page (the contents manager's
 * `fileChanged`) to `stores`, and returns a disposable that stops this.
 */
export function followNotebookFiles(
  fileChanged: ISignal<unknown, Contents.IChangedArgs>,
  stores: readonly IPathKeyedStore[]
): () => void {
  let warned = false;
  const onChange = (
    _: unknown,
    { type, oldValue, newValue }: Contents.IChangedArgs
  ): void => {
    const from = oldValue?.path;
    const to = newValue?.path;
    for (const store of stores) {
      const done =
        type === 'rename' && from && to && from !== to
          ? store.moveNotebook(from, to)
          : type === 'delete' && from
            ? store.forgetNotebook(from)
            : // Only notebooks and folders can have a history under their path.
              type === 'new' &&
                to &&
                (newValue?.type === 'notebook' ||
                  newValue?.type === 'directory')
              ? store.forgetNotebook(to)
              : null; // A save leaves the path as it was.
      done?.catch(reason => {
        if (!warned) {
          warned = true;
          console.warn(
            "jupyterlab-vram: could not move or forget a notebook's kept history",
            reason
          );
        }
      });
    }
  };
  fileChanged.connect(onChange);
  return () => fileChanged.disconnect(onChange);
}
