/**
 * The cleanup actions of one kernel: free memory (gc,
 * empty_cache), list what holds memory, delete chosen holders. Holds the
 * request queue, the last outcome (shown in the sidebar's result area), the
 * latest listing and the user's selection in it. No DOM; never throws into
 * the UI: every failure becomes an outcome or `listingError` with a clear
 * sentence.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type {
  DeleteResult,
  FreeAction,
  FreeMemoryResult,
  HiddenHolderKind,
  InspectResult
} from '../cleanupProtocol';
import { isHiddenHolderKind } from '../protocol';
import { ByteUnits } from '../format';
import { IKernelMemoryModel } from '../tokens';
import { ActionCancelledError, ActionQueue } from './ActionQueue';
// The result texts load with the first result (not at start-up).
import type { ResultDescription } from './cleanupResultText';
import type { DeletePlan } from './deletePlan';

/** The requests a connection to the kernel helper makes for cleanups. */
export interface ICleanupConnection {
  freeMemory(actions: FreeAction[]): Promise<FreeMemoryResult>;
  inspect(options?: {
    max_entries?: number;
    container_depth?: number;
  }): Promise<InspectResult>;
  deleteHolders(request: {
    listing_id: string;
    names: string[];
    hidden: HiddenHolderKind[];
    free: FreeAction[];
  }): Promise<DeleteResult>;
}

export type ActionKind = 'free' | 'delete';

/** How a cleanup ended, in words. */
export interface ActionOutcome extends ResultDescription {
  kind: ActionKind;
  /** What was asked ("Collect garbage"). */
  label: string;
  status: 'done' | 'failed' | 'cancelled';
  /** The reply, when there was one. */
  result: FreeMemoryResult | DeleteResult | null;
  /**
   * When it ended (the reply came, or the request failed or was cancelled),
   * in seconds since the epoch: the result stays shown while later events
   * happen, and must say when it happened.
   */
  at: number;
}

/** Why a delete was not sent: cells ran after its listing. */
export const STALE_LISTING_TEXT =
  'cells ran since the listing, so nothing was deleted. The Holders tab lists again: choose anew';

export type MemoryActionsChange = 'queue' | 'outcome' | 'listing' | 'selection' | 'deleting' | 'state';

/** "Collect garbage", "Empty the CUDA cache", "Free memory". */
export function freeActionLabel(actions: readonly FreeAction[]): string {
  const gc = actions.includes('gc');
  const cache = actions.includes('empty_cache');
  if (gc && cache) {
    return 'Free memory (gc + empty_cache)';
  }
  return cache ? 'Empty the CUDA cache' : 'Collect garbage';
}

/** The message of a rejection, for a sentence shown to the user. */
export function errorText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}

export class MemoryActions implements IDisposable {
  constructor(options: MemoryActions.IOptions) {
    this._connection = options.connection;
    this._model = options.model;
    this._units = options.units ?? (() => 'binary');
    this._queue = new ActionQueue({ busy: this._model.kernelBusy });
    this._wasLive = this._model.state === 'live';
    this._queue.changed.connect(() => this._emit('queue'));
    this._model.changed.connect(this._onModelChanged, this);
  }

  get queue(): ActionQueue {
    return this._queue;
  }

  /** True when the helper is live, so requests can be made. */
  get available(): boolean {
    return this._model.state === 'live';
  }

  /** The outcome of the latest free or delete (null before the first). */
  get lastOutcome(): ActionOutcome | null {
    return this._lastOutcome;
  }

  /** The latest listing of what holds memory (null before the first). */
  get listing(): InspectResult | null {
    return this._listing;
  }

  /** Why the latest inspect failed (null when it did not). */
  get listingError(): string | null {
    return this._listingError;
  }

  /** True while an inspect is queued or running. */
  get inspecting(): boolean {
    return this._inspecting > 0;
  }

  /**
   * Cells ran since the latest listing (the kernel went busy after it, or
   * is busy): a name there may be bound to another object now, and the
   * hidden holders hold other things.
   */
  get listingStale(): boolean {
    return this._listing !== null && !this.isListingCurrent(this._listing.listing_id);
  }

