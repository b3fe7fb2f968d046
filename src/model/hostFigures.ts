/**
 * The RAM a kernel may use, derived from a sample's host part: its
 * container's limit when one is set (the kernel is killed there, long before
 * the node runs out, unless it can swap: then once its swap is full too,
 * see swapFigures.ts), else the machine's RAM. The Host RAM card, the status
 * bar and the death explanation all measure against this, so they agree.
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
  /** What is left under that limit (never more than the machine has left). */
  available: number | null;
  /** The kernel's RSS. */
  rss: number | null;
  /**
   * In use under the limit: the container's working set (its usage less the
   * page cache it can reclaim), or total - available.
   */
  used: number | null;
  /** used - rss: other processes (and, in a container, page cache still active). */
  others: number | null;
  /** Share of the limit in use (by anyone under it), 0..100+. */
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
    // The working set, as docker stats and Kubernetes count it: the file cache
    // a dataset read leaves is given back before any OOM kill, not in use.
    const usage = container.usage_bytes;
    const workingSet =
      usage !== null
        ? Math.max(0, usage - (container.inactive_file_bytes ?? 0))
        : null;
    // The kernel's RSS is charged to its cgroup: usage is never below it.
    used =
      workingSet !== null && rss !== null
        ? Math.max(workingSet, rss)
        : workingSet;
    // Without the usage, what is left under the limit is not known: the
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
