/**
 * The per-cell memory records of one notebook's kernel, as they came in:
 * live `cell` messages and the records of `history` replies, de-duplicated by
 * record_id, bounded, with the latest record of each cell at hand for its
 * badge. It knows nothing of the DOM.
 *
 * Record ids start again at 1 in every kernel process (and helper bundle).
 * The model starts a new *session* when the kernel process changes, and keys
 * each entry by (session, record_id), so records of earlier processes stay
 * (the cells they describe are still on screen) without clashing.
 *
 * A record of the current session is accepted once, and never when its id
 * is at or below the *floor*: the highest id that was cleared or evicted. The
 * kernel keeps its own last 2000 records and returns them to every `history`
 * request; the floor is what keeps a clear (or an eviction) from being
 * undone by the next reconnect.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { CellMemoryRecord } from '../protocol';
import { CellSummary, summarizeCellRecord } from './cellFigures';

/** Records kept per kernel model (oldest are dropped first). */
export const DEFAULT_CELL_HISTORY_CAPACITY = 10_000;

export interface CellHistoryEntry {
  /** Unique within the model: `${session}:${record_id}`. */
  readonly key: string;
  /** Which kernel process (counted by the model) made the record. */
  readonly session: number;
  readonly record: CellMemoryRecord;
  /** Delta, peak and outcome, computed once. */
  readonly summary: CellSummary;
}

export type CellHistoryChange =
  | { kind: 'added'; entries: readonly CellHistoryEntry[] }
  | { kind: 'cleared' };

export class CellHistory {
  constructor(capacity: number = DEFAULT_CELL_HISTORY_CAPACITY) {
    this._capacity = Math.max(1, Math.floor(capacity));
  }

  /** Emitted after records were added or the history was cleared. */
  get changed(): ISignal<this, CellHistoryChange> {
    return this._changed;
  }

  get capacity(): number {
    return this._capacity;
  }

  /** Entries, oldest first (by session, then record id). Do not mutate. */
  get entries(): readonly CellHistoryEntry[] {
    return this._entries;
  }

  get length(): number {
    return this._entries.length;
  }

  /** Counts changes; a view can cache what it derived for one version. */
  get version(): number {
    return this._version;
  }

  get session(): number {
    return this._session;
  }

  /** The newest record of a notebook cell (by cell model id), if any. */
  latestForCell(cellId: string): CellHistoryEntry | undefined {
    return this._latestByCell.get(cellId);
  }

  /** The entry with this key, if held. */
  get(key: string): CellHistoryEntry | undefined {
    return this._byKey.get(key);
  }

  /**
   * Take in one live record. Returns its entry, or null when it was already
   * held or is at or below the clear/eviction floor.
   */
  add(record: CellMemoryRecord): CellHistoryEntry | null {
    const added = this._insert([record]);
    return added.length ? added[0] : null;
  }

  /**
   * Take in the records of a `history` reply (oldest first); those already
   * held or below the floor are skipped. Returns the entries added.
   */
  merge(records: readonly CellMemoryRecord[]): CellHistoryEntry[] {
    return this._insert(records);
  }

  /**
   * Forget every record. Records of the current kernel process with an id up
   * to the highest seen are not taken in again (a later `history` reply
   * returns them: they stay cleared).
   */
  clear(): void {
    this._floor = Math.max(this._floor, this._maxIdSeen);
    this._entries = [];
    this._byKey.clear();
    this._latestByCell.clear();
    this._version++;
    this._changed.emit({ kind: 'cleared' });
  }

  /** The kernel process changed: record ids start again at 1. */
  startSession(): void {
    this._session++;
    this._floor = 0;
    this._maxIdSeen = 0;
  }

  setCapacity(capacity: number): void {
    this._capacity = Math.max(1, Math.floor(capacity));
    if (this._entries.length > this._capacity) {
      this._evict();
      this._version++;
    }
  }

  dispose(): void {
    Signal.clearData(this);
  }

  private _insert(records: readonly CellMemoryRecord[]): CellHistoryEntry[] {
    const session = this._session;
    const added: CellHistoryEntry[] = [];
    let outOfOrder = false;
    for (const record of records) {
      const id = record.record_id;
      const key = `${session}:${id}`;
      if (id <= this._floor || this._byKey.has(key)) {
        continue;
      }
      const entry: CellHistoryEntry = {
        key,
        session,
        record,
        summary: summarizeCellRecord(record)
      };
      const last = this._entries[this._entries.length - 1];
      if (last && last.session === session && last.record.record_id > id) {
        outOfOrder = true;
      }
      this._entries.push(entry);
      this._byKey.set(key, entry);
      this._maxIdSeen = Math.max(this._maxIdSeen, id);
      const cellId = record.cell_id;
      if (cellId !== null) {
        const latest = this._latestByCell.get(cellId);
        if (!latest || isNewer(entry, latest)) {
          this._latestByCell.set(cellId, entry);
        }
      }
      added.push(entry);
    }
    if (!added.length) {
      return added;
    }
    if (outOfOrder) {
      // A history reply after live records: keep the record order.
      this._entries.sort(compareEntries);
    }
    if (this._entries.length > this._capacity) {
      this._evict();
    }
    // An entry evicted at once (capacity smaller than the batch) is not news.
    const kept = added.filter(e => this._byKey.get(e.key) === e);
    this._version++;
    if (kept.length) {
      this._changed.emit({ kind: 'added', entries: kept });
    }
    return kept;
  }

  private _evict(): void {
    const excess = this._entries.length - this._capacity;
    const evicted = this._entries.splice(0, excess);
    for (const entry of evicted) {
      this._byKey.delete(entry.key);
      const cellId = entry.record.cell_id;
      if (cellId !== null && this._latestByCell.get(cellId) === entry) {
        this._latestByCell.delete(cellId);
      }
      if (entry.session === this._session) {
        this._floor = Math.max(this._floor, entry.record.record_id);
      }
    }
  }

  private _capacity: number;
  private _entries: CellHistoryEntry[] = [];
  private _byKey = new Map<string, CellHistoryEntry>();
  private _latestByCell = new Map<string, CellHistoryEntry>();
  private _session = 0;
  /** Ids of the current session at or below this are not taken in. */
  private _floor = 0;
  private _maxIdSeen = 0;
  private _version = 0;
  private _changed = new Signal<this, CellHistoryChange>(this);
}

function isNewer(a: CellHistoryEntry, b: CellHistoryEntry): boolean {
  return (
    a.session > b.session ||
    (a.session === b.session && a.record.record_id > b.record.record_id)
  );
}

function compareEntries(a: CellHistoryEntry, b: CellHistoryEntry): number {
  return a.session - b.session || a.record.record_id - b.record.record_id;
}
