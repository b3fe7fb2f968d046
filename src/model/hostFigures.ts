/**
 * The RAM a kernel may use, derived from a sample's host part. That is its
 * container's limit when one is set, because the kernel is killed there long
 * before the node runs out (or, if it can swap, once its swap is full too;
 * see swapFigures.ts). Otherwise it is the machine's RAM. The Host RAM card,
 * the status bar and the death explanation all measure against this, so
 * they agree.
 *
 * An unknown figure stays null, so a derived figure is null as soon as one of
 * its inputs is.
 */
import { percentOf } from '../text/format';
import { HostMemory } from '../protocol/sample';

/** The figures the UI shows for the kernel's host RAM. */
export interface HostFigures {
  /** Whether the limit is a container's (cgroup) rather than the machine's RAM. */
  container: boolean;
  /** The container's limit, or the machine's total RAM. */
  limit: number | null;
  /** What is left under that limit, never more than the machine has left. */
  available: number | null;
  /** The kernel's RSS. */
  rss: number | null;
  /**
   * The memory in use under the limit: the container's working set (its
   * usage less the page cache it can reclaim), or else total less available.
   */
  used: number | null;
  /**
   * Used less the RSS: other processes, and in a container also the page
   * cache that is still active.
   */
  others: number | null;
  /**
   * The share of the limit in use by anyone under it, from 0 to 100 or more.
   */
  usedPercent: number | null;
  /** The container's out-of-memory kills so far, when counted. */
  oomKills: number | null;
  /** The machine's total RAM, whatever the limit. */
  machineTotal: number | null;
}

/** Works out the RAM figures the UI shows from the host part of a sample. */
export function hostFigures(host: HostMemory | null | undefined): HostFigures {
  const rss = host?.rss_bytes ?? null;
  const machineTotal = host?.total_bytes ?? null;
  const machineAvailable = host?.available_bytes ?? null;
  const container = host?.container ?? null;
  let limit: number | null;
  let used: number | null;
  let available: number | null;
  if (container) {
    limit = container.limit_bytes;
    // The working set is used, as docker stats and Kubernetes count it,
    // because the file cache that reading a dataset leaves is given back
    // before any OOM kill and so is not really in use.
    const usage = container.usage_bytes;
    const workingSet =
      usage !== null
        ? Math.max(0, usage - (container.inactive_file_bytes ?? 0))
        : null;
    // The kernel's RSS is charged to its cgroup, so usage is never below it.
    used =
      workingSet !== null && rss !== null
        ? Math.max(workingSet, rss)
        : workingSet;
    // Without the usage, what is left under the limit is not known, and the
    // machine's free RAM would overstate it.
    available = used === null ? null : Math.max(0, limit - used);
    if (available !== null && machineAvailable !== null) {
      available = Math.min(available, machineAvailable);
    }
  } else {
    limit = machineTotal;
    available = machineAvailable;
    used =
      limit !== null && available !== null
        ? Math.max(0, limit - available)
        : null;
  }
  const others = used !== null && rss !== null ? Math.max(0, used - rss) : null;
  return {
    container: container !== null,
    limit,
    available,
    rss,
    used,
    others,
    usedPercent: percentOf(used ?? rss, limit),
    oomKills: container?.oom_kill_count ?? null,
    machineTotal
  };
}
