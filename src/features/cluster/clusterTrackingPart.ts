/**
 * Cluster tracking as a part of every monitored session: each kernel gets
 * its own ClusterTracker, which the monitor makes and disposes of together
 * with the session. Its code, with the cluster message's reader, is fetched
 * when the first kernel is followed, not with the page.
 */
import { isClusterConnection } from '../../kernel/connectionRequests';
import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { MemoryMonitor } from '../../monitor/MemoryMonitor';
import { SessionPartKind } from '../../monitor/sessionParts';
import type { ClusterTracker } from './ClusterTracker';

/** The kind of part that follows a kernel's clusters. */
export const CLUSTER_TRACKING = SessionPartKind.loadedLater<ClusterTracker>(
  'cluster tracking',
  async () => {
    const [{ ClusterTracker }, { parseClusterMessage }] = await Promise.all([
      import('./ClusterTracker'),
      import('../../protocol/cluster')
    ]);
    return ({ connection }) =>
      new ClusterTracker({
        connection: isClusterConnection(connection) ? connection : null,
        otherMessage: (
          connection as {
            otherMessage?: ClusterTracker.IOptions['otherMessage'];
          }
        ).otherMessage,
        read: parseClusterMessage
      });
  }
);

/** The cluster tracking of the kernel `model` describes; null if none (yet). */
export function clustersFor(
  monitor: Pick<MemoryMonitor, 'partFor'>,
  model: IKernelMemoryModel | null
): ClusterTracker | null {
  return monitor.partFor(CLUSTER_TRACKING, model);
}

/** The cluster tracking of the active notebook's kernel; null if none. */
export function currentClusters(
  monitor: Pick<MemoryMonitor, 'currentPart'>
): ClusterTracker | null {
  return monitor.currentPart(CLUSTER_TRACKING);
}
