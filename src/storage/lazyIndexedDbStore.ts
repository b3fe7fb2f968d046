/**
 * The IndexedDB stores, each loaded on its first use, so that a page that
 * never opens a notebook does not pay for them at start-up.
 */
import type { ICellRecordStore } from './CellHistoryPersistence';
import type { ITimelineStore } from './TimelinePersistence';
import type { IPathKeyedStore } from './followNotebookFiles';

/** Returns a cell record store whose IndexedDB code loads on its first use. */
export function lazyIndexedDbStore(): ICellRecordStore & IPathKeyedStore {
  let store: Promise<ICellRecordStore & IPathKeyedStore> | null = null;
  const get = () =>
    (store ??= import('./IndexedDbCellRecordStore').then(
      module => new module.IndexedDbCellRecordStore()
    ));
  return {
    load: async (notebook, capacity) => (await get()).load(notebook, capacity),
    save: async (notebook, records) => (await get()).save(notebook, records),
    clear: async (notebook, floors) => (await get()).clear(notebook, floors),
    forgetAll: async () => (await get()).forgetAll(),
    moveNotebook: async (from, to) => (await get()).moveNotebook(from, to),
    forgetNotebook: async path => (await get()).forgetNotebook(path)
  };
}

/** Returns a timeline store whose IndexedDB code loads on its first use. */
export function lazyIndexedDbTimelineStore(): ITimelineStore & IPathKeyedStore {
  let store: Promise<ITimelineStore & IPathKeyedStore> | null = null;
  const get = () =>
    (store ??= import('./IndexedDbTimelineStore').then(
      module => new module.IndexedDbTimelineStore()
    ));
  return {
    load: async notebook => (await get()).load(notebook),
    save: async (notebook, chunk) => (await get()).save(notebook, chunk),
    replace: async (notebook, ids, chunk) =>
      (await get()).replace(notebook, ids, chunk),
    forgetAll: async () => (await get()).forgetAll(),
    moveNotebook: async (from, to) => (await get()).moveNotebook(from, to),
    forgetNotebook: async path => (await get()).forgetNotebook(path)
  };
}
