/**
 * The Cluster section's view, loaded the first time the Memory tab is
 * shown; it follows the active notebook's kernel and its clusters. Its
 * buttons run the cluster commands, which ask first.
 */
import type { ISignal } from '@lumino/signaling';

import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { IVramMonitor } from '../../monitor/IVramMonitor';
import type { ExecuteCommand } from '../../ui/commandIds';
import { followMonitor } from '../../ui/followMonitor';
import { CLUSTER_ACTION_COMMANDS } from './clusterCommandIds';
import type { ClusterTracker } from './ClusterTracker';
import { ClusterView } from './ClusterView';

/** What the section's view needs. */
export interface IClusterSidebarOptions {
  monitor: IVramMonitor;
  /** A kernel's cluster tracking (none yet: the section waits for it). */
  trackerFor: (model: IKernelMemoryModel | null) => ClusterTracker | null;
  /** Fires when a kernel's per-kernel parts were made after their code loaded. */
  partsChanged?: ISignal<unknown, unknown>;
  /** Runs a command (the action buttons run theirs). */
  execute: ExecuteCommand;
}

/** The view of the active kernel's clusters. */
export function createClusterView({
  monitor,
  trackerFor,
  partsChanged,
  execute
}: IClusterSidebarOptions): ClusterView {
  const view = new ClusterView({
    settings: monitor.settings,
    act: (cluster, action) =>
      void execute(CLUSTER_ACTION_COMMANDS[action], { cluster: cluster.name })
  });
  return followMonitor(
    monitor,
    view,
    model => {
      view.tracker = trackerFor(model);
    },
    partsChanged
  );
}
