/**
 * Allocation recording as a part of every monitored session whose
 * connection can record. Each kernel gets its own AllocationRecorder, which
 * the monitor makes and disposes of together with the session. Its code is
 * fetched when the first kernel is followed, not with the page.
 */
import { isAllocationConnection } from '../../kernel/connectionRequests';
import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { MemoryMonitor } from '../../monitor/MemoryMonitor';
import { SessionPartKind } from '../../monitor/sessionParts';
import type { AllocationRecorder } from './AllocationRecorder';

/** The kind of part that records a kernel's allocations. */
export const ALLOCATION_RECORDING =
  SessionPartKind.loadedLater<AllocationRecorder>(
    'allocation recording',
    async () => {
      const { AllocationRecorder } = await import('./AllocationRecorder');
      return ({ connection, model, settings }) =>
        isAllocationConnection(connection)
          ? new AllocationRecorder({ connection, model, settings })
          : null;
    }
  );

/**
 * The allocation recording of the kernel that `model` describes, or null if
 * none.
 */
export function allocationsFor(
  monitor: MemoryMonitor,
  model: IKernelMemoryModel | null
): AllocationRecorder | null {
  return monitor.partFor(ALLOCATION_RECORDING, model);
}

/**
 * The allocation recording of the active notebook's kernel, or null if none.
 */
export function currentAllocations(
  monitor: MemoryMonitor
): AllocationRecorder | null {
  return monitor.currentPart(ALLOCATION_RECORDING);
}
