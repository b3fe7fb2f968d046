/**
 * What the frontend knows about the memory of one notebook's kernel: the
 * monitor state and its reason, the helper's hello, the latest sample, the
 * bounded history and the visibility notes (KernelVisibilityNotes). It knows
 * nothing of the DOM; views listen to `changed` and render.
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
import {
  claimsHello,
  HelloMessage,
  parseKernelMessage,
  ParseResult
} from '../protocol/messages';
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
   * Seconds since the last sample arrived (local clock); null before the
   * first. The helper sends one at least every heartbeat.
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
  /** Per-cell memory records (live and recovered with `history`). */
  get cells(): CellHistory {
    return this._cells;
  }
  /**
   * The facts of the kernel's last unasked-for death (explained by
   * `explainKernelDeath`); null when none since the last user restart or
   * kernel change.
   */
  get death(): KernelDeathFacts | null {
    return this._ends.death;
  }
  /** The latest problem with the helper's messages (shown as a note). */
  get problem(): string | null {
    return this._visibilityNotes.problem;
  }
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Move to `state`; `reason` overrides the state's default sentence. */
  setState(state: MonitorState, reason?: string): void {
    const text = reason ?? describeState(state);
    if (state === this._state && text === this._stateReason) {
      return;
    }
    this._state = state;
    this._stateReason = text;
    this._changed.emit('state');
  }

  /** `what`: what keeps it busy, when `busy` (a cell unless said otherwise). */
  setKernelBusy(busy: boolean, what: KernelBusyWith = 'cell'): void {
    const next = busy ? what : null;
    if (next !== this._busyWith) {
      this._busyWith = next;
      this._changed.emit('busy');
    }
  }

  /**
   * Forget the current figures (restart, kernel change, new connection): the
   * hello and latest sample may no longer describe the kernel.
   * `sampleCount` keeps counting so that waiters see fresh samples.
   *
   * The history stays: it is the notebook's timeline, and where a kernel
   * process ended it is marked (`noteKernelDeath`, `settleRestart`,
   * `noteKernelChange`). The cell records stay too (they describe cells
   * still on screen); whether the next hello comes from a new kernel
   * process, whose record ids start again at 1, is decided when it arrives
   * (by its `record_series`).
   */
  startKernelSession(): void {
    this._hello = null;
    this._latest = null;
    this._visibilityNotes.forgetSession();
    this._changed.emit('history');
    this._visibilityNotes.update();
  }

  /**
   * The kernel is restarting, and it is not yet known whether the user asked
   * (JupyterLab says `restarting` first either way): keep the last sample
   * and the history until `noteKernelDeath` or `settleRestart` decides.
   */
  captureBeforeRestart(now: number = Date.now() / 1000): void {
    this._ends.captureBeforeRestart(now);
  }

  /**
   * The restart was the user's: no death to explain (an earlier one is
   * cleared); the timeline marks where the previous process ended.
   */
  settleRestart(): void {
    this._ends.settleRestart();
  }

  /**
   * The restart was part of a death already noted (the restarted process
   * died again before it answered): what was captured for it goes, so that
   * the next restart captures the figures it ends with.
   */
  dropRestartCapture(): void {
    this._ends.dropRestartCapture();
  }

  /**
   * The notebook moved to another kernel (or lost its kernel): the timeline
   * marks where the previous one's figures end. Nothing charted yet (the
   * notebook's first kernel): no mark.
   */
  noteKernelChange(now: number = Date.now() / 1000): void {
    this._ends.noteKernelChange(now);
  }

  /**
   * The kernel died without the user asking (status `autorestarting` or
   * `dead`): keep what its last figures said (those captured at the
   * restart, else the latest), the cell it was running, and mark the moment
   * in the history (a gap, so the new kernel's line does not join the dead
   * one's).
   */
  noteKernelDeath(
    status: KernelDeathFacts['status'],
    runningCell: RunningCell | null,
    now: number = Date.now() / 1000
  ): void {
    this._ends.noteKernelDeath(status, runningCell, now);
    // The cell it was running gets a record (its helper died before sending
    // one), in the dead process's session: the next hello starts another.
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
   * The user restarted or changed the kernel: the death is no longer
   * explained (its mark stays on the timeline, with the figures before it).
   */
  clearKernelDeath(): void {
    this._ends.clearKernelDeath();
  }

  ingest(data: unknown): ParseResult {
    const result = parseKernelMessage(data);
    switch (result.kind) {
      case 'malformed':
        if (claimsHello(data) && this._hello === null) {
          // Without a hello its samples and records may not mean what they seem.
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
        // A message type of a helper feature this model does not show (e.g.
        // per-cell records): the caller may route it elsewhere.
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
          // Not an answer to any request of ours: nobody else will show it.
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
   * A sample the helper sent to another frontend's comm, heard while this
   * page's own comm waits behind a running cell (see IOPubWatch.ts). Its
   * figures are shown as any sample's; the state, `overheard`, says where
   * they come from, and that no request can be made yet.
   */
  overhearSample(sample: SampleMessage): void {
    if (this._hello !== null || this._state === 'protocol-mismatch') {
      return; // this page's own comm speaks, or the helper speaks another protocol
    }
    this._receiveSample(sample, 'overheard');
  }

  /** Messages dropped because they did not fit where they arrived. */
  get ignoredMessageCount(): number {
    return this._ignoredMessages.count;
  }

  /**
   * Count and drop a message that does not fit where it arrived (malformed,
   * or a second hello on one comm: code in the kernel can write onto the
   * helper's comm). The panel keeps its state and says how many, with the
   * last reason; the console hears of it at most every IGNORED_WARNING_MS
   * (IgnoredMessages.ts).
   */
  noteIgnoredMessage(reason: string, now: number = Date.now()): void {
    this._ignoredMessages.note(reason, now);
  }

  /** Show a problem with the helper as a note (the UI carries on). */
  reportProblem(text: string): void {
    this._visibilityNotes.reportProblem(text);
  }

  /**
   * Take in the figures the helper sent before this page listened (its
   * `history` reply's timeline): rows not held yet go in at their time.
   * Only rows after the last kernel mark: before it the timeline shows the
   * notebook's earlier kernel, and a kernel the notebook switched to may
   * have a past of its own (watched by another notebook) that would
   * interleave with it. Returns the number of rows added.
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
   * Put in front the timeline a browser kept of this notebook from before
   * this page (TimelinePersistence): its rows older than those held, and
   * its kernel marks. Returns the number of rows put in.
   */
  restoreTimeline(earlier: EarlierTimeline): number {
    const restored = this._history.restoreEarlier(earlier);
    if (restored > 0) {
      this._changed.emit('history');
    }
    return restored;
  }

  /**
   * New sampling settings were sent: while `applied` is pending and a cell
   * runs (the kernel reads requests between cells), a note says so.
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
    // Record ids start again at 1 in a new process (or helper delivered
    // anew): the helper names each run, and the same run carries on after a
    // reconnect or a page reload. (Without a series, the process stands in.)
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
      // Its samples may not mean what we think they mean.
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
  /** What keeps the kernel busy; null while it is not. */
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
    /** Samples of history to keep (see settings.historyCapacityFor). */
    historyCapacity: number;
    /** Cell records to keep (default DEFAULT_CELL_HISTORY_CAPACITY). */
    cellHistoryCapacity?: number;
  }
}
