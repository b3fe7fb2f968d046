/**
 * The allocation recording of one kernel: whether it records and what that
 * costs, the latest listing of live memory by notebook line, and the
 * requests that change them. It has no DOM, and it never throws into the UI;
 * a failure becomes `error`, a sentence that the view shows.
 *
 * The recording state comes from the replies and from the helper's
 * `allocation_recording` broadcasts, which arrive when another frontend
 * toggled recording or when the GPU part started once CUDA came up. A kernel
 * restart ends recording in the kernel, so a model that leaves the live
 * state forgets it; the state is then null, meaning unknown until the kernel
 * is asked again.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type {
  AllocationSitesResult,
  AllocationSnapshotResult,
  CellAliveBytes,
  RecordingState
} from '../../protocol/allocation';
import { VramSettings } from '../../settings/settings';
import { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import { errorText } from '../../text/errorText';
import type { IAllocationConnection } from '../../kernel/connectionRequests';
import type { CellHistory, CellHistoryChange } from '../../model/CellHistory';
import { trans } from '../../text/translation';

/** What changed in an AllocationRecorder, as its `changed` signal names it. */
export type AllocationRecorderChange =
  | 'recording'
  | 'listing'
  /**
   * A cell ran since the listing, so what the listing shows may have changed.
   */
  | 'since'
  | 'pending'
  | 'error'
  | 'alive'
  /** The helper went live, so requests can be made (see `ensureKnown`). */
  | 'available';

/**
 * The allocation recording of one kernel: its on/off state, its latest listing
 * of live memory by line, and the requests that change them.
 */
export class AllocationRecorder implements IDisposable {
  constructor(options: AllocationRecorder.IOptions) {
    this._connection = options.connection;
    this._model = options.model;
    this._settings = options.settings;
    this._model.changed.connect(this._onModelChanged, this);
    this._model.cells.changed.connect(this._onCells, this);
    this._connection.otherMessage?.connect(this._onOtherMessage, this);
  }

  get changed(): ISignal<this, AllocationRecorderChange> {
    return this._changed;
  }

  /** True when the helper is live, so requests can be made. */
  get available(): boolean {
    return this._model.state === 'live';
  }

  /** The kernel's recording state, or null until it is known. */
  get recording(): RecordingState | null {
    return this._recording;
  }

  /** True while recording is on in the kernel. */
  get enabled(): boolean {
    return this._recording?.enabled ?? false;
  }

  /**
   * When the listing came, in epoch seconds on the browser's clock, or null
   * without a listing.
   */
  get listedAt(): number | null {
    return this._listing ? this._listedAt : null;
  }

  /**
   * The cells whose record came after the listing, which may therefore no
   * longer say what they hold.
   */
  get cellsRunSinceListing(): number {
    return this._listing ? this._cellsSince : 0;
  }

  get listing(): AllocationSitesResult | null {
    return this._listing;
  }

  /**
   * For each notebook cell id, the bytes that the cell allocated and that are
   * still alive, known while recording.
   */
  get alive(): ReadonlyMap<string, CellAliveBytes> {
    return this._alive;
  }

  /** The latest failure, in words, or null after a success. */
  get error(): string | null {
    return this._error;
  }

