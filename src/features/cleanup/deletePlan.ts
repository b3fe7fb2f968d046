/**
 * What a delete will do: the names and hidden holders the user ticked in a
 * listing, and the bytes to expect back. The functions are pure; the
 * confirmation dialog shows a plan, and the `delete` request is built from
 * the same plan.
 *
 * The expected bytes are the sum of `total_bytes` of what is ticked; the
 * kernel counts a storage shared by several names once, on the first or
 * largest name. An unticked alias keeps alive what it shares
 * (`shared_bytes_by_device`), so when every name those bytes are counted
 * under is ticked, they are taken off again. Per device, the largest such
 * alias's bytes are taken off, because two aliases may keep the same
 * storage. What is left is still "at most", because an alias whose bytes
 * are partly counted under unticked names cannot be split. A hidden holder
 * gives back only what no listed name holds (`named_bytes_by_device`); the
 * rest is counted with its name, or stays alive with it. Two hidden holders
 * may hold the same objects, which also makes the figure "at most".
 */
import type {
  HiddenHolder,
  HiddenHolderKind,
  HolderEntry,
  InspectResult
} from '../../protocol/cleanup';
import { isHiddenHolderKind } from '../../protocol/commConstants';
import { hiddenHolderText } from './cleanupResultText';
import { trans } from '../../text/translation';

/** The warning for clearing the traceback when the kernel gives none. */
export function tracebackWarning(): string {
  return trans.__('Clearing the traceback disables %%debug for that error');
}

/** The bytes a delete is expected to give back, in all and per device. */
export interface ExpectedBytes {
  /** The bytes expected back in all. */
  bytes: number;
  /** The bytes expected back per device, such as "cuda:0" or "cpu". */
  byDevice: { [device: string]: number };
  /**
   * True when less may come back, because aliases keep some of it alive or
   * some of it may be counted twice.
   */
  atMost: boolean;
  /** The reasons why the figure is "at most", one sentence each. */
  reasons: string[];
}

/**
 * What a delete will do: the holders the user ticked in one listing and the
 * bytes to expect back.
 */
export interface DeletePlan {
  listingId: string;
  /** The ticked deletable entries, in listing order. */
  entries: HolderEntry[];
  /** The ticked hidden holders, in listing order. */
  hidden: (HiddenHolder & { holder: HiddenHolderKind })[];
  expected: ExpectedBytes;
  /**
   * The warnings of the hidden holders to clear. Clearing the traceback
   * always has one.
   */
  warnings: string[];
}

/** The warning shown for clearing a hidden holder, if any. */
export function hiddenHolderWarning(holder: HiddenHolder): string | null {
  if (holder.warning) {
    return holder.warning;
  }
  return holder.holder === 'last_traceback' ? tracebackWarning() : null;
}

/**
 * The bytes that deleting `entries` and clearing `hidden` should give back.
 * `others` are the listing's entries that are not ticked; what they keep
 * alive is taken off where that can be told.
 */