  /** The listing `listingId` is the latest one the kernel gave, and no cell ran since, nor a delete used it. */
  isListingCurrent(listingId: string): boolean {
    return (
      !this._model.kernelBusy &&
      this._listing?.listing_id === listingId &&
      this._listingEpoch === this._busyEpoch
    );
  }

  /** True from a delete's planning to its result: one delete at a time. */
  get deleting(): boolean {
    return this._deleting;
  }

  /**
   * Claim the one delete at a time, from its planning to its result (a
   * double click must not ask twice, nor delete twice); false while one is
   * under way. `endDelete` lets it go.
   */
  beginDelete(): boolean {
    if (this._deleting) {
      return false;
    }
    this._deleting = true;
    this._emit('deleting');
    return true;
  }

  endDelete(): void {
    if (this._deleting) {
      this._deleting = false;
      this._emit('deleting');
    }
  }

  get selectedNames(): ReadonlySet<string> {
    return this._selectedNames;
  }

  get selectedHidden(): ReadonlySet<HiddenHolderKind> {
    return this._selectedHidden;
  }

  get changed(): ISignal<this, MemoryActionsChange> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Run gc and/or empty_cache; resolves with the outcome (never rejects). */
  async free(actions: FreeAction[]): Promise<ActionOutcome> {
    const label = freeActionLabel(actions);
    const outcome = await this._run(
      'free',
      label,
      () => this._connection.freeMemory(actions)
    );
    return outcome;
  }

  /**
   * Ask for a new listing; resolves with it, or null when it failed
   * (`listingError` says why). Never rejects.
   */
  async inspect(): Promise<InspectResult | null> {
    if (!this.available) {
      this._setListingError(this._notAvailableText());
      return null;
    }
    this._inspecting++;
    this._emit('listing');
    try {
      const listing = await this._queue.enqueue('List what holds memory', () =>
        this._connection.inspect()
      ).result;
      if (this._isDisposed) {
        return null;
      }
      this._setListing(listing);
      return listing;
    } catch (reason) {
      this._setListingError(
        reason instanceof ActionCancelledError
          ? `Listing cancelled: ${reason.message}`
          : `Could not list what holds memory: ${errorText(reason)}`
      );
      return null;
    } finally {
      this._inspecting--;
      this._emit('listing');
    }
  }

  setNameSelected(name: string, selected: boolean): void {
    if (selected === this._selectedNames.has(name)) {
      return;
    }
    if (selected) {
      this._selectedNames.add(name);
    } else {
      this._selectedNames.delete(name);
    }
    this._emit('selection');
  }

  setHiddenSelected(holder: string, selected: boolean): void {
    if (!isHiddenHolderKind(holder) || selected === this._selectedHidden.has(holder)) {
      return;
    }
    if (selected) {
      this._selectedHidden.add(holder);
    } else {
      this._selectedHidden.delete(holder);
    }
    this._emit('selection');
  }

  clearSelection(): void {
    if (!this._selectedNames.size && !this._selectedHidden.size) {
      return;
    }
    this._selectedNames.clear();
    this._selectedHidden.clear();
    this._emit('selection');
  }

  /** The plan for the current selection; null when nothing is chosen. */
  planSelection(): Promise<DeletePlan | null> {
    return this.planFor(this._selectedNames, this._selectedHidden);
  }

  /**
   * The plan for chosen names and hidden holders of the latest listing (as
   * it is when asked). The planning loads with the first delete, not with
   * the page.
   */
  async planFor(names: Iterable<string>, hidden: Iterable<string>): Promise<DeletePlan | null> {
    const listing = this._listing;
    if (!listing) {
      return null;
    }
    const chosen = [...names];
    const chosenHidden = [...hidden];
    const { makeDeletePlan } = await import('./deletePlan');
    return makeDeletePlan(listing, chosen, chosenHidden);
  }

