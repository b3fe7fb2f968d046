/**
 * Swap, derived from a sample's host part. It covers the kernel's own pages
 * in swap, which is memory it holds that its RSS leaves out (a kernel whose
 * pages went to swap shows a small RSS while its arrays still exist), and
 * the swap that its pages may still go to before the out-of-memory killer
 * acts.
 *
 * Where the kernel may swap, a memory limit is not where it dies. Past the
 * limit (a container's memory.max, or the machine's RAM), its pages go to
 * swap, and the killer acts once no more can. The swap that bounds it is the
 * container's swap limit where a cgroup sets one (never more than the
 * machine has), or else the machine's swap.
 *
 * This is a module of its own, apart from hostFigures.ts, because the status
 * bar loads that one with the page, while swap is shown only in the sidebar
 * and in the death explanation, which load later.
 *
 * An unknown figure stays null, as it is when an older helper sends no swap
 * figures, and a figure of 0 stays 0.
 */
import { percentOf } from '../text/format';
import { HostMemory } from '../protocol/sample';

/** The figures the UI shows for swap. */
export interface SwapFigures {
  /** The kernel's own pages in swap (VmSwap), besides its RSS. */
  kernelSwapped: number | null;
  /**
   * Whether a container's cgroup limits the swap, in which case `limit` is
   * that cgroup's limit. When false, no cgroup limits swap, and the
   * machine's swap is the bound.
   */
  container: boolean;
  /**
   * The most swap that the kernel's pages may take: the container's swap
   * limit (never more than the machine's swap), or else the machine's swap.
   * A value of 0 means the kernel cannot swap at all.
   */
  limit: number | null;
  /**
   * The swap in use under that limit, the container's or else the machine's.
   */
  used: number | null;
  /**
   * What may still go to swap: the limit less what is used, never more than
   * the machine has free.
   */
  free: number | null;
  /** The share of the limit in use, from 0 to 100. */
  usedPercent: number | null;
}

/** Works out the swap figures the UI shows from the host part of a sample. */
export function swapFigures(host: HostMemory | null | undefined): SwapFigures {
  const machineTotal = host?.swap_total_bytes ?? null;
  const machineFree = host?.swap_free_bytes ?? null;
  const containerLimit = host?.container?.swap_limit_bytes ?? null;
  let limit: number | null;
  let used: number | null;
  let free: number | null;
  if (containerLimit !== null) {
    limit =
      machineTotal !== null
        ? Math.min(containerLimit, machineTotal)
        : containerLimit;
    used = host?.container?.swap_usage_bytes ?? null;
    free = limit === 0 ? 0 : used !== null ? Math.max(0, limit - used) : null;
    if (free !== null && machineFree !== null) {
      free = Math.min(free, machineFree);
    }
  } else {
    limit = machineTotal;
    free =
      machineFree === null || machineTotal === null
        ? machineFree
        : Math.min(machineFree, machineTotal);
    used = limit !== null && free !== null ? limit - free : null;
  }
  return {
    kernelSwapped: host?.swapped_bytes ?? null,
    container: containerLimit !== null,
    limit,
    used,
    free,
    usedPercent: percentOf(used, limit)
  };
}

/**
 * Whether the figures show room in swap, meaning at least `percent` of the
 * limit is free for the kernel's pages to go to before the out-of-memory
 * killer acts. It is false where the kernel cannot swap or the figures are
 * unknown.
 */
export function swapRoomLeft(swap: SwapFigures, percent: number): boolean {
  return (
    swap.limit !== null &&
    swap.limit > 0 &&
    swap.free !== null &&
    swap.free > 0 &&
    swap.free >= (swap.limit * percent) / 100
  );
}