export function expectedFreedBytes(
  entries: readonly HolderEntry[],
  hidden: readonly HiddenHolder[],
  others: readonly HolderEntry[] = []
): ExpectedBytes {
  const byDevice: { [device: string]: number } = {};
  let bytes = 0;
  const add = (device: string, n: number) => {
    byDevice[device] = (byDevice[device] ?? 0) + n;
    bytes += n;
  };
  for (const entry of entries) {
    for (const [device, n] of Object.entries(entry.bytes_by_device)) {
      add(device, n);
    }
  }
  const reasons: string[] = [];
  const tickedHolders = hidden.map(h => h.holder);
  hidden.forEach((holder, i) => {
    // What another hidden holder also holds (`held_also_by`) stays alive
    // with it when that holder is not ticked. When it is ticked, the shared
    // objects are counted once, on the first of the two.
    const overlaps = (holder.held_also_by ?? []).filter(
      o =>
        !tickedHolders.includes(o.holder) || tickedHolders.indexOf(o.holder) < i
    );
    for (const o of overlaps) {
      if (!tickedHolders.includes(o.holder)) {
        reasons.push(
          trans.__(
            '%1 holds some of the same objects as %2, which stays',
            hiddenHolderText(holder.holder),
            hiddenHolderText(o.holder)
          )
        );
      }
    }
    // What a listed name also holds is counted with that name if it is
    // ticked, and stays alive with it if not, so it is never this holder's
    // to give back. The overlaps with two other holders may or may not be
    // the same objects; their sum is taken off, which can only promise less
    // than comes back, never more.
    for (const [device, n] of Object.entries(holder.bytes_by_device)) {
      const kept = overlaps.reduce(
        (sum, o) => sum + (o.bytes_by_device[device] ?? 0),
        0
      );
      add(
        device,
        Math.max(0, n - (holder.named_bytes_by_device[device] ?? 0) - kept)
      );
    }
  });
  const ticked = new Set(entries.map(e => e.name));
  for (const entry of entries) {
    const kept = entry.shared_with.filter(name => !ticked.has(name));
    if (kept.length) {
      reasons.push(
        trans._n(
          '%2 shares storage with %3, which stays',
          '%2 shares storage with %3, which stay',
          kept.length,
          entry.name,
          kept.join(', ')
        )
      );
    }
  }
  const keptAlive: { [device: string]: number } = {};
  for (const other of others) {
    const owners = other.counted_under;
    if (
      ticked.has(other.name) ||
      !owners.length ||
      !owners.every(name => ticked.has(name))
    ) {
      continue;
    }
    for (const [device, n] of Object.entries(other.shared_bytes_by_device)) {
      keptAlive[device] = Math.max(keptAlive[device] ?? 0, n);
    }
  }
  for (const [device, n] of Object.entries(keptAlive)) {
    const taken = Math.min(n, byDevice[device] ?? 0);
    byDevice[device] = (byDevice[device] ?? 0) - taken;
    bytes -= taken;
    if (byDevice[device] === 0) {
      // "cuda:0 0 B" beside what does come back would tell the user nothing.
      delete byDevice[device];
    }
  }
  const cache = hidden.find(h => h.holder === 'output_cache');
  if (
    cache &&
    Object.keys(cache.named_bytes_by_device).length === 0 &&
    entries.some(e => e.output_cache_refs.length > 0)
  ) {
    // A helper of an older version does not say what the cache shares with
    // names, so the overlap can only be mentioned.
    reasons.push(trans.__('the output cache holds some of the same objects'));
  }
  if (hidden.length > 1) {
    reasons.push(trans.__('the hidden references may hold the same objects'));
  }
  return { bytes, byDevice, atMost: reasons.length > 0, reasons };
}

/**
 * The plan for deleting `names` and clearing `hidden` of `listing`. Names
 * that are not in the listing or not deletable, and unknown holders, are
 * left out. Null when nothing would be deleted.
 */
export function makeDeletePlan(
  listing: InspectResult,
  names: Iterable<string>,
  hidden: Iterable<string>
): DeletePlan | null {
  const wanted = new Set(names);
  const wantedHidden = new Set(hidden);
  const entries = listing.entries.filter(
    e => e.deletable && wanted.has(e.name)
  );
  const holders = listing.hidden.filter(
    (h): h is HiddenHolder & { holder: HiddenHolderKind } =>
      isHiddenHolderKind(h.holder) && wantedHidden.has(h.holder)
  );
  if (!entries.length && !holders.length) {
    return null;
  }
  const warnings: string[] = [];
  for (const h of holders) {
    const warning = hiddenHolderWarning(h);
    if (warning && !warnings.includes(warning)) {
      warnings.push(warning);
    }
  }
  return {
    listingId: listing.listing_id,
    entries,
    hidden: holders,
    expected: expectedFreedBytes(
      entries,
      holders,
      listing.entries.filter(e => !wanted.has(e.name) || !e.deletable)
    ),
    warnings
  };
}
