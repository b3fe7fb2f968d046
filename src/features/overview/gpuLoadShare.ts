/**
 * This kernel's share of a GPU's activity, from the driver's per-process
 * utilisation (`load.processes`): the kernel's SM share beside the other
 * processes', and every process listed, the kernel marked, for a tooltip.
 */
import type { GpuProcessLoad } from '../../protocol/load';
import { formatLoadPercent } from '../../text/gpuLoadText';
import { trans } from '../../text/translation';

/** The processes listed in the tooltip, busiest first (the wire sends at most 32). */
const LISTED_PROCESSES = 8;

/** What the card's "This kernel" row shows. */
export interface KernelShareText {
  /** One line: the kernel's SM share and the other processes'. */
  text: string;
  /** The tooltip: one line per process, the kernel marked. */
  title: string;
  /** The kernel's SM share (0 when it ran nothing); null when unknown. */
  smPercent: number | null;
}

function sumOf(processes: readonly GpuProcessLoad[]): number {
  return processes.reduce((sum, p) => sum + (p.sm_percent ?? 0), 0);
}

function processLine(p: GpuProcessLoad): string {
  const figures = trans.__(
    'SM %1, memory %2',
    formatLoadPercent(p.sm_percent),
    formatLoadPercent(p.memory_percent)
  );
  return p.this_process
    ? trans.__('pid %1 (this kernel): %2', p.pid, figures)
    : trans.__('pid %1: %2', p.pid, figures);
}

/**
 * The kernel's share of `processes` (null: the list is unavailable, and the
 * row says why).
 */
export function kernelShareText(
  processes: readonly GpuProcessLoad[] | null
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
  const others = processes.filter(p => !p.this_process);
  // Where NVML's pids are not the kernel's (another pid namespace), no
  // process is marked: the kernel's share is then unknown, not zero.
  const smPercent = mine.length ? sumOf(mine) : null;
  const text =
    smPercent === null
      ? trans.__(
          'not among the listed processes; all processes %1',
          formatLoadPercent(sumOf(others))
        )
      : trans.__(
          'SM %1; other processes %2',
          formatLoadPercent(smPercent),
          formatLoadPercent(sumOf(others))
        );
  const lines = processes.slice(0, LISTED_PROCESSES).map(processLine);
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
