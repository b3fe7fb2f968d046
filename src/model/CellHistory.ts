/**
 * The per-cell memory records of one notebook's kernel, as they came in:
 * live `cell` messages and the records of `history` replies, de-duplicated by
 * record_id, bounded, with the latest record of each cell at hand for its
 * badge. It knows nothing of the DOM.
 *
 * Record ids start again at 1 in every kernel process (and helper bundle):
 * the helper names each run of ids (its hello's `record_series`). The model
 * starts a new *session* when that changes, and keys each entry by
 * (session, record_id), so records of earlier processes stay (the cells they
 * describe are still on screen) without clashing. Sessions are numbered 1, 2,
 * ... in the order they happened ("kernel start N").
 *
 * The sessions saved in the browser by an earlier page (see
 * CellHistoryPersistence) come in through cellSessionsRestore.ts: they go
 * before the sessions seen live, and a saved session of the live series
 * joins it.
 *
 * A record of the current session is accepted once, and never when its id
 * is at or below the *floor*: the highest id that was cleared or evicted. The
 * kernel keeps its own last 2000 records and returns them to every `history`
 * request; the floor is what keeps a clear (or an eviction) from being
 * undone by the next reconnect.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { CellMemoryRecord } from '../protocol/cell';
import { CellSummary, summarizeCellRecord } from './cellFigures';

/** Records kept per kernel model (oldest are dropped first). */
export const DEFAULT_CELL_HISTORY_CAPACITY = 10_000;

/**
 * One cell record in the history, with its key and the figures derived from it.
 */
export interface CellHistoryEntry {
  /** Unique within the model: `${session}:${record_id}`. */
  readonly key: string;
  /** Which kernel process (counted by the model) made the record. */
  readonly session: number;
  readonly record: CellMemoryRecord;
  /** Delta, peak and outcome, computed once. */
  readonly summary: CellSummary;
}

/** What changed in a CellHistory, as its `changed` signal tells it. */
export type CellHistoryChange =
  | { kind: 'added'; entries: readonly CellHistoryEntry[] }
  | { kind: 'cleared' }
  /** Saved sessions came in: every entry may have a new key and session. */
  | { kind: 'restored' };

/** A session as `rebuild` takes it: its series, floor and records by id. */
export interface RestoredCellSession {
  identity: string;
  floor: number;
  records: Map<number, CellMemoryRecord>;
}

/** The records of one run of record ids, as saved between pages. */
export interface SavedCellSession {
  /** The helper's `record_series` (or another identity of the run). */
  readonly identity: string;
  /** Ids at or below this were cleared or evicted: not taken in again. */
  readonly floor: number;
  /** Oldest first. */
  readonly records: readonly CellMemoryRecord[];
}

