/**
 * The extension's IndexedDB database (one per origin, shared by every tab
 * of that origin) and the small promise wrappers its stores use. IndexedDB
 * is used rather than localStorage because a notebook's records and
 * timeline take megabytes, and IndexedDB writes without blocking the page.
 *
 * Version 1 held the cell records and their clear floors; version 2 adds
 * the timeline chunks.
 */
const DB_NAME = 'jupyterlab-vram';
const DB_VERSION = 2;

/** The name of the object store of the cell records. */
export const CELL_RECORDS = 'cellRecords';
/**
 * The name of the object store of each record series' clear floor, which is
 * the id up to which its records were cleared or evicted.
 */
export const CELL_FLOORS = 'cellFloors';
/** The name of the object store of the timeline chunks. */
export const TIMELINE_CHUNKS = 'timelineChunks';

/** A connection that reopens after another tab upgraded the schema. */
export class VramDatabase {
  constructor(factory: IDBFactory = indexedDB) {
    this._factory = factory;
  }

  open(): Promise<IDBDatabase> {
    if (!this._db) {
      this._db = new Promise<IDBDatabase>((resolve, reject) => {
        const open = this._factory.open(DB_NAME, DB_VERSION);
        open.onupgradeneeded = () => {
          const db = open.result;
          if (!db.objectStoreNames.contains(CELL_RECORDS)) {
            db.createObjectStore(CELL_RECORDS, {
              keyPath: ['notebook', 'identity', 'recordId']
            });
          }
          if (!db.objectStoreNames.contains(CELL_FLOORS)) {
            db.createObjectStore(CELL_FLOORS, {
              keyPath: ['notebook', 'identity']
            });
          }
          if (!db.objectStoreNames.contains(TIMELINE_CHUNKS)) {
            const chunks = db.createObjectStore(TIMELINE_CHUNKS, {
              keyPath: 'id',
              autoIncrement: true
            });
            chunks.createIndex('notebook', 'notebook');
            chunks.createIndex('end', 'end');
          }
        };
        open.onsuccess = () => {
          const db = open.result;
          // Another tab is upgrading the schema. Close this connection to
          // let it proceed; the next use opens the database again.
          db.onversionchange = () => {
            db.close();
            this._db = null;
          };
          resolve(db);
        };
        open.onerror = () => reject(open.error);
        open.onblocked = () =>
          reject(new Error('the browser database is blocked by another tab'));
      });
      this._db.catch(() => (this._db = null));
    }
    return this._db;
  }

  private _factory: IDBFactory;
  private _db: Promise<IDBDatabase> | null = null;
}

/** Wraps an IndexedDB request in a promise of its result. */
export function request<T>(req: IDBRequest): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    req.onsuccess = () => resolve(req.result as T);
    req.onerror = () => reject(req.error);
  });
}

/**
 * Wraps an IndexedDB transaction in a promise that settles when it completes or
 * fails.
 */
export function done(tx: IDBTransaction): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () =>
      reject(tx.error ?? new Error('the browser database aborted a write'));
  });
}

/**
 * Returns the notebook paths under `path`: the path itself (a notebook) or,
 * for a folder, every path that starts with it and a slash. They are
 * returned as two key ranges over a notebook-path key or key prefix. `rest`
 * says what follows the path in a key; the record store's keys continue
 * after the path, and `[]` sorts after anything that can follow there.
 */
export function pathRanges(
  path: string,
  rest: 'path' | 'key prefix'
): IDBKeyRange[] {
  const folder = path.endsWith('/') ? path : `${path}/`;
  // '\uffff' sorts after every code unit a path can hold after the slash.
  return rest === 'path'
    ? [IDBKeyRange.only(path), IDBKeyRange.bound(folder, `${folder}\uffff`)]
    : [
        IDBKeyRange.bound([path], [path, []]),
        IDBKeyRange.bound([folder], [`${folder}\uffff`, []])
      ];
}

/** Returns the new path of `notebook` once the file or folder `from` is renamed `to`. */
export function renamedPath(
  notebook: string,
  from: string,
  to: string
): string {
  return notebook === from
    ? to
    : to.replace(/\/$/, '') + notebook.slice(from.replace(/\/$/, '').length);
}