  /**
   * Delete what `plan` names (then gc + empty_cache), show the outcome and
   * list again. Never rejects.
   */
  async deleteHolders(plan: DeletePlan): Promise<ActionOutcome> {
    const names = plan.entries.map(e => e.name);
    const hidden = plan.hidden.map(h => h.holder);
    const outcome = await this._run(
      'delete',
      `Delete ${names.length + hidden.length} holder(s)`,
      () => {
        // Sent when the queue gets to it: after the cell it waited for, maybe.
        // The kernel checks the names again, not what the hidden holders hold
        // by then (an Out[] or a traceback of a later cell): nothing is sent.
        if (!this.isListingCurrent(plan.listingId)) {
          return Promise.reject(new Error(STALE_LISTING_TEXT));
        }
        this._listingEpoch = -1; // used: a second delete lists again first
        return this._connection.deleteHolders({
          listing_id: plan.listingId,
          names,
          hidden,
          free: ['gc', 'empty_cache']
        });
      }
    );
    if (outcome.status === 'done') {
      for (const name of names) {
        this._selectedNames.delete(name);
      }
      for (const holder of hidden) {
        this._selectedHidden.delete(holder);
      }
      this._emit('selection');
    }
    if (outcome.status !== 'cancelled' && !this._isDisposed && this.available) {
      await this.inspect();
    }
    return outcome;
  }

  /**
   * Say the last outcome again in the units set now (a result said in MiB
   * beside figures in GB after the user changed the setting). Only a reply
   * is said again: a failure's text has no figures.
   */
  async redescribe(): Promise<void> {
    const outcome = this._lastOutcome;
    if (!outcome || outcome.status !== 'done' || outcome.result === null) {
      return;
    }
    const description = await this._describe(outcome.result);
    if (this._lastOutcome === outcome && !this._isDisposed) {
      this._lastOutcome = { ...outcome, ...description };
      this._emit('outcome');
    }
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._model.changed.disconnect(this._onModelChanged, this);
    this._queue.dispose();
    Signal.clearData(this);
  }

  /** A reply in words, in the units set now (the texts load on demand). */
  private async _describe(result: FreeMemoryResult | DeleteResult): Promise<ResultDescription> {
    // Said as the sidebar says it: "no GPU" only where that is known, not
    // merely because no GPU was listed yet.
    // The figures as they are now; the modules that word them load with the first result.
    const { hello, latest } = this._model;
    const units = this._units();
    const [{ describeResult }, { seesNoGpu }] = await Promise.all([
      import('./cleanupResultText'),
      import('./gpuVisibility')
    ]);
    return describeResult(result, units, { noGpu: seesNoGpu(hello, latest) === true });
  }

  private async _run(
    kind: ActionKind,
    label: string,
    send: () => Promise<FreeMemoryResult | DeleteResult>
  ): Promise<ActionOutcome> {
    let outcome: ActionOutcome;
    if (!this.available) {
      outcome = this._failure(kind, label, this._notAvailableText(), 'failed');
    } else {
      // The last outcome spoke of an earlier request: shown under this one's
      // "Queued", it would read as this one's result.
      if (this._lastOutcome) {
        this._lastOutcome = null;
        this._emit('outcome');
      }
      try {
        const result = await this._queue.enqueue(label, send).result;
        // Now, not after the texts load: the time is the reply's.
        const at = Date.now() / 1000;
        outcome = { kind, label, status: 'done', result, at, ...(await this._describe(result)) };
      } catch (reason) {
        outcome =
          reason instanceof ActionCancelledError
            ? this._failure(kind, label, `${label}: ${reason.message}`, 'cancelled')
            : this._failure(kind, label, `${label} failed: ${errorText(reason)}`, 'failed');
      }
    }
    if (!this._isDisposed) {
      this._lastOutcome = outcome;
      this._emit('outcome');
    }
    return outcome;
  }

  private _failure(
    kind: ActionKind,
    label: string,
    text: string,
    status: 'failed' | 'cancelled'
  ): ActionOutcome {
    return { kind, label, status, result: null, lines: [text], freedBytes: null, at: Date.now() / 1000 };
  }

