/**
 * Process tracking as a part of every monitored session: each kernel gets
 * its own ProcessTracker (with its EngineReleases), which the monitor makes and disposes of together
 * with the session. Its code is fetched when the first kernel is followed,
 * not with the page.
 */
import {
  isEngineConnection,
  isProcessConnection
} from '../../kernel/connectionRequests';
import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { MemoryMonitor } from '../../monitor/MemoryMonitor';
import { SessionPartKind } from '../../monitor/sessionParts';
import type { ProcessTracker } from './ProcessTracker';

/** The kind of part that follows a kernel's processes. */
export const PROCESS_TRACKING = SessionPartKind.loadedLater<ProcessTracker>(
  'process tracking',
  async () => {
    const { ProcessTracker } = await import('./ProcessTracker');
    return ({ connection, model }) =>
      new ProcessTracker({
        connection: isProcessConnection(connection) ? connection : null,
        engines: isEngineConnection(connection) ? connection : null,
        model
      });
  }
);

/** The process tracking of the kernel `model` describes; null if none (yet). */
export function processesFor(
  monitor: Pick<MemoryMonitor, 'partFor'>,
  model: IKernelMemoryModel | null
): ProcessTracker | null {
  return monitor.partFor(PROCESS_TRACKING, model);
}

/** The process tracking of the active notebook's kernel; null if none. */
export function currentProcesses(
  monitor: Pick<MemoryMonitor, 'currentPart'>
): ProcessTracker | null {
  return monitor.currentPart(PROCESS_TRACKING);
}
