/**
 * The question before an action across a cluster's workers: which cluster
 * and how many workers, what the action does (a restart: that it restarts
 * every worker and loses their data), and the accept button named for it.
 * Cancel is the default button. The cluster's name is kernel text: it goes
 * in as text.
 */
import type { ClusterActionName, ClusterState } from '../../protocol/cluster';
import { trans } from '../../text/translation';
import { confirmSentences } from '../../ui/confirmDialog';
import { actionLabel, actionSentence, clusterHeading } from './clusterText';

/** The sentences of the question; exported for the tests. */
export function clusterActionSentences(
  cluster: ClusterState,
  action: ClusterActionName
): string[] {
  return [
    trans._n(
      '%2 (%1 worker).',
      '%2 (%1 workers).',
      cluster.totals.workers,
      clusterHeading(cluster)
    ),
    actionSentence(action)
  ];
}

/** Asks whether to run `action` on `cluster`; true when the user confirms. */
export function confirmClusterAction(
  cluster: ClusterState,
  action: ClusterActionName
): Promise<boolean> {
  return confirmSentences({
    title: trans.__('%1?', actionLabel(action)),
    role: 'cluster-action-dialog',
    sentences: clusterActionSentences(cluster, action),
    accept: action === 'restart' ? trans.__('Restart') : trans.__('Run'),
    acceptAriaLabel: trans.__('%1 on %2', actionLabel(action), cluster.name)
  });
}