/** The per-cell memory records of one notebook's kernel. */
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

  /** The highest session number given (a session taken up again may be below it). */
  get lastSession(): number {
    return this._lastSession;
  }

  /** The record series of the current session; null before the first. */
  get identity(): string | null {
    return this._identities.get(this._session) ?? null;
  }

  /** The record series a session's records came from. */
  identityOf(session: number): string | null {
    return this._identities.get(session) ?? null;
  }

  /** The current session's floor: its ids up to this stay out. */
  get floor(): number {
    return this._floor;
  }

  /** An id after every record of the current session held, cleared or evicted. */
  get nextRecordId(): number {
    return Math.max(this._floor, this._maxIdSeen) + 1;
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
   * Forget every record. Records of every series with an id up to the
   * highest seen are not taken in again (a later `history` reply returns
   * them: they stay cleared).
   */
  clear(): void {
    this._floor = Math.max(this._floor, this._maxIdSeen);
    for (const marks of this._marks.values()) {
      marks.floor = Math.max(marks.floor, marks.maxIdSeen);
    }
    this._entries = [];
    this._byKey.clear();
    this._latestByCell.clear();
    this._version++;
    this._changed.emit({ kind: 'cleared' });
  }

  /**
   * A run of record ids began (a new kernel process or helper: its ids start
   * again at 1), or one held here goes on (the notebook switched back to a
   * kernel it had before): `identity` names it (the hello's
   * `record_series`). A run held already is taken up again with its floor,
   * so what was cleared or evicted of it stays out.
   */
  startSession(identity: string = ''): void {
    if (this._session > 0) {
      this._marks.set(this._session, {
        floor: this._floor,
        maxIdSeen: this._maxIdSeen,
        lastStarted: this._lastStarted
      });
    }
    let session = 0;
    if (identity !== '') {
      for (const [number, held] of this._identities) {
        if (held === identity) {
          session = number;
        }
      }
    }
    if (session === 0) {
      session = ++this._lastSession;
      this._identities.set(session, identity);
    }
    this._session = session;
    const marks = this._marks.get(session) ?? this._savedFloors.get(identity);
    this._marks.delete(session); // the current session's live in the fields below
    this._savedFloors.delete(identity);
    this._floor = marks?.floor ?? 0;
    this._maxIdSeen = marks?.maxIdSeen ?? 0;
    this._lastStarted = marks?.lastStarted ?? null;
  }

  /**
   * Every series' floor (ids up to it were cleared or evicted), with the
   * kernel's time of its latest record (null when none came): what a clear
   * saves, so that no series' cleared records come back after a reload.
   */
  floors(): { identity: string; floor: number; time: number | null }[] {
    const out: { identity: string; floor: number; time: number | null }[] = [];
    for (const [identity, marks] of this._savedFloors) {
      out.push({ identity, floor: marks.floor, time: marks.lastStarted });
    }
    for (const [session, identity] of this._identities) {
      const marks =
        session === this._session
          ? { floor: this._floor, lastStarted: this._lastStarted }
          : this._marks.get(session);
      if (marks && marks.floor > 0) {
        out.push({ identity, floor: marks.floor, time: marks.lastStarted });
      }
    }
    return out;
  }

  /**
   * Put `sessions` (oldest first, their records by id) in place of what is
   * held, numbered again in order, `current` the one live records join
   * (cellSessionsRestore.ts, which merges what an earlier page saved with
   * what is held, makes them); `aside`: floors of saved series with nothing
   * to show, kept for the day their kernel is taken up again.
   */
  rebuild(
    sessions: readonly RestoredCellSession[],
    current: RestoredCellSession | undefined,
    aside: ReadonlyMap<string, { floor: number; maxIdSeen: number }>
  ): void {
    for (const [identity, { floor, maxIdSeen }] of aside) {
      this._savedFloors.set(identity, { floor, maxIdSeen, lastStarted: null });
    }
    this._entries = [];
    this._byKey.clear();
    this._latestByCell.clear();
    this._identities.clear();
    this._marks.clear();
    this._session = current ? sessions.indexOf(current) + 1 : 0; // its number from here on (which entry is a cell's latest)
    let number = 0;
    for (const slot of sessions) {
      number++;
      this._identities.set(number, slot.identity);
      const ids = Array.from(slot.records.keys()).sort((a, b) => a - b);
      let lastStarted: number | null = null;
      for (const id of ids) {
        const record = slot.records.get(id)!;
        lastStarted = Math.max(lastStarted ?? -Infinity, record.started);
        if (id <= slot.floor) {
          continue;
        }
        this._push(number, record);
      }
      const maxIdSeen = Math.max(
        slot.floor,
        ids.length ? ids[ids.length - 1] : 0
      );
      if (slot === current) {
        this._floor = slot.floor;
        this._maxIdSeen = maxIdSeen;
        this._lastStarted = lastStarted;
      } else {
        this._marks.set(number, { floor: slot.floor, maxIdSeen, lastStarted });
      }
    }
    this._lastSession = number;
    if (this._entries.length > this._capacity) {
      this._evict();
    }
    this._version++;
    this._changed.emit({ kind: 'restored' });
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
      const last = this._entries[this._entries.length - 1];
      if (
        last &&
        (last.session > session ||
          (last.session === session && last.record.record_id > id))
      ) {
        outOfOrder = true; // a history reply after live records, or a run taken up again
      }
      added.push(this._push(session, record));
      this._maxIdSeen = Math.max(this._maxIdSeen, id);
      this._lastStarted = Math.max(
        this._lastStarted ?? -Infinity,
        record.started
      );
    }
    if (!added.length) {
      return added;
    }
    if (outOfOrder) {
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

  /** Append an entry (the caller keeps the order) and index it. */
  private _push(session: number, record: CellMemoryRecord): CellHistoryEntry {
    const entry: CellHistoryEntry = {
      key: `${session}:${record.record_id}`,
      session,
      record,
      summary: summarizeCellRecord(record)
    };
    this._entries.push(entry);
    this._byKey.set(entry.key, entry);
    const cellId = record.cell_id;
    if (cellId !== null) {
      const latest = this._latestByCell.get(cellId);
      if (!latest || this._isNewer(entry, latest)) {
        this._latestByCell.set(cellId, entry);
      }
    }
    return entry;
  }

  /**
   * Whether `a` is a later run of its cell than `b`: in one session, by
   * record id; else the current session's is (a run taken up again is the
   * live one, whatever its number), then the later session's.
   */
  private _isNewer(a: CellHistoryEntry, b: CellHistoryEntry): boolean {
    if (a.session === b.session) {
      return a.record.record_id > b.record.record_id;
    }
    if (a.session === this._session || b.session === this._session) {
      return a.session === this._session;
    }
    return a.session > b.session;
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
      } else {
        const marks = this._marks.get(entry.session);
        if (marks) {
          marks.floor = Math.max(marks.floor, entry.record.record_id);
        }
      }
    }
  }

  private _capacity: number;
  private _entries: CellHistoryEntry[] = [];
  private _byKey = new Map<string, CellHistoryEntry>();
  private _latestByCell = new Map<string, CellHistoryEntry>();
  private _session = 0;
  /** Session number -> its record series. */
  private _identities = new Map<number, string>();
  /** The highest session number given. */
  private _lastSession = 0;
  /** Ids of the current session at or below this are not taken in. */
  private _floor = 0;
  private _maxIdSeen = 0;
  /** The kernel's time (`started`) of the current session's latest record. */
  private _lastStarted: number | null = null;
  /** The same, of series saved by an earlier page with nothing left to show (all cleared). */
  private _savedFloors = new Map<
    string,
    { floor: number; maxIdSeen: number; lastStarted: number | null }
  >();
  /** The floor, highest id and latest record time of every session but the current one. */
  private _marks = new Map<
    number,
    { floor: number; maxIdSeen: number; lastStarted: number | null }
  >();
  private _version = 0;
  private _changed = new Signal<this, CellHistoryChange>(this);
}

function compareEntries(a: CellHistoryEntry, b: CellHistoryEntry): number {
  return a.session - b.session || a.record.record_id - b.record.record_id;
}
