/**
 * The IndexedDB record store, loaded with its first use: a page that never
 * opens a notebook does not pay for it at start-up.
 */
import type { ICellRecordStore } from '../model/CellHistoryPersistence';

export function lazyIndexedDbStore(): ICellRecordStore {
  let store: Promise<ICellRecordStore> | null = null;
  const get = () =>
    (store ??= import('./IndexedDbCellRecordStore').then(
      module => new module.IndexedDbCellRecordStore()
    ));
  return {
    load: async (notebook, capacity) => (await get()).load(notebook, capacity),
    save: async (notebook, records) => (await get()).save(notebook, records),
    clear: async (notebook, floor) => (await get()).clear(notebook, floor)
  };
}
