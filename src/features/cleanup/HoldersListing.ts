/**
 * The latest listing of what holds memory in one kernel, whether it still
 * describes the kernel, and the user's choice of holders in it. It has no
 * DOM and sends no requests; MemoryActions asks the kernel and hands the
 * answers here.
 *
 * A listing is current until a cell runs after it or a delete uses it. After
 * a cell has run, a name may be bound to another object, and the hidden
 * holders may hold other things.
 */
import type { HiddenHolderKind, InspectResult } from '../../protocol/cleanup';
import { isHiddenHolderKind } from '../../protocol/messages';
import type { DeletePlan } from './deletePlan';

/** What HoldersListing reads of, and tells, the MemoryActions it belongs to. */
export interface IHoldersListingHost {
  /** Whether a cell (or anything else) keeps the kernel busy now. */
  kernelBusy(): boolean;
  /** The listing (with its error and inspecting flag) or the selection changed. */
  changed(change: 'listing' | 'selection'): void;
}

/**
 * Keeps one kernel's latest listing of memory holders together with the user's
 * ticks in it.
 */
export class HoldersListing {
  constructor(host: IHoldersListingHost) {
    this._host = host;
  }

  /** The latest listing (null before the first, and once its kernel went away). */
  get listing(): InspectResult | null {
    return this._listing;
  }

  /** Why the latest inspect failed (null when it did not). */
  get error(): string | null {
    return this._error;
  }

  /** True while an inspect is queued or running. */
  get inspecting(): boolean {
    return this._inspecting > 0;
  }

  /** Cells ran since the latest listing, or a delete used it. */
  get stale(): boolean {
    return this._listing !== null && !this.isCurrent(this._listing.listing_id);
  }

  /** The listing `listingId` is the latest one the kernel gave, and no cell ran since, nor a delete used it. */
  isCurrent(listingId: string): boolean {
    return (
      !this._host.kernelBusy() &&
      this._listing?.listing_id === listingId &&
      this._listingEpoch === this._busyEpoch
    );
  }

  get selectedNames(): ReadonlySet<string> {
    return this._selectedNames;
  }

  get selectedHidden(): ReadonlySet<HiddenHolderKind> {
    return this._selectedHidden;
  }

  /** An inspect was queued. */
  inspectStarted(): void {
    this._inspecting++;
    this._host.changed('listing');
  }

  /** An inspect ended, with a listing or not. */
  inspectEnded(): void {
    this._inspecting--;
    this._host.changed('listing');
  }

  /** A new listing came: the choice keeps only what it can still delete. */
  received(listing: InspectResult): void {
    this._listing = listing;
    this._listingEpoch = this._host.kernelBusy() ? -1 : this._busyEpoch;
    this._error = null;
    const names = new Set(
      listing.entries.filter(e => e.deletable).map(e => e.name)
    );
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
    this._host.changed('listing');
    this._host.changed('selection');
  }

  /** An inspect failed; `text` says why. The previous listing stays. */
  failed(text: string): void {
    this._error = text;
    this._host.changed('listing');
  }

  /** A delete was sent with the listing: a second delete lists again first. */
  markUsed(): void {
    this._listingEpoch = -1;
  }

  /** The kernel went busy: the listing of before may name other objects after. */
  kernelWentBusy(): void {
    this._busyEpoch++;
  }

  /** The kernel went away: the listing names objects of a process that is gone. */
  forget(): void {
    this._listing = null;
    this._selectedNames.clear();
    this._selectedHidden.clear();
    this._host.changed('listing');
    this._host.changed('selection');
  }

  setNameSelected(name: string, selected: boolean): void {
    this._select(this._selectedNames, name, selected);
  }

  setHiddenSelected(holder: string, selected: boolean): void {
    if (isHiddenHolderKind(holder)) {
      this._select(this._selectedHidden, holder, selected);
    }
  }

  clearSelection(): void {
    if (!this._selectedNames.size && !this._selectedHidden.size) {
      return;
    }
    this._selectedNames.clear();
    this._selectedHidden.clear();
    this._host.changed('selection');
  }

  /** Holders that were deleted are no longer chosen. */
  deselect(
    names: readonly string[],
    hidden: readonly HiddenHolderKind[]
  ): void {
    for (const name of names) {
      this._selectedNames.delete(name);
    }
    for (const holder of hidden) {
      this._selectedHidden.delete(holder);
    }
    this._host.changed('selection');
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
  async planFor(
    names: Iterable<string>,
    hidden: Iterable<string>
  ): Promise<DeletePlan | null> {
    const listing = this._listing;
    if (!listing) {
      return null;
    }
    const chosen = [...names];
    const chosenHidden = [...hidden];
    const { makeDeletePlan } = await import('./deletePlan');
    return makeDeletePlan(listing, chosen, chosenHidden);
  }

  /** Put `item` in or out of `chosen`; a change is told once. */
  private _select<T>(chosen: Set<T>, item: T, selected: boolean): void {
    if (selected === chosen.has(item)) {
      return;
    }
    if (selected) {
      chosen.add(item);
    } else {
      chosen.delete(item);
    }
    this._host.changed('selection');
  }

  private _host: IHoldersListingHost;
  private _listing: InspectResult | null = null;
  private _error: string | null = null;
  private _inspecting = 0;
  /** Counts the kernel's going busy (cells run); a listing is current while it has not moved. */
  private _busyEpoch = 0;
  /** `_busyEpoch` when the latest listing came (-1: stale from the start, or used by a delete). */
  private _listingEpoch = -1;
  private _selectedNames = new Set<string>();
  private _selectedHidden = new Set<HiddenHolderKind>();
}
