/**
 * The out-of-memory assistant's words and fixes for an error that came
 * from a cluster worker (a diagnosis whose `cluster_worker` is set): which
 * worker, its last figures before the error, and the remedies that apply
 * on a cluster. The kernel's own device and host figures say nothing about
 * the worker's memory, so none of them is shown as the worker's.
 */
import type { ClusterOomWorker } from '../../protocol/cluster';
import { ByteUnits } from '../../text/format';
import { trans } from '../../text/translation';
import { CommandIDs } from '../../ui/commandIds';
import {
  engineText,
  eventSentence,
  lastFiguresText
} from '../cluster/clusterText';
import type { OomAction } from './oomAction';

/** Whether the worker ran out of GPU memory rather than host memory. */
function onGpu(w: ClusterOomWorker): boolean {
  return w.kind === 'cuda_oom';
}

/** The remedies that apply on a cluster, in one sentence. */
function remedies(w: ClusterOomWorker): string {
  return onGpu(w)
    ? trans.__(
        'On a cluster: smaller batches or partitions per task, fewer tasks per GPU (fewer threads per worker), or emptying the CUDA cache across the workers where earlier tasks left it full.'
      )
    : trans.__(
        'On a cluster: smaller partitions (more, smaller chunks), more memory per worker (fewer workers with a larger limit), or fewer threads per worker, so that fewer tasks hold memory at once.'
      );
}

/** The diagnosis of an error on a cluster worker, in words. */
export function explainClusterOom(
  w: ClusterOomWorker,
  units: ByteUnits,
  executionCount: number | null
): {
  headline: string;
  causes: { cause: string; text: string }[];
  figures: [];
} {
  const cell =
    executionCount === null
      ? trans.__('The cell')
      : trans.__('Cell [%1]', executionCount);
  const who = w.worker ?? trans.__('a worker');
  const headline = trans.__(
    '%1 failed: a %2 worker of %3 ran out of memory.',
    cell,
    engineText(w.engine),
    w.cluster
  );
  const where = w.pid === null ? who : trans.__('%1 (pid %2)', who, w.pid);
  const lastSentence = w.last
    ? trans.__('Its last figures: %1.', lastFiguresText(w.last, null, units))
    : trans.__('The helper never read its figures.');
  return {
    headline,
    causes: [
      {
        cause: 'cluster_worker',
        text: `${eventSentence({ worker: where, kind: w.kind })} ${lastSentence}`
      },
      { cause: 'cluster_remedies', text: remedies(w) }
    ],
    // The kernel's figures are not the worker's: none is shown.
    figures: []
  };
}

/** The fixes that apply on a cluster: see it, and empty the CUDA cache across the workers after a CUDA error. */
export function clusterOomActions(w: ClusterOomWorker): OomAction[] {
  const actions: OomAction[] = [
    {
      id: 'show-cluster',
      label: trans.__('See the cluster and its workers'),
      gain: trans.__(
        "The Cluster section of the Memory tab shows each worker's memory against its limit, and what happened to them."
      ),
      steps: [{ command: CommandIDs.openSidebar, args: { tab: 'memory' } }]
    }
  ];
  if (onGpu(w)) {
    actions.push({
      id: 'cluster-empty-cache',
      label: trans.__('Empty the CUDA cache on every worker'),
      gain: trans.__(
        'Gives back what PyTorch keeps cached in each worker (asks first); tensors stay.'
      ),
      steps: [
        { command: CommandIDs.clusterEmptyCache, args: { cluster: w.cluster } }
      ]
    });
  } else {
    actions.push({
      id: 'cluster-gc',
      label: trans.__('Collect garbage on every worker'),
      gain: trans.__(
        'Runs gc.collect() in each worker (asks first): frees what only cycles held.'
      ),
      steps: [{ command: CommandIDs.clusterGc, args: { cluster: w.cluster } }]
    });
  }
  return actions;
}
