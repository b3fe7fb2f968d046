/**
 * The cleanup actions of one kernel: freeing memory (gc and empty_cache),
 * listing what holds memory, and deleting chosen holders. It holds the
 * request queue, the last outcome (actionOutcome.ts), which the sidebar's
 * result area shows, and the latest listing with the user's selection in it
 * (HoldersListing). It has no DOM, and it never throws into the UI; every
 * failure becomes an outcome or a `listingError` that says what went wrong.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type {
  DeleteResult,
  FreeAction,
  FreeMemoryResult,
  HiddenHolderKind,
  InspectResult
} from '../../protocol/cleanup';
import { ByteUnits, formatCount } from '../../text/format';
import { errorText } from '../../text/errorText';
import type { ICleanupConnection } from '../../kernel/connectionRequests';
import { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import { ActionCancelledError, ActionQueue } from './ActionQueue';
import {
  ActionKind,
  ActionOutcome,
  describeReply,
  failedOutcome,
  freeActionLabel
} from './actionOutcome';
import { HoldersListing } from './HoldersListing';
import type { DeletePlan } from './deletePlan';
import { trans } from '../../text/translation';

/** Why a delete was not sent: cells ran after its listing. */
export function staleListingText(): string {
  return trans.__(
    'cells ran since the listing, so nothing was deleted. The Holders tab lists again: choose anew'
  );
}

/** What changed in a MemoryActions, as its `changed` signal names it. */
export type MemoryActionsChange =
  'queue' | 'outcome' | 'listing' | 'selection' | 'deleting' | 'state';

/**
 * The cleanup actions of one kernel: freeing memory, listing what holds it, and
 * deleting chosen holders.
 */