  /**
   * The number of requests sent and not answered yet. The kernel answers
   * only between cells, so this can stay above zero for a while.
   */
  get pending(): number {
    return this._pending;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Turns recording on or off, and resolves with the new state, or null on
   * failure.
   */
  async setRecording(enabled: boolean): Promise<RecordingState | null> {
    const settings = this._settings();
    const state = await this._call(() =>
      this._connection.recordAllocations({
        enabled,
        host_frames: settings.allocationHostFrames,
        gpu_max_entries: settings.allocationHistoryMaxEntries
      })
    );
    if (state) {
      this._setRecording(state);
      if (!enabled) {
        this._forget();
      }
    }
    return state;
  }

  /**
   * Called when the user changed the settings, so that a kernel that records
   * applies new recording settings at once rather than at its next toggle.
   */
  settingsChanged(settings: VramSettings, old: VramSettings): void {
    if (
      settings.allocationHostFrames !== old.allocationHostFrames ||
      settings.allocationHistoryMaxEntries !== old.allocationHistoryMaxEntries
    ) {
      void this.applySettings();
    }
  }

  /**
   * Applies changed recording settings (stack depth, GPU history size) to a
   * kernel that is recording, by sending the request again with the new
   * values. The kernel restarts only the part whose value changed (see
   * docs/protocol.md). Nothing is sent while recording is off, because the
   * next start uses the new values, or when the kernel already records with
   * these values. Resolves with the new state, or null when nothing was sent
   * or the request failed.
   */
  async applySettings(): Promise<RecordingState | null> {
    const state = this._recording;
    if (!state?.enabled || !this.available) {
      return null;
    }
    const settings = this._settings();
    // tracemalloc or a history that someone else started keeps its own
    // settings, so no request is made for it.
    const hostDiffers =
      state.host.state === 'recording' &&
      state.host.frames !== settings.allocationHostFrames;
    const gpuDiffers =
      state.gpu.state !== 'off' &&
      state.gpu.state !== 'shared' &&
      state.gpu.max_entries !== settings.allocationHistoryMaxEntries;
    if (!hostDiffers && !gpuDiffers) {
      return null;
    }
    return this.setRecording(true);
  }

  /**
   * Asks the kernel once while its recording state is unknown, as for a new
   * or restarted kernel or a reloaded page. The Lines tab calls this when it
   * shows, so that it says whether recording is on instead of waiting for a
   * click. A kernel that does not record answers at once with no listing.
   */
  ensureKnown(): void {
    if (
      this._recording !== null ||
      this._askedWhileUnknown ||
      // An answer is on its way, and every reply carries the state, so there
      // is no need to ask.
      this._pending > 0 ||
      !this.available
    ) {
      return;
    }
    this._askedWhileUnknown = true;
    void this.refresh();
  }

  /**
   * Asks the kernel for live memory by line, and with it for its recording
   * state.
   */
  async refresh(maxSites?: number): Promise<AllocationSitesResult | null> {
    const listing = await this._call(() =>
      this._connection.allocationSites(maxSites)
    );
    if (listing) {
      this._listing = listing;
      this._listedAt = Date.now() / 1000;
      this._cellsSince = 0;
      this._setRecording(listing.recording);
      this._emit('listing');
      this._setAlive(listing.cells);
    }
    return listing;
  }

  /**
   * Fetches PyTorch's allocator snapshot as a base64 pickle, or null on
   * failure.
   */
  snapshot(): Promise<AllocationSnapshotResult | null> {
    return this._call(() => this._connection.allocationSnapshot());
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._model.changed.disconnect(this._onModelChanged, this);
    this._model.cells.changed.disconnect(this._onCells, this);
    this._connection.otherMessage?.disconnect(this._onOtherMessage, this);
    Signal.clearData(this);
  }

  private async _call<T>(send: () => Promise<T>): Promise<T | null> {
    if (!this.available) {
      this._setError(
        trans.__(
          'The memory helper is not running in this kernel; allocations cannot be recorded.'
        )
      );
      return null;
    }
    this._pending++;
    this._emit('pending');
    try {
      const result = await send();
      if (this._isDisposed) {
        return null;
      }
      this._setError(null);
      return result;
    } catch (reason) {
      this._setError(errorText(reason));
      return null;
    } finally {
      this._pending--;
      this._emit('pending');
    }
  }

  private _setRecording(state: RecordingState): void {
    this._recording = state;
    this._emit('recording');
  }

  private _setError(text: string | null): void {
    if (text !== this._error) {
      this._error = text;
      this._emit('error');
    }
  }

  private _setAlive(cells: readonly CellAliveBytes[]): void {
    // Each message lists every cell with live bytes, so a cell that is
    // absent holds none.
    this._alive = new Map(
      cells
        .filter(c => c.cell_id !== null)
        .map(c => [c.cell_id as string, c] as [string, CellAliveBytes])
    );
    this._emit('alive');
  }

  /**
   * Drops what the kernel recorded, because recording stopped or the kernel is
   * gone.
   */
  private _forget(): void {
    this._listing = null;
    this._alive = new Map();
    this._emit('listing');
    this._emit('alive');
  }

  private _onOtherMessage(_: unknown, data: unknown): void {
    const type = (data as { type?: unknown } | null)?.type;
    if (type !== 'allocation_recording' && type !== 'cell_alive') {
      return;
    }
    // The parsers load with the feature, not at start-up, and a single
    // promise chain keeps the messages in their order.
    this._protocol ??= import('../../protocol/allocation');
    void this._protocol.then(protocol => {
      if (!this._isDisposed) {
        this._takeMessage(protocol, data);
      }
    });
  }

  private _takeMessage(
    protocol: typeof import('../../protocol/allocation'),
    data: unknown
  ): void {
    const { parseCellAliveMessage, parseRecordingBroadcast } = protocol;
    const state = parseRecordingBroadcast(data);
    if (state) {
      this._setRecording(state);
      if (!state.enabled) {
        // Another frontend stopped the recording.
        this._forget();
      }
      return;
    }
    const cells = parseCellAliveMessage(data);
    if (cells) {
      this._setAlive(cells);
    }
  }

  private _onModelChanged(model: IKernelMemoryModel, change: string): void {
    if (change === 'state' && model.state === 'live') {
      this._emit('available');
      return;
    }
    if (change === 'state' && model.state !== 'live') {
      // A new kernel process may be asked again.
      this._askedWhileUnknown = false;
      // After a restart, a death or a kernel change, whatever the kernel
      // recorded is gone. A restart passes through several states, so the
      // recorder forgets and redraws only once.
      if (
        this._recording === null &&
        this._listing === null &&
        this._alive.size === 0
      ) {
        return;
      }
      this._recording = null;
      this._emit('recording');
      this._forget();
    }
  }

  private _onCells(_: CellHistory, change: CellHistoryChange): void {
    if (change.kind === 'added' && this._listing) {
      this._cellsSince += change.entries.length;
      this._emit('since');
    }
  }

  private _emit(change: AllocationRecorderChange): void {
    if (!this._isDisposed) {
      this._changed.emit(change);
    }
  }

  private _connection: IAllocationConnection;
  private _model: IKernelMemoryModel;
  private _listedAt = 0;
  private _cellsSince = 0;
  private _askedWhileUnknown = false;
  private _settings: () => VramSettings;
  private _recording: RecordingState | null = null;
  private _listing: AllocationSitesResult | null = null;
  private _alive: Map<string, CellAliveBytes> = new Map();
  private _protocol: Promise<
    typeof import('../../protocol/allocation')
  > | null = null;
  private _error: string | null = null;
  private _pending = 0;
  private _isDisposed = false;
  private _changed = new Signal<this, AllocationRecorderChange>(this);
}

/** The types that go with AllocationRecorder. */
export namespace AllocationRecorder {
  /** The options a new AllocationRecorder is constructed with. */
  export interface IOptions {
    connection: IAllocationConnection;
    /**
     * The kernel's memory model, whose state says whether requests can be sent.
     */
    model: IKernelMemoryModel;
    settings: () => VramSettings;
  }
}
