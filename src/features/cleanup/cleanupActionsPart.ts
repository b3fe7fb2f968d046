/**
 * The cleanup actions as a part of every monitored session. Each kernel gets
 * its own MemoryActions, with its queue, last outcome and holders listing,
 * which the monitor makes and disposes of together with the session. Their
 * code is fetched when the first kernel is followed, not with the page.
 */
import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { MemoryMonitor } from '../../monitor/MemoryMonitor';
import { SessionPartKind } from '../../monitor/sessionParts';
import type { MemoryActions } from './MemoryActions';

/** The kind of part that holds a kernel's cleanup actions. */
export const CLEANUP_ACTIONS = SessionPartKind.loadedLater<MemoryActions>(
  'cleanup actions',
  async () => {
    const { MemoryActions } = await import('./MemoryActions');
    return ({ connection, model, settings }) =>
      new MemoryActions({ connection, model, units: () => settings().units });
  }
);

/** The cleanup actions of the kernel that `model` describes, or null if none. */
export function actionsFor(
  monitor: MemoryMonitor,
  model: IKernelMemoryModel | null
): MemoryActions | null {
  return monitor.partFor(CLEANUP_ACTIONS, model);
}

/** The cleanup actions of the active notebook's kernel, or null if none. */
export function currentActions(monitor: MemoryMonitor): MemoryActions | null {
  return monitor.currentPart(CLEANUP_ACTIONS);
}
