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

/**
 * Follow the files changed through this page (`fileChanged`, the contents
 * manager's) in `stores`; returns what stops it.
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
              : null; // a save: the path stays what it was
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
