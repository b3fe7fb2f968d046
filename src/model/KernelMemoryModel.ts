/**
 * What the frontend knows about the memory of one notebook's kernel: the
 * monitor state and its reason, the helper's hello, the latest sample, the
 * bounded history and the visibility notes (KernelVisibilityNotes). It knows
 * nothing of the DOM, so that it can be tested alone; views listen to
 * `changed` and render.
 *
 * Samples come in through `ingest()`, to which the kernel connection passes
 * the data of every comm message, and to which a test or a benchmark can
 * pass its own.
 */
import { ISignal, Signal } from '@lumino/signaling';

import {
  IKernelMemoryModel,
  KernelBusyWith,
  ModelChange
} from './IKernelMemoryModel';
import type { HelloMessage, ParseResult } from '../protocol/messages';
import {
  claimsHello,
  loadMessageReaders,
  messageReaders
} from '../protocol/messageReaders';
import { SampleMessage } from '../protocol/sample';
import { TimelineColumns } from '../protocol/timeline';
import { CellHistory, CellHistoryChange } from './CellHistory';
import { KernelDeathFacts, RunningCell } from './kernelDeath';
import { historySeriesOf, sampleSeries } from './historySeries';
import { diedCellRecord } from './diedCellRecord';
import { IgnoredMessages } from './IgnoredMessages';
import { KernelEnds } from './KernelEnds';
import { KernelVisibilityNotes } from './KernelVisibilityNotes';
import { EarlierTimeline, MemoryHistory } from './MemoryHistory';
import {
  describeState,
  MonitorState,
  unreadableHelloText
} from './MonitorState';
import type { VisibilityNote } from './visibilityNotes';
import { trans } from '../text/translation';

/** What the frontend knows about the memory of one notebook's kernel. */
export class KernelMemoryModel implements IKernelMemoryModel {
  constructor(options: KernelMemoryModel.IOptions) {
    this._history = new MemoryHistory(options.historyCapacity);
    this._cells = new CellHistory(options.cellHistoryCapacity);
    this._cells.changed.connect(this._onCellsChanged, this);
    this._ends = new KernelEnds({
      history: this._history,
      latest: () => this._latest,
      secondsSinceSample: now => this.secondsSinceSample(now),
      lastSampleArrival: () => this._lastSampleArrival,
      hostname: () => this._hello?.hostname ?? null,
      changed: change => this._changed.emit(change)
    });
  }

  get changed(): ISignal<this, ModelChange> {
    return this._changed;
  }
  get state(): MonitorState {
    return this._state;
  }
  get stateReason(): string {
    return this._stateReason;
  }
  get hello(): HelloMessage | null {
    return this._hello;
  }
  get latest(): SampleMessage | null {
    return this._latest;
  }
  get sampleCount(): number {
    return this._sampleCount;
  }
  /**
   * The seconds since the last sample arrived, on the local clock, or null
   * before the first. The helper sends a sample at least once per heartbeat.
   */
  secondsSinceSample(now: number = Date.now() / 1000): number | null {
    return this._latest ? Math.max(0, now - this._lastSampleArrival) : null;
  }
  get lastSampleTime(): number | null {
    return this._latest ? this._latest.time : null;
  }
  get kernelBusy(): boolean {
    return this._busyWith !== null;
  }
  get kernelBusyWith(): KernelBusyWith | null {
    return this._busyWith;
  }
  get notes(): readonly VisibilityNote[] {
    return this._visibilityNotes.notes;
  }
  get history(): MemoryHistory {
    return this._history;
  }
  /** The per-cell memory records, both live and recovered with `history`. */
  get cells(): CellHistory {
    return this._cells;
  }
  /**
   * The facts of the kernel's last death that nobody asked for, which
   * `explainKernelDeath` explains. It is null when there was none since the
   * last restart by the user or kernel change.
   */
  get death(): KernelDeathFacts | null {
    return this._ends.death;
  }
  /**
   * The latest problem with the helper's messages, which is shown as a note.
   */
  get problem(): string | null {
    return this._visibilityNotes.problem;
  }
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Moves to `state`. `reason`, when given, replaces the state's default
   * sentence.
   */
  setState(state: MonitorState, reason?: string): void {
    const text = reason ?? describeState(state);
    if (state === this._state && text === this._stateReason) {
      return;
    }
    this._state = state;
    this._stateReason = text;
    this._changed.emit('state');
  }

