/**
 * The words of a stop: what happened (or why nothing was signalled), and
 * the memory measured just before the signal and once the process ended.
 * Pure functions; the process's name and the helper's own sentence are
 * kernel text, shown as text.
 */
import { ByteUnits, formatBytes } from '../../text/format';
import type { StopMemory, StopProcessResult } from '../../protocol/processes';
import { trans } from '../../text/translation';
import type { StopState } from './ProcessTracker';
import { roleText } from './processText';

/** Why nothing was signalled, in words; an unknown refusal gives the helper's own sentence. */
export function refusalText(result: StopProcessResult): string {
  const pid = result.pid;
  switch (result.refusal) {
    case 'kernel':
      return trans.__('Not stopped: pid %1 is the kernel itself.', pid);
    case 'gone':
      return trans.__('Not stopped: pid %1 had already ended.', pid);
    case 'reused':
      return trans.__(
        'Not stopped: pid %1 is another process now (its start time differs), so it was left alone.',
        pid
      );
    case 'not_descendant':
      return trans.__(
        "Not stopped: pid %1 is not one of the kernel's processes.",
        pid
      );
    case 'permission':
      return trans.__(
        'Not stopped: the system refused to signal pid %1 (permission).',
        pid
      );
    default:
      return trans.__(
        'Not stopped: %1',
        result.reason ?? result.refusal ?? result.outcome
      );
  }
}

/** What the signals did, in one sentence. */
function outcomeText(result: StopProcessResult, label: string): string {
  const waited = `${result.waited_s.toFixed(1)} s`;
  switch (result.outcome) {
    case 'terminated':
      return trans.__('Stopped %1: it ended on SIGTERM.', label);
    case 'killed':
      return trans.__(
        'Stopped %1: it did not end on SIGTERM within %2, and SIGKILL ended it.',
        label,
        waited
      );
    case 'survived':
      return trans.__(
        '%1 is still there after SIGTERM and SIGKILL (waited %2): it may be stuck in the kernel (uninterruptible sleep).',
        label,
        waited
      );
    default:
      return trans.__('%1: %2', label, result.outcome);
  }
}

/** The memory measured around a stop: the processes' host memory, the available RAM and each GPU's use, before → after. */
export function memoryLines(
  before: StopMemory,
  after: StopMemory,
  units: ByteUnits
): string[] {
  const lines: string[] = [];
  const arrow = (a: number | null, b: number | null) =>
    `${formatBytes(a, units)} \u2192 ${formatBytes(b, units)}`;
  if (before.totals || after.totals) {
    // No totals after: the kernel has no process left, which hold nothing.
    lines.push(
      trans.__(
        "The kernel's processes (host): %1",
        arrow(
          before.totals ? before.totals.processes_host_bytes : 0,
          after.totals ? after.totals.processes_host_bytes : 0
        )
      )
    );
  }
  lines.push(
    trans.__(
      'Available RAM: %1',
      arrow(before.available_bytes, after.available_bytes)
    )
  );
  for (const gpu of before.gpus) {
    const later = after.gpus.find(g => g.index === gpu.index);
    lines.push(
      trans.__(
        'GPU %1 used: %2',
        gpu.index,
        arrow(gpu.used_bytes, later?.used_bytes ?? null)
      )
    );
  }
  return lines;
}

/** "DataLoader worker pid 4312". */
export function processLabel(role: string, pid: number): string {
  return trans.__('%1 pid %2', roleText(role), pid);
}

/**
 * The lines that say how a stop went: the outcome first (notifications
 * keep it alone), then the memory before and after.
 */
export function stopLines(state: StopState, units: ByteUnits): string[] {
  const label = processLabel(state.process.role, state.process.pid);
  if (state.status === 'stopping') {
    return [trans.__('Stopping %1\u2026', label)];
  }
  if (state.status === 'failed') {
    return [trans.__('Could not stop %1: %2', label, state.error)];
  }
  const result = state.result;
  if (result.outcome === 'refused') {
    return [refusalText(result)];
  }
  const lines = [outcomeText(result, label)];
  if (result.still_zombie) {
    lines.push(
      trans.__(
        'It stays listed by the system as ended (a zombie, no memory) until the notebook joins or waits for it.'
      )
    );
  }
  return [...lines, ...memoryLines(result.before, result.after, units)];
}
