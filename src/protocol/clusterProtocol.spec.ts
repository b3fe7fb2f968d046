/**
 * The readers of the cluster protocol: a `cluster` message of 64 workers
 * reads whole, a bad worker, event or cluster is dropped with a note and
 * never throws, open strings are kept as sent, and a cell record's or a
 * diagnosis's cluster part reads where present and stays absent otherwise.
 */
import { parseCellRecord } from './cell';
import { parseClusterActionResult, parseClusterMessage } from './cluster';
import { readOomDiagnosis } from './oom';
import { parseWith } from './reader';
import { makeOomDiagnosis, oomRecord } from '../testing/cellFixtures';
import {
  makeCellCluster,
  makeClusterActionResult,
  makeClusterEvent,
  makeClusterMessage,
  makeClusterOomWorker,
  makeClusterState,
  makeClusterWorker
} from '../testing/clusterFixtures';

/** The reading of `data`, which the test expects to succeed. */
function read(data: unknown) {
  const parsed = parseClusterMessage(data);
  if ('error' in parsed) {
    throw new Error(parsed.error);
  }
  return parsed.value;
}

describe('parseClusterMessage', () => {
  it('reads a 64-worker message whole, with its events', () => {
    const message = makeClusterMessage(64, 3, {
      events: [makeClusterEvent()]
    });
    const { message: read64, notes } = read(message);
    expect(notes).toEqual([]);
    expect(read64).toEqual(message);
    expect(read64.clusters[0].workers).toHaveLength(64);
  });

  it('keeps unknown words as the kernel sent them', () => {
    const state = makeClusterState(1, 0, {
      engine: 'spark',
      status: 'degraded',
      found_by: 'magic',
      workers: [
        makeClusterWorker(0, 0, {
          role: 'executor',
          memory_source: 'cgroup',
          gpus: [{ ...makeClusterWorker(0).gpus[0], scope: 'mig' }]
        })
      ]
    });
    const { message } = read(
      makeClusterMessage(1, 0, {
        clusters: [state],
        events: [makeClusterEvent({ kind: 'evicted' })]
      })
    );
    const c = message.clusters[0];
    expect([c.engine, c.status, c.found_by]).toEqual([
      'spark',
      'degraded',
      'magic'
    ]);
    expect(c.workers[0].role).toBe('executor');
    expect(c.workers[0].gpus[0].scope).toBe('mig');
    expect(message.events[0].kind).toBe('evicted');
  });

  it('drops a malformed worker, event or cluster with a note, and keeps the rest', () => {
    const state = makeClusterState(3);
    (state.workers[1] as any).memory_bytes = -5;
    const { message, notes } = read({
      ...makeClusterMessage(),
      clusters: [state, { engine: 'ray' }],
      events: [makeClusterEvent(), { id: 'x' }]
    });
    expect(message.clusters).toHaveLength(1);
    expect(message.clusters[0].workers.map(w => w.name)).toEqual(['0', '2']);
    expect(message.events).toHaveLength(1);
    expect(notes).toHaveLength(3);
    expect(notes[0]).toContain('workers[1].memory_bytes');
  });

  it('drops an action it cannot ask for, with a note', () => {
    const state = makeClusterState(1, 0, {
      actions: ['gc', 'scale_down' as any]
    });
    const { message, notes } = read(
      makeClusterMessage(1, 0, { clusters: [state] })
    );
    expect(message.clusters[0].actions).toEqual(['gc']);
    expect(notes[0]).toContain('scale_down');
  });

  it('answers an error, never a throw, for what is not a cluster message', () => {
    for (const bad of [null, 7, [], { type: 'sample' }, { type: 'cluster' }]) {
      expect(parseClusterMessage(bad)).toEqual({ error: expect.any(String) });
    }
  });

  it('reads the empty message sent when the last cluster goes', () => {
    const { message } = read(makeClusterMessage(0, 0, { clusters: [] }));
    expect(message.clusters).toEqual([]);
  });
});

describe('parseClusterActionResult', () => {
  it('reads a result, and adds a bad worker entry to its message', () => {
    const result = makeClusterActionResult(2, { message: 'One was slow.' });
    expect(parseClusterActionResult(result)).toEqual({ value: result });
    const bad = { ...result, workers: [result.workers[0], { id: 3 }] };
    const parsed = parseClusterActionResult(bad);
    expect('value' in parsed && parsed.value.workers).toHaveLength(1);
    expect('value' in parsed && parsed.value.message).toMatch(
      /^One was slow\. cluster_action\.workers\[1\]\.id/
    );
  });

  it('refuses an action it does not know', () => {
    expect(
      parseClusterActionResult({ ...makeClusterActionResult(), action: 'x' })
    ).toEqual({ error: expect.stringContaining('cluster_action.action') });
  });
});

describe("a cell record's and a diagnosis's cluster parts", () => {
  it('reads a record with cluster figures, and one without stays without', () => {
    const withCluster = parseCellRecord({
      ...oomRecord(),
      cluster: makeCellCluster({ events: [1, 2] })
    });
    expect('record' in withCluster && withCluster.record.cluster).toEqual(
      makeCellCluster({ events: [1, 2] })
    );
    const old = parseCellRecord(oomRecord());
    expect('record' in old && 'cluster' in old.record).toBe(false);
    const bad = parseCellRecord({
      ...oomRecord(),
      cluster: makeCellCluster({ events: [0] })
    });
    expect(bad).toEqual({
      error: expect.stringContaining('record.cluster.events[0]')
    });
  });

  it("reads a diagnosis's worker, and leaves the key out without one", () => {
    const oom = parseWith(
      { ...makeOomDiagnosis(), cluster_worker: makeClusterOomWorker() },
      'oom',
      readOomDiagnosis
    );
    expect('value' in oom && oom.value.cluster_worker).toEqual(
      makeClusterOomWorker()
    );
    const plain = parseWith(makeOomDiagnosis(), 'oom', readOomDiagnosis);
    expect('value' in plain && 'cluster_worker' in plain.value).toBe(false);
  });
});
