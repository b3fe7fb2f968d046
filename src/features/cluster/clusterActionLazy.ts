/**
 * The steps of a cluster command: find the cluster (the one named by
 * `args.cluster`, or the only one), check that the engine offers the
 * action, ask the user where the action changes something, send
 * `cluster_action`, and tell how it went. clusterCommands.ts registers the
 * commands and loads this module with the first use rather than with the
 * page.
 */
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import type { ClusterActionName, ClusterState } from '../../protocol/cluster';
import { trans } from '../../text/translation';
import type { ByteUnits } from '../../text/format';
import type { Notify } from '../../ui/notify';
import type { ClusterActionState, ClusterTracker } from './ClusterTracker';
import { actionLabel, actionResultSentence } from './clusterText';

/** What the action's steps ask of the command that runs them. */
export interface IClusterActionHost {
  current: () => ClusterTracker | null;
  units: () => ByteUnits;
  notify: Notify;
  /** Shows the Memory tab, where the outcome stays. */
  showCluster: () => void;
  /** Asks the user; resolves to true when the action is wanted. */
  confirm: (
    cluster: ClusterState,
    action: ClusterActionName
  ) => Promise<boolean>;
}

/** `args.timeoutS` within the protocol's 1 to 120 s; else the helper's default. */
function timeoutArg(args: ReadonlyPartialJSONObject): number | undefined {
  const t = args.timeoutS;
  return typeof t === 'number' && t >= 1 && t <= 120 ? t : undefined;
}

/** The cluster the command acts on, or a sentence that says why there is none. */
function pickCluster(
  tracker: ClusterTracker | null,
  args: ReadonlyPartialJSONObject
): ClusterState | string {
  if (!tracker) {
    return trans.__('No kernel: open a notebook first.');
  }
  const clusters = tracker.clusters;
  if (!clusters.length) {
    return trans.__('The kernel drives no Dask or Ray cluster now.');
  }
  if (typeof args.cluster === 'string') {
    return (
      tracker.cluster(args.cluster) ??
      trans.__('The kernel drives no cluster named %1 now.', args.cluster)
    );
  }
  return clusters.length === 1
    ? clusters[0]
    : trans.__('The kernel drives several clusters: name one.');
}

/**
 * Runs `action` for the command's `args`: resolves to the action's state,
 * or to null when nothing was asked of the kernel (no such cluster, an
 * action the engine does not offer, or the user said no).
 */
export async function runClusterAction(
  action: ClusterActionName,
  args: ReadonlyPartialJSONObject,
  host: IClusterActionHost
): Promise<ClusterActionState | null> {
  const tracker = host.current();
  const cluster = pickCluster(tracker, args);
  if (typeof cluster === 'string') {
    host.notify(
      'info',
      trans.__('%1: nothing was done. %2', actionLabel(action), cluster)
    );
    return null;
  }
  if (!cluster.actions.includes(action)) {
    host.notify(
      'info',
      trans.__(
        '%1: the cluster %2 does not offer it.',
        actionLabel(action),
        cluster.name
      )
    );
    return null;
  }
  // Reading the allocators changes nothing, so it does not ask.
  if (action !== 'read_allocators' && !(await host.confirm(cluster, action))) {
    return null;
  }
  host.showCluster();
  const state = await tracker!.run(cluster, action, timeoutArg(args));
  if (state.status === 'failed') {
    host.notify(
      'error',
      trans.__('%1 failed: %2', actionLabel(action), state.error)
    );
  } else if (state.status === 'done') {
    host.notify(
      state.result.done && !state.result.message ? 'success' : 'warning',
      actionResultSentence(state.result)
    );
  }
  return state;
}