export class MemoryActions implements IDisposable {
  constructor(options: MemoryActions.IOptions) {
    this._connection = options.connection;
    this._model = options.model;
    this._units = options.units ?? (() => 'binary');
    this._queue = new ActionQueue({ busy: this._model.kernelBusy });
    this._wasLive = this._model.state === 'live';
    this._holders = new HoldersListing({
      kernelBusy: () => this._model.kernelBusy,
      changed: change => this._emit(change)
    });
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

  /** The outcome of the latest free or delete, or null before the first. */
  get lastOutcome(): ActionOutcome | null {
    return this._lastOutcome;
  }

  /** The latest listing of what holds memory, or null before the first. */
  get listing(): InspectResult | null {
    return this._holders.listing;
  }

  /** Why the latest inspect failed, or null when it did not fail. */
  get listingError(): string | null {
    return this._holders.error;
  }

  /** True while an inspect is queued or running. */
  get inspecting(): boolean {
    return this._holders.inspecting;
  }

  /**
   * True when cells ran since the latest listing, that is, the kernel went
   * busy after it or is busy. A listed name may then be bound to another
   * object, and the hidden holders may hold other things.
   */
  get listingStale(): boolean {
    return this._holders.stale;
  }

  /**
   * True when the listing `listingId` is the latest one the kernel gave, no
   * cell ran since, and no delete used it.
   */
  isListingCurrent(listingId: string): boolean {
    return this._holders.isCurrent(listingId);
  }

  /**
   * True from a delete's planning to its result, because only one delete
   * runs at a time.
   */
  get deleting(): boolean {
    return this._deleting;
  }

  /**
   * Claim the right to delete, from the delete's planning to its result, so
   * that a double click neither asks twice nor deletes twice. Returns false
   * while another delete is under way. `endDelete` releases the claim.
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
    return this._holders.selectedNames;
  }

  get selectedHidden(): ReadonlySet<HiddenHolderKind> {
    return this._holders.selectedHidden;
  }

  get changed(): ISignal<this, MemoryActionsChange> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Run gc, empty_cache or both. Resolves with the outcome and never rejects.
   */
  async free(actions: FreeAction[]): Promise<ActionOutcome> {
    const label = freeActionLabel(actions);
    const outcome = await this._run('free', label, () =>
      this._connection.freeMemory(actions)
    );
    return outcome;
  }

  /**
   * Ask for a new listing; resolves with it, or null when it failed
   * (`listingError` says why). Never rejects.
   */
  async inspect(): Promise<InspectResult | null> {
    if (!this.available) {
      this._listingFailed(this._notAvailableText());
      return null;
    }
    this._holders.inspectStarted();
    try {
      const listing = await this._queue.enqueue(
        trans.__('List what holds memory'),
        () => this._connection.inspect()
      ).result;
      if (this._isDisposed) {
        return null;
      }
      this._holders.received(listing);
      return listing;
    } catch (reason) {
      this._listingFailed(
        reason instanceof ActionCancelledError
          ? trans.__('Listing cancelled: %1', reason.message)
          : trans.__('Could not list what holds memory: %1', errorText(reason))
      );
      return null;
    } finally {
      this._holders.inspectEnded();
    }
  }

  setNameSelected(name: string, selected: boolean): void {
    this._holders.setNameSelected(name, selected);
  }

  setHiddenSelected(holder: string, selected: boolean): void {
    this._holders.setHiddenSelected(holder, selected);
  }

  clearSelection(): void {
    this._holders.clearSelection();
  }

  /** The plan for the current selection; null when nothing is chosen. */
  planSelection(): Promise<DeletePlan | null> {
    return this._holders.planSelection();
  }

  /**
   * The plan for chosen names and hidden holders of the latest listing (as
   * it is when asked).
   */
  planFor(
    names: Iterable<string>,
    hidden: Iterable<string>
  ): Promise<DeletePlan | null> {
    return this._holders.planFor(names, hidden);
  }

  /**
   * Delete what `plan` names, then run gc and empty_cache, show the outcome
   * and ask for a new listing. Never rejects.
   */
  async deleteHolders(plan: DeletePlan): Promise<ActionOutcome> {
    const names = plan.entries.map(e => e.name);
    const hidden = plan.hidden.map(h => h.holder);
    const outcome = await this._run(
      'delete',
      trans._n(
        'Delete %2 holder',
        'Delete %2 holders',
        names.length + hidden.length,
        formatCount(names.length + hidden.length)
      ),
      () => {
        // This runs when the queue gets to the request, which may be after a
        // cell that it waited for. The kernel checks the names again, but not
        // what the hidden holders hold by then (an Out[] or a traceback of a
        // later cell), so nothing is sent when the listing is stale.
        if (!this.isListingCurrent(plan.listingId)) {
          return Promise.reject(new Error(staleListingText()));
        }
        this._holders.markUsed();
        return this._connection.deleteHolders({
          listing_id: plan.listingId,
          names,
          hidden,
          free: ['gc', 'empty_cache']
        });
      }
    );
    if (outcome.status === 'done') {
      this._holders.deselect(names, hidden);
    }
    if (outcome.status !== 'cancelled' && !this._isDisposed && this.available) {
      await this.inspect();
    }
    return outcome;
  }

  /**
   * Word the last outcome again in the units that are set at present, so
   * that a result in MiB does not stand beside figures in GB after the user
   * changed the setting. Only a reply is worded again, because a failure's
   * text has no figures.
   */
  async redescribe(): Promise<void> {
    const outcome = this._lastOutcome;
    if (!outcome || outcome.status !== 'done' || outcome.result === null) {
      return;
    }
    const description = await describeReply(
      outcome.result,
      this._units(),
      this._model
    );
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

  private async _run(
    kind: ActionKind,
    label: string,
    send: () => Promise<FreeMemoryResult | DeleteResult>
  ): Promise<ActionOutcome> {
    let outcome: ActionOutcome;
    if (!this.available) {
      outcome = failedOutcome(kind, label, this._notAvailableText(), 'failed');
    } else {
      // The last outcome is about an earlier request. Shown under this
      // request's "Queued", it would read as this request's result, so it is
      // cleared.
      if (this._lastOutcome) {
        this._lastOutcome = null;
        this._emit('outcome');
      }
      try {
        const result = await this._queue.enqueue(label, send).result;
        // The time is taken here rather than after the texts load, because
        // it should be the time of the reply.
        const at = Date.now() / 1000;
        const description = await describeReply(
          result,
          this._units(),
          this._model
        );
        outcome = { kind, label, status: 'done', result, at, ...description };
      } catch (reason) {
        outcome =
          reason instanceof ActionCancelledError
            ? failedOutcome(
                kind,
                label,
                trans.__('%1: %2', label, reason.message),
                'cancelled'
              )
            : failedOutcome(
                kind,
                label,
                trans.__('%1 failed: %2', label, errorText(reason)),
                'failed'
              );
      }
    }
    if (!this._isDisposed) {
      this._lastOutcome = outcome;
      this._emit('outcome');
    }
    return outcome;
  }

  private _notAvailableText(): string {
    const reason = this._model.stateReason;
    return reason
      ? trans.__('The memory helper is not running in this kernel: %1', reason)
      : trans.__('The memory helper is not running in this kernel.');
  }

  private _listingFailed(text: string): void {
    if (!this._isDisposed) {
      this._holders.failed(text);
    }
  }

  private _onModelChanged(model: IKernelMemoryModel, change: string): void {
    if (change === 'busy') {
      if (model.kernelBusy) {
        this._holders.kernelWentBusy();
        this._queue.setBusy(true);
      } else {
        // A restart reports "not busy" just before the state leaves 'live'.
        // The state is looked at again once the connection is done with this
        // status change, so that requests are not sent into a kernel that is
        // going away.
        void Promise.resolve().then(() => {
          if (!this._isDisposed && this.available) {
            this._queue.setBusy(this._model.kernelBusy);
          }
        });
      }
    } else if (change === 'state') {
      const live = model.state === 'live';
      if (this._wasLive && !live) {
        // The kernel restarted, died or was changed. Nothing queued can be
        // sent, and the listing names objects of a process that is gone.
        this._queue.failQueued(
          trans.__(
            'The kernel went away before the request was sent (%1)',
            model.stateReason
          )
        );
        // A result such as "gc collected 0 objects" was about that process,
        // not the next one, so it is cleared.
        this._lastOutcome = null;
        this._holders.forget();
        this._emit('outcome');
      }
      if (live && !this._wasLive && this._lastOutcome) {
        // This is a new kernel process or connection. What was said before,
        // for example that a request never reached the kernel that went
        // away, no longer applies.
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
  private _holders: HoldersListing;
  private _lastOutcome: ActionOutcome | null = null;
  private _deleting = false;
  private _changed = new Signal<this, MemoryActionsChange>(this);
  private _isDisposed = false;
}

/** The types that go with MemoryActions. */
export namespace MemoryActions {
  /** The options a new MemoryActions is constructed with. */
  export interface IOptions {
    connection: ICleanupConnection;
    /**
     * The kernel's memory model. Its state and busy flag decide when the
     * queue sends requests.
     */
    model: IKernelMemoryModel;
    /** The units of the result sentences, as the setting chooses them. */
    units?: () => ByteUnits;
  }
}