  /**
   * Sets whether the kernel is busy. When it is, `what` says what keeps it
   * busy; that is a cell unless the caller says otherwise.
   */
  setKernelBusy(busy: boolean, what: KernelBusyWith = 'cell'): void {
    const next = busy ? what : null;
    if (next !== this._busyWith) {
      this._busyWith = next;
      this._changed.emit('busy');
    }
  }

  /**
   * Forgets the current figures after a restart, a kernel change or a new
   * connection, because the hello and latest sample may no longer describe
   * the kernel. `sampleCount` keeps counting, so that code waiting for fresh
   * samples sees them.
   *
   * The history stays, because it is the notebook's timeline; where a kernel
   * process ended is marked on it (`noteKernelDeath`, `settleRestart`,
   * `noteKernelChange`). The cell records stay too, because they describe
   * cells still on screen. Whether the next hello comes from a new kernel
   * process, whose record ids start again at 1, is decided by its
   * `record_series` when it arrives.
   */
  startKernelSession(): void {
    this._hello = null;
    this._latest = null;
    this._visibilityNotes.forgetSession();
    this._changed.emit('history');
    this._visibilityNotes.update();
  }

  /**
   * Called when the kernel is restarting and it is not yet known whether the
   * user asked for it, because JupyterLab reports `restarting` first either
   * way. It keeps the last sample and the history until `noteKernelDeath` or
   * `settleRestart` decides.
   */
  captureBeforeRestart(now: number = Date.now() / 1000): void {
    this._ends.captureBeforeRestart(now);
  }

  /**
   * Called when the user asked for the restart. There is no death to
   * explain, and an earlier one is cleared; the timeline marks where the
   * previous process ended.
   */
  settleRestart(): void {
    this._ends.settleRestart();
  }

  /**
   * Called when the restart was part of a death already noted, because the
   * restarted process died again before it answered. What was captured for
   * the restart is dropped, so that the next restart captures the figures
   * that the process ends with.
   */
  dropRestartCapture(): void {
    this._ends.dropRestartCapture();
  }

  /**
   * Called when the notebook moved to another kernel or lost its kernel. The
   * timeline marks where the previous kernel's figures end. If nothing is
   * charted yet, as for the notebook's first kernel, no mark is made.
   */
  noteKernelChange(now: number = Date.now() / 1000): void {
    this._ends.noteKernelChange(now);
  }

  /**
   * Called when the kernel died without the user asking, with the status
   * `autorestarting` or `dead`. It keeps what the last figures said (those
   * captured at the restart, or else the latest) and the cell the kernel was
   * running. It also marks the moment in the history as a gap, so that the
   * new kernel's line does not join the dead one's.
   */
  noteKernelDeath(
    status: KernelDeathFacts['status'],
    runningCell: RunningCell | null,
    now: number = Date.now() / 1000
  ): void {
    this._ends.noteKernelDeath(status, runningCell, now);
    // The cell it was running gets a record, because its helper died before
    // sending one. The record goes in the dead process's session, since the
    // next hello starts another session.
    const death = this._ends.death;
    if (death && this._cells.identity !== null) {
      const record = diedCellRecord(
        death,
        this._history,
        this._cells.nextRecordId
      );
      if (record) {
        this._cells.add(record);
      }
    }
  }

  /**
   * Called when the user restarted or changed the kernel. The death is no
   * longer explained, but its mark stays on the timeline with the figures
   * before it.
   */
  clearKernelDeath(): void {
    this._ends.clearKernelDeath();
  }

