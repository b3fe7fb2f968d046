/**
 * A diagnosis whose error came from a cluster worker: the assistant names
 * the worker and its last figures, gives the remedies that apply on a
 * cluster, offers the cluster's actions, and shows none of the kernel's
 * own device figures as the worker's.
 */
import { makeOomDiagnosis } from '../../testing/cellFixtures';
import { makeClusterOomWorker } from '../../testing/clusterFixtures';
import { CommandIDs } from '../../ui/commandIds';
import { oomActions } from './oomActions';
import { explainOom } from './oomExplanation';

describe('an out-of-memory error on a cluster worker', () => {
  it('names the worker and its last figures, and gives the cluster remedies', () => {
    const d = { ...makeOomDiagnosis(), cluster_worker: makeClusterOomWorker() };
    const text = explainOom(d, 'decimal', 7);
    expect(text.headline).toBe(
      'Cell [7] failed: a Dask worker of tcp://127.0.0.1:8786 ran out of memory.'
    );
    expect(text.causes[0].text).toBe(
      'The workers that ran the task died, the last of them tcp://127.0.0.1:40003 (pid 5003): most often a worker past its memory limit. Its last figures: used 1.9 GB of its 2 GB limit.'
    );
    expect(text.causes[1].text).toContain('smaller partitions');
    expect(text.causes[1].text).toContain('more memory per worker');
    expect(text.causes[1].text).toContain('fewer threads per worker');
  });

  it("shows none of the kernel's own figures as the worker's", () => {
    const d = { ...makeOomDiagnosis(), cluster_worker: makeClusterOomWorker() };
    expect(explainOom(d, 'binary').figures).toEqual([]);
    expect(
      explainOom(makeOomDiagnosis(), 'binary').figures.length
    ).toBeGreaterThan(0);
  });

  it('offers emptying the CUDA cache across the workers after a CUDA error, and gc otherwise', () => {
    const cuda = {
      ...makeOomDiagnosis(),
      cluster_worker: makeClusterOomWorker({ kind: 'cuda_oom' })
    };
    const actions = oomActions(cuda, 'binary');
    expect(actions.map(a => a.id)).toEqual([
      'show-cluster',
      'cluster-empty-cache'
    ]);
    expect(actions[1].steps).toEqual([
      {
        command: CommandIDs.clusterEmptyCache,
        args: { cluster: 'tcp://127.0.0.1:8786' }
      }
    ]);
    expect(explainOom(cuda, 'binary').causes[1].text).toContain(
      'emptying the CUDA cache across the workers'
    );
    const host = {
      ...makeOomDiagnosis(),
      cluster_worker: makeClusterOomWorker()
    };
    expect(oomActions(host, 'binary').map(a => a.id)).toEqual([
      'show-cluster',
      'cluster-gc'
    ]);
  });

  it('says so where the helper never read the worker', () => {
    const d = {
      ...makeOomDiagnosis(),
      cluster_worker: makeClusterOomWorker({
        last: null,
        worker: null,
        pid: null,
        kind: 'oom_killed'
      })
    };
    expect(explainOom(d, 'binary').causes[0].text).toBe(
      "Ray's memory monitor killed a task or an actor on a worker: the node ran low on memory. The helper never read its figures."
    );
  });
});
