/**
 * This kernel's share of a GPU's activity, from the driver's per-process
 * utilisation (`load.processes`). The GPU card's "This kernel" row gives the
 * kernel's SM share, the share of its own processes (the children in the
 * sample's process tree, such as ranks, workers or an engine) and the other
 * processes' share. Its tooltip lists every process, with the kernel and its
 * processes marked.
 */
import type { GpuProcessLoad } from '../../protocol/load';
import { formatLoadPercent } from '../../text/gpuLoadText';
import { trans } from '../../text/translation';

/**
 * The most processes that the tooltip lists. The wire sends at most 32,
 * busiest first, so these are the busiest.
 */
const LISTED_PROCESSES = 8;

/** What the card's "This kernel" row shows. */
export interface KernelShareText {
  /** The row's one line: the kernel's SM share, its processes' and the other processes'. */
  text: string;
  /** The tooltip, with one line per process and the kernel marked. */
  title: string;
  /** The kernel's SM share (0 when it ran nothing); null when unknown. */
  smPercent: number | null;
}

/** The SM shares of `processes` added up; an unknown share counts as none. */
function sumOf(processes: readonly GpuProcessLoad[]): number {
  return processes.reduce((sum, p) => sum + (p.sm_percent ?? 0), 0);
}

/** The tooltip's line of `p`, marked when it is the kernel or one of its processes. */
function processLine(p: GpuProcessLoad, children: ReadonlySet<number>): string {
  const figures = trans.__(
    'SM %1, memory %2',
    formatLoadPercent(p.sm_percent),
    formatLoadPercent(p.memory_percent)
  );
  if (p.this_process) {
    return trans.__('pid %1 (this kernel): %2', p.pid, figures);
  }
  return children.has(p.pid)
    ? trans.__("pid %1 (this kernel's process): %2", p.pid, figures)
    : trans.__('pid %1: %2', p.pid, figures);
}

/**
 * Words the row's line: the kernel's SM share, its processes' share where
 * any of them ran, and the other processes' share.
 */
function shareLine(
  smPercent: number | null,
  childrenPercent: number | null,
  othersPercent: number
): string {
  const others = formatLoadPercent(othersPercent);
  if (smPercent === null && childrenPercent !== null) {
    // NVML lists the kernel's children but not the kernel (another pid
    // namespace can hide it): their share is still told apart.
    return trans.__(
      'not among the listed processes; its processes %1; other processes %2',
      formatLoadPercent(childrenPercent),
      others
    );
  }
  if (smPercent === null) {
    return trans.__('not among the listed processes; all processes %1', others);
  }
  if (childrenPercent === null) {
    return trans.__(
      'SM %1; other processes %2',
      formatLoadPercent(smPercent),
      others
    );
  }
  return trans.__(
    'SM %1; its processes %2; other processes %3',
    formatLoadPercent(smPercent),
    formatLoadPercent(childrenPercent),
    others
  );
}

/**
 * Words the kernel's share of the activity in `processes`, the driver's
 * per-process list, or returns null when that list is unavailable, in which
 * case the row says why. `children` holds the pids of the kernel's own
 * processes (from the sample's process tree), whose share is given apart
 * from the others'.
 */
export function kernelShareText(
  processes: readonly GpuProcessLoad[] | null,
  children: ReadonlySet<number> = new Set()
): KernelShareText | null {
  if (processes === null) {
    return null;
  }
  if (processes.length === 0) {
    return {
      text: trans.__('idle (no process ran a kernel)'),
      title: trans.__(
        'No process ran a kernel on this GPU since the previous reading.'
      ),
      smPercent: 0
    };
  }
  const mine = processes.filter(p => p.this_process);
  const theirs = processes.filter(p => !p.this_process && children.has(p.pid));
  const others = processes.filter(p => !p.this_process && !children.has(p.pid));
  // Where NVML's pids are not the kernel's (in another pid namespace), no
  // process is marked as the kernel, so its share is unknown, not zero.
  const smPercent = mine.length ? sumOf(mine) : null;
  const text = shareLine(
    smPercent,
    theirs.length ? sumOf(theirs) : null,
    sumOf(others)
  );
  const lines = processes
    .slice(0, LISTED_PROCESSES)
    .map(p => processLine(p, children));
  if (processes.length > LISTED_PROCESSES) {
    lines.push(
      trans.__('and %1 more', String(processes.length - LISTED_PROCESSES))
    );
  }
  return {
    text,
    title: [
      trans.__("Per-process utilisation since the driver's previous reading:"),
      ...lines
    ].join('\n'),
    smPercent
  };
}
