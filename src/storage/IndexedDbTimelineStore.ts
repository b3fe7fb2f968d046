/**
 * Every notebook's timeline chunks, kept in the browser's IndexedDB
 * (./vramDatabase.ts). Each chunk is one database row, keyed by an id that
 * the database assigns, with the notebook's path and the time of its newest
 * row beside it. Both are indexed: the path because a notebook's chunks are
 * read together, and the time because chunks past the age limit are
 * deleted, whatever their notebook, whenever any notebook's chunks are read.
 */
import { ITimelineStore, StoredTimelineChunk } from './TimelinePersistence';
import type { IPathKeyedStore } from './followNotebookFiles';
import { parseTimelineChunk, storedChunk } from './savedTimeline';
import type { TimelineChunk } from './TimelineChunkBuilder';
import {
  done,
  pathRanges,
  renamedPath,
  request,
  TIMELINE_CHUNKS,
  VramDatabase
} from './vramDatabase';

/** Chunks whose newest row is older than this (a notebook not opened for a week) are deleted. */
export const TIMELINE_MAX_AGE_S = 7 * 24 * 3600;

/** The timeline store kept in the browser's IndexedDB. */
export class IndexedDbTimelineStore implements ITimelineStore, IPathKeyedStore {
  constructor(
    factory: IDBFactory = indexedDB,
    now: () => number = () => Date.now() / 1000
  ) {
    this._database = new VramDatabase(factory);
    this._now = now;
  }

  async load(notebook: string): Promise<StoredTimelineChunk[]> {
    const db = await this._database.open();
    const tx = db.transaction(TIMELINE_CHUNKS, 'readwrite');
    const store = tx.objectStore(TIMELINE_CHUNKS);
    const stale = await request<IDBValidKey[]>(
      store
        .index('end')
        .getAllKeys(
          IDBKeyRange.upperBound(this._now() - TIMELINE_MAX_AGE_S, true)
        )
    );
    for (const key of stale) {
      store.delete(key);
    }
    // Reading after those deletes, in the same transaction, means that none
    // of the deleted chunks comes back. All rows share one index key, so
    // they come in primary-key order, which is the order they were written.
    const rows = await request<{ id: number }[]>(
      store.index('notebook').getAll(IDBKeyRange.only(notebook))
    );
    const chunks: StoredTimelineChunk[] = [];
    for (const row of rows) {
      const chunk = parseTimelineChunk(row);
      if (chunk) {
        chunks.push({ id: row.id, chunk });
      } else {
        store.delete(row.id); // Written by another version, or damaged, so it would never parse.
      }
    }
    await done(tx);
    return chunks;
  }

  async save(notebook: string, chunk: TimelineChunk): Promise<void> {
    const db = await this._database.open();
    const tx = db.transaction(TIMELINE_CHUNKS, 'readwrite');
    tx.objectStore(TIMELINE_CHUNKS).add(rowOf(notebook, chunk));
    await done(tx);
  }

  async replace(
    notebook: string,
    ids: readonly number[],
    chunk: TimelineChunk
  ): Promise<void> {
    const db = await this._database.open();
    const tx = db.transaction(TIMELINE_CHUNKS, 'readwrite');
    const store = tx.objectStore(TIMELINE_CHUNKS);
    for (const id of ids) {
      store.delete(id);
    }
    if (chunk.times.length) {
      store.add(rowOf(notebook, chunk));
    }
    await done(tx);
  }

  async moveNotebook(from: string, to: string): Promise<void> {
    const db = await this._database.open();
    const tx = db.transaction(TIMELINE_CHUNKS, 'readwrite');
    const store = tx.objectStore(TIMELINE_CHUNKS);
    for (const range of pathRanges(from, 'path')) {
      const rows = await request<{ notebook: string }[]>(
        store.index('notebook').getAll(range)
      );
      for (const row of rows) {
        store.put({ ...row, notebook: renamedPath(row.notebook, from, to) }); // Same id, so it is updated in place.
      }
    }
    await done(tx);
  }

  async forgetNotebook(path: string): Promise<void> {
    const db = await this._database.open();
    const tx = db.transaction(TIMELINE_CHUNKS, 'readwrite');
    const store = tx.objectStore(TIMELINE_CHUNKS);
    for (const range of pathRanges(path, 'path')) {
      for (const id of await request<IDBValidKey[]>(
        store.index('notebook').getAllKeys(range)
      )) {
        store.delete(id);
      }
    }
    await done(tx);
  }

  async forgetAll(): Promise<void> {
    const db = await this._database.open();
    const tx = db.transaction(TIMELINE_CHUNKS, 'readwrite');
    tx.objectStore(TIMELINE_CHUNKS).clear();
    await done(tx);
  }

  private _database: VramDatabase;
  private _now: () => number;
}

function rowOf(notebook: string, chunk: TimelineChunk): object {
  // Take the newest time in the chunk rather than the last one, because
  // rows merged late come after the live ones.
  let end = 0;
  for (const time of chunk.times) {
    end = Math.max(end, time);
  }
  for (const mark of chunk.marks) {
    end = Math.max(end, mark.time);
  }
  return { notebook, end, ...storedChunk(chunk) };
}