  ingest(data: unknown): ParseResult {
    const readers = messageReaders();
    if (!readers) {
      // Never so for the helper's comm, which opens once the readers are
      // there (messageReaders.ts); a message handed in earlier is dropped
      // with a note rather than read by half.
      void loadMessageReaders().catch(() => undefined);
      this.noteIgnoredMessage(
        trans.__('a message that came before its reader had loaded')
      );
      return { kind: 'malformed', error: 'the message reader is loading' };
    }
    const result = readers.parseKernelMessage(data);
    switch (result.kind) {
      case 'malformed':
        if (claimsHello(data) && this._hello === null) {
          // Without a readable hello, the samples and records may not mean
          // what they seem, so the model stops trusting them.
          this.setState('protocol-mismatch', unreadableHelloText(result.error));
        } else {
          this.noteIgnoredMessage(
            trans.__('a malformed message: %1', result.error)
          );
        }
        break;
      case 'incompatible':
        this._reportIncompatible(result.protocol, result.helperVersion);
        break;
      case 'unsupported':
        // This is a message type that a newer helper feature added and that
        // this model does not know. It is not an error, and the caller may
        // route it elsewhere.
        break;
      case 'message': {
        const message = result.message;
        if (message.type === 'hello') {
          this._receiveHello(message);
        } else if (message.type === 'sample') {
          this._receiveSample(message);
        } else if (message.type === 'cells') {
          if (this._state !== 'protocol-mismatch') {
            this._cells.merge(message.records);
            for (const error of message.invalid) {
              this.noteIgnoredMessage(
                trans.__('a malformed cell record: %1', error)
              );
            }
          }
        } else if (message.type === 'error' && message.request_id === null) {
          // This error answers none of our requests, so nobody else will
          // show it.
          this.reportProblem(
            trans.__(
              'The kernel helper reported an error (%1): %2',
              message.code,
              message.message
            )
          );
        }
        // Replies and errors with an id belong to the connection's requests.
        break;
      }
    }
    return result;
  }

  /**
   * Takes in a sample that the helper sent to another frontend's comm,
   * heard while this page's own comm waits behind a running cell (see
   * IOPubWatch.ts). Its figures are shown like any sample's. The state
   * `overheard` says where they come from, and that no request can be made
   * yet.
   */
  overhearSample(sample: SampleMessage): void {
    if (this._hello !== null || this._state === 'protocol-mismatch') {
      // Either this page's own comm is already speaking, or the helper
      // speaks another protocol.
      return;
    }
    this._receiveSample(sample, 'overheard');
  }

  /**
   * The number of messages dropped because they did not fit where they arrived.
   */
  get ignoredMessageCount(): number {
    return this._ignoredMessages.count;
  }

  /**
   * Counts and drops a message that does not fit where it arrived: a
   * malformed one, or a second hello on one comm, which can happen because
   * code in the kernel can write onto the helper's comm. The panel keeps its
   * state and says how many were dropped, with the last reason. The browser
   * console hears of it at most once every IGNORED_WARNING_MS (see
   * IgnoredMessages.ts).
   */
  noteIgnoredMessage(reason: string, now: number = Date.now()): void {
    this._ignoredMessages.note(reason, now);
  }

  /** Shows a problem with the helper as a note, while the UI carries on. */
  reportProblem(text: string): void {
    this._visibilityNotes.reportProblem(text);
  }

  /**
   * Takes in the figures that the helper sent before this page listened,
   * which is the timeline of its `history` reply. Rows not held yet go in at
   * their time. Only rows after the last kernel mark are taken, because
   * before it the timeline shows the notebook's earlier kernel, and a kernel
   * that the notebook switched to may have a past of its own (watched by
   * another notebook) that would interleave with it. Returns the number of
   * rows added.
   */
  recoverTimeline(timeline: TimelineColumns): number {
    const marks = this._history.marks;
    const after = marks.length ? marks[marks.length - 1].time : -Infinity;
    const added = this._history.merge(
      timeline.times,
      historySeriesOf(timeline),
      after
    );
    if (added > 0) {
      this._changed.emit('history');
    }
    return added;
  }

  /**
   * Puts in front the timeline that the browser kept of this notebook from
   * before this page (see TimelinePersistence): its rows that are older than
   * those held, and its kernel marks. Returns the number of rows put in.
   */
  restoreTimeline(earlier: EarlierTimeline): number {
    const restored = this._history.restoreEarlier(earlier);
    if (restored > 0) {
      this._changed.emit('history');
    }
    return restored;
  }

