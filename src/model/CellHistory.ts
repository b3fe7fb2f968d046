/**
 * The per-cell memory records of one notebook's kernel, in the order they
 * came in. They come from live `cell` messages and from the records of
 * `history` replies. The history drops duplicates by record_id, keeps a
 * bounded number of records, and keeps the latest record of each cell at
 * hand for its badge. It knows nothing of the DOM.
 *
 * Record ids start again at 1 in every kernel process (and every helper
 * bundle), so the helper names each run of ids in the `record_series` field
 * of its hello. The history starts a new *session* when that name changes,
 * and keys each entry by (session, record_id). That way the records of
 * earlier processes stay, because the cells they describe are still on
 * screen, and they do not clash with the new ids. Sessions are numbered 1,
 * 2, ... in the order they happened, which the user sees as "kernel start N".
 *
 * The sessions that an earlier page saved in the browser (see
 * CellHistoryPersistence) come in through cellSessionsRestore.ts. They go
 * before the sessions seen live, and a saved session of the live series is
 * joined to the live one.
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

/**
 * The number of records kept per kernel model; the oldest are dropped first.
 */
export const DEFAULT_CELL_HISTORY_CAPACITY = 10_000;

/**
 * One cell record in the history, with its key and the figures derived from it.
 */
export interface CellHistoryEntry {
  /** The key, `${session}:${record_id}`, which is unique within the model. */
  readonly key: string;
  /** Which kernel process (counted by the model) made the record. */
  readonly session: number;
  readonly record: CellMemoryRecord;
  /**
   * The delta, peak and outcome, computed once so that views need not redo it.
   */
  readonly summary: CellSummary;
}

/** What changed in a CellHistory, as its `changed` signal tells it. */
export type CellHistoryChange =
  | { kind: 'added'; entries: readonly CellHistoryEntry[] }
  | { kind: 'cleared' }
  /** Saved sessions came in, so every entry may have a new key and session. */
  | { kind: 'restored' };

/**
 * A session as `rebuild` takes it, with its series, floor and records by id.
 */
export interface RestoredCellSession {
  identity: string;
  floor: number;
  records: Map<number, CellMemoryRecord>;
}

/** The records of one run of record ids, as saved between pages. */
export interface SavedCellSession {
  /** The helper's `record_series`, or another name that identifies the run. */
  readonly identity: string;
  /**
   * Ids at or below this were cleared or evicted, so they are not taken in
   * again.
   */
  readonly floor: number;
  /** The records, oldest first. */
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

  /**
   * The entries, oldest first, ordered by session and then by record id. The
   * array is shared, so callers must not change it.
   */
  get entries(): readonly CellHistoryEntry[] {
    return this._entries;
  }

  get length(): number {
    return this._entries.length;
  }

  /**
   * A count of changes. A view can cache what it derived for one version and
   * reuse it until the count moves.
   */
  get version(): number {
    return this._version;
  }

  get session(): number {
    return this._session;
  }

  /**
   * The highest session number given so far. The current session may be
   * lower than this when a run that was held earlier is taken up again.
   */
  get lastSession(): number {
    return this._lastSession;
  }

  /**
   * The record series of the current session, or null before the first session.
   */
  get identity(): string | null {
    return this._identities.get(this._session) ?? null;
  }

  /** The record series a session's records came from. */
  identityOf(session: number): string | null {
    return this._identities.get(session) ?? null;
  }

  /** The current session's floor. Its ids up to this value are not taken in. */
  get floor(): number {
    return this._floor;
  }

  /**
   * An id higher than that of every record of the current session that was
   * held, cleared or evicted.
   */
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
   * Forgets every record. In every series, records with an id up to the
   * highest seen are not taken in again, because a later `history` reply
   * returns them and they must stay cleared.
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
   * Called when a run of record ids begins, because a new kernel process or
   * helper starts its ids again at 1, or when a run held here goes on,
   * because the notebook switched back to a kernel it had before. `identity`
   * names the run; it is the hello's `record_series`. A run that is held
   * already is taken up again with its floor, so that what was cleared or
   * evicted from it stays out.
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
    // The current session's marks live in the fields below, not in the map.
    this._marks.delete(session);
    this._savedFloors.delete(identity);
    this._floor = marks?.floor ?? 0;
    this._maxIdSeen = marks?.maxIdSeen ?? 0;
    this._lastStarted = marks?.lastStarted ?? null;
  }

  /**
   * Every series' floor (ids up to it were cleared or evicted) with the
   * kernel's time of its latest record, or null when no record came. A clear
   * saves these, so that no series' cleared records come back after a reload.
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
   * Puts `sessions` (oldest first, each with its records by id) in place of
   * what is held, and numbers them again in order. `current` is the session
   * that live records join. cellSessionsRestore.ts builds these arguments by
   * merging what an earlier page saved with what is held. `aside` holds the
   * floors of saved series that have nothing to show; they are kept in case
   * their kernel is taken up again.
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
    // The current session's new number is needed before the entries are
    // pushed, because it decides which entry is a cell's latest.
    this._session = current ? sessions.indexOf(current) + 1 : 0;
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
        // This happens for a history reply after live records, or for a run
        // that was taken up again.
        outOfOrder = true;
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
    // An entry evicted at once, because the capacity is smaller than the
    // batch, is not reported as added.
    const kept = added.filter(e => this._byKey.get(e.key) === e);
    this._version++;
    if (kept.length) {
      this._changed.emit({ kind: 'added', entries: kept });
    }
    return kept;
  }

  /** Appends an entry and indexes it. The caller keeps the order. */
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
   * Whether `a` is a later run of its cell than `b`. Within one session the
   * record id decides. Across sessions the current session's entry wins,
   * because a run taken up again is the live one whatever its number;
   * otherwise the later session's entry wins.
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
  /** Maps each session number to its record series. */
  private _identities = new Map<number, string>();
  /** The highest session number given so far. */
  private _lastSession = 0;
  /** Ids of the current session at or below this are not taken in. */
  private _floor = 0;
  private _maxIdSeen = 0;
  /** The kernel's time (`started`) of the current session's latest record. */
  private _lastStarted: number | null = null;
  /**
   * The floor, highest id and latest record time of each series that an
   * earlier page saved and that has nothing left to show, because all of it
   * was cleared.
   */
  private _savedFloors = new Map<
    string,
    { floor: number; maxIdSeen: number; lastStarted: number | null }
  >();
  /**
   * The floor, highest id and latest record time of every session except the
   * current one.
   */
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
