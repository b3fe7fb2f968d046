/**
 * "Will it fit?" as a part of every monitored session: each kernel gets its
 * own MemoryEstimate, which the monitor makes and disposes of together with
 * the session. Its code is fetched when the first kernel is followed, not
 * with the page.
 */
import { isEstimateConnection } from '../../kernel/connectionRequests';
import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { MemoryMonitor } from '../../monitor/MemoryMonitor';
import { SessionPartKind } from '../../monitor/sessionParts';
import type { MemoryEstimate } from './MemoryEstimate';

/** The kind of part that keeps a kernel's estimate. */
export const MEMORY_ESTIMATE = SessionPartKind.loadedLater<MemoryEstimate>(
  'memory estimate',
  async () => {
    const [{ MemoryEstimate }, { readEstimateProgress }] = await Promise.all([
      import('./MemoryEstimate'),
      import('../../protocol/estimate')
    ]);
    return ({ connection }) =>
      new MemoryEstimate({
        connection: isEstimateConnection(connection) ? connection : null,
        readProgress: readEstimateProgress
      });
  }
);

/** The estimate of the kernel `model` describes; null if none (yet). */
export function estimateFor(
  monitor: Pick<MemoryMonitor, 'partFor'>,
  model: IKernelMemoryModel | null
): MemoryEstimate | null {
  return monitor.partFor(MEMORY_ESTIMATE, model);
}

/** The estimate of the active notebook's kernel; null if none. */
export function currentEstimate(
  monitor: Pick<MemoryMonitor, 'currentPart'>
): MemoryEstimate | null {
  return monitor.currentPart(MEMORY_ESTIMATE);
}