  /**
   * Called when new sampling settings were sent. While `applied` is pending
   * and a cell runs, a note says that they wait, because the kernel reads
   * requests only between cells.
   */
  settingsSent(applied: Promise<unknown>): void {
    if (this.kernelBusy) {
      this._visibilityNotes.settingsSent(applied);
    }
  }

  setHistoryCapacity(capacity: number): void {
    if (capacity !== this._history.capacity) {
      this._history.setCapacity(capacity);
      this._changed.emit('history');
    }
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._visibilityNotes.dispose();
    this._cells.dispose();
    Signal.clearData(this);
  }

  private _receiveHello(hello: HelloMessage): void {
    // Record ids start again at 1 in a new process, or when the helper is
    // delivered again, so the helper names each run of ids. The same run
    // carries on after a reconnect or a page reload. A helper that sends no
    // series is identified by its process instead.
    const identity =
      hello.record_series ||
      `${hello.hostname}\n${hello.pid}\n${hello.helper_version}`;
    if (identity !== this._cells.identity) {
      this._cells.startSession(identity);
    }
    this._hello = hello;
    this._changed.emit('hello');
    this.setState(
      'live',
      trans.__(
        'Live: kernel process %1 on %2 (helper %3, Python %4).',
        hello.pid,
        hello.hostname,
        hello.helper_version,
        hello.python
      )
    );
    this._visibilityNotes.update();
  }

  private _receiveSample(
    sample: SampleMessage,
    state: 'live' | 'overheard' = 'live'
  ): void {
    if (this._state === 'protocol-mismatch') {
      // The helper speaks another protocol, so its samples may not mean what
      // we think they mean.
      return;
    }
    this._latest = sample;
    this._visibilityNotes.sampled(sample);
    this._lastSampleArrival = Date.now() / 1000;
    this._sampleCount++;
    this._ends.sampled(sample);
    this._history.append(sample.time, sampleSeries(sample));
    if (this._state !== state) {
      this.setState(state);
    }
    this._changed.emit('sample');
    this._visibilityNotes.update();
  }

  private _onCellsChanged(_: CellHistory, __: CellHistoryChange): void {
    this._changed.emit('cells');
  }

  private _reportIncompatible(
    protocol: unknown,
    helperVersion: string | null
  ): void {
    const version =
      typeof protocol === 'number' || typeof protocol === 'string'
        ? String(protocol)
        : undefined;
    this.setState(
      'protocol-mismatch',
      describeState('protocol-mismatch', version) +
        (helperVersion ? ' ' + trans.__('(helper %1)', helperVersion) : '')
    );
  }

  private _changed = new Signal<this, ModelChange>(this);
  private _state: MonitorState = 'kernel-starting';
  private _stateReason = describeState('kernel-starting');
  private _hello: HelloMessage | null = null;
  private _latest: SampleMessage | null = null;
  private _visibilityNotes = new KernelVisibilityNotes({
    hello: () => this._hello,
    latest: () => this._latest,
    lastSampleArrival: () => this._lastSampleArrival,
    changed: () => this._changed.emit('notes')
  });
  private _sampleCount = 0;
  /** What keeps the kernel busy, or null while it is idle. */
  private _busyWith: KernelBusyWith | null = null;
  private _ends: KernelEnds;
  private _lastSampleArrival = 0;
  private _ignoredMessages = new IgnoredMessages(text =>
    this.reportProblem(text)
  );
  private _history: MemoryHistory;
  private _cells: CellHistory;
  private _isDisposed = false;
}

/** The types that go with KernelMemoryModel. */
export namespace KernelMemoryModel {
  /** The options a new KernelMemoryModel is constructed with. */
  export interface IOptions {
    /**
     * The number of samples of history to keep (see
     * settings.historyCapacityFor).
     */
    historyCapacity: number;
    /**
     * The number of cell records to keep; the default is
     * DEFAULT_CELL_HISTORY_CAPACITY.
     */
    cellHistoryCapacity?: number;
  }
}
