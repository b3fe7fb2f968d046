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
import { isHiddenHolderKind } from '../../protocol/commConstants';
import type { DeletePlan } from './deletePlan';

/** What HoldersListing reads of, and tells, the MemoryActions it belongs to. */
export interface IHoldersListingHost {
  /** Whether a cell, or anything else, keeps the kernel busy at the moment. */
  kernelBusy(): boolean;
  /**
   * Called when the listing, its error, its inspecting flag or the selection
   * changed.
   */
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

  /**
   * The latest listing. It is null before the first one, and once its kernel
   * went away.
   */
  get listing(): InspectResult | null {
    return this._listing;
  }

  /** Why the latest inspect failed, or null when it did not fail. */
  get error(): string | null {
    return this._error;
  }

  /** True while an inspect is queued or running. */
  get inspecting(): boolean {
    return this._inspecting > 0;
  }

  /**
   * True when cells ran since the latest listing, or a delete used it, so
   * that the listing may no longer describe the kernel.
   */
  get stale(): boolean {
    return this._listing !== null && !this.isCurrent(this._listing.listing_id);
  }

  /**
   * True when the listing `listingId` is the latest one the kernel gave, no
   * cell ran since, and no delete used it.
   */
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

  /** Records that an inspect was queued. */
  inspectStarted(): void {
    this._inspecting++;
    this._host.changed('listing');
  }

  /** Records that an inspect ended, whether or not it gave a listing. */
  inspectEnded(): void {
    this._inspecting--;
    this._host.changed('listing');
  }

  /**
   * Takes a new listing. The user's choice keeps only the holders that the
   * new listing can still delete.
   */
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

  /**
   * Records that an inspect failed; `text` says why. The previous listing
   * stays.
   */
  failed(text: string): void {
    this._error = text;
    this._host.changed('listing');
  }

  /**
   * Records that a delete was sent with the listing, so that a second delete
   * asks for a new listing first.
   */
  markUsed(): void {
    this._listingEpoch = -1;
  }

  /**
   * Records that the kernel went busy. The code it runs may bind the listed
   * names to other objects, so the listing is no longer current.
   */
  kernelWentBusy(): void {
    this._busyEpoch++;
  }

  /**
   * Drops the listing when the kernel went away, because it names objects of
   * a process that is gone.
   */
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

  /**
   * Put `item` in or out of `chosen`. A change is reported once, and nothing
   * is reported when `item` was already where it should be.
   */
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
  /**
   * Counts the times the kernel went busy, that is, ran cells. A listing is
   * current while this count has not changed since it came.
   */
  private _busyEpoch = 0;
  /**
   * The value of `_busyEpoch` when the latest listing came. It is -1 when the
   * listing was stale from the start, or a delete used it.
   */
  private _listingEpoch = -1;
  private _selectedNames = new Set<string>();
  private _selectedHidden = new Set<HiddenHolderKind>();
}