  private _notAvailableText(): string {
    const reason = this._model.stateReason;
    return `The memory helper is not running in this kernel${reason ? `: ${reason}` : '.'}`;
  }

  private _setListing(listing: InspectResult): void {
    this._listing = listing;
    this._listingEpoch = this._model.kernelBusy ? -1 : this._busyEpoch;
    this._listingError = null;
    // Keep only what the new listing can still delete.
    const names = new Set(listing.entries.filter(e => e.deletable).map(e => e.name));
    const holders = new Set(listing.hidden.map(h => h.holder));
    for (const name of Array.from(this._selectedNames)) {
      if (!names.has(name)) {
        this._selectedNames.delete(name);
      }
    }
    for (const holder of Array.from(this._selectedHidden)) {
      if (!holders.has(holder)) {
        this._selectedHidden.delete(holder);
      }
    }
    this._emit('listing');
    this._emit('selection');
  }

  private _setListingError(text: string): void {
    if (this._isDisposed) {
      return;
    }
    this._listingError = text;
    this._emit('listing');
  }

  private _onModelChanged(model: IKernelMemoryModel, change: string): void {
    if (change === 'busy') {
      if (model.kernelBusy) {
        this._busyEpoch++; // a cell runs: the listing of before may name other objects after
        this._queue.setBusy(true);
      } else {
        // A restart reports "not busy" just before the state leaves 'live':
        // look again once the connection is done with this status change,
        // so that requests are not sent into a kernel that is going away.
        void Promise.resolve().then(() => {
          if (!this._isDisposed && this.available) {
            this._queue.setBusy(this._model.kernelBusy);
          }
        });
      }
    } else if (change === 'state') {
      const live = model.state === 'live';
      if (this._wasLive && !live) {
        // Restarted, died, changed kernel: nothing queued can be sent, and
        // the listing names objects of a process that is gone.
        this._queue.failQueued(
          `The kernel went away before the request was sent (${model.stateReason})`
        );
        this._listing = null;
        this._selectedNames.clear();
        this._selectedHidden.clear();
        // "gc collected 0 objects" spoke of that process, not of the next one.
        this._lastOutcome = null;
        this._emit('listing');
        this._emit('selection');
        this._emit('outcome');
      }
      if (live && !this._wasLive && this._lastOutcome) {
        // A new kernel process (or connection): what was said, e.g. that a
        // request never reached the kernel that went away, is of the past.
        this._lastOutcome = null;
        this._emit('outcome');
      }
      this._wasLive = live;
      if (live) {
        this._queue.setBusy(model.kernelBusy);
      }
      this._emit('state');
    }
  }

  private _emit(change: MemoryActionsChange): void {
    if (!this._isDisposed) {
      this._changed.emit(change);
    }
  }

  private _connection: ICleanupConnection;
  private _model: IKernelMemoryModel;
  private _units: () => ByteUnits;
  private _queue: ActionQueue;
  private _wasLive: boolean;
  private _lastOutcome: ActionOutcome | null = null;
  private _listing: InspectResult | null = null;
  private _listingError: string | null = null;
  private _inspecting = 0;
  /** Counts the kernel's going busy (cells run); a listing is current while it has not moved. */
  private _busyEpoch = 0;
  /** `_busyEpoch` when the latest listing came (-1: stale from the start, or used by a delete). */
  private _listingEpoch = -1;
  private _deleting = false;
  private _selectedNames = new Set<string>();
  private _selectedHidden = new Set<HiddenHolderKind>();
  private _changed = new Signal<this, MemoryActionsChange>(this);
  private _isDisposed = false;
}

export namespace MemoryActions {
  export interface IOptions {
    connection: ICleanupConnection;
    /** The kernel's memory model: its state and busy flag drive the queue. */
    model: IKernelMemoryModel;
    /** Units of the result sentences (the setting). */
    units?: () => ByteUnits;
  }
}
