/**
 * ClusterTracker: it takes in cluster messages from the connection's other
 * messages, keeps events by id (newest first, bounded, across a helper
 * restart and after the cluster goes), says when the cluster went away,
 * ignores other messages, and runs actions without ever rejecting.
 */
import { Signal } from '@lumino/signaling';

import { parseClusterMessage } from '../../protocol/cluster';
import {
  makeClusterActionResult,
  makeClusterEvent,
  makeClusterMessage,
  makeClusterState
} from '../../testing/clusterFixtures';
import { ClusterTracker, MAX_CLUSTER_EVENTS } from './ClusterTracker';

function setup(clusterAction = jest.fn(async () => makeClusterActionResult())) {
  const otherMessage = new Signal<unknown, unknown>({});
  const tracker = new ClusterTracker({
    connection: { clusterAction, otherMessage },
    read: parseClusterMessage
  });
  const changes: string[] = [];
  tracker.changed.connect((_, change) => changes.push(change));
  return { tracker, otherMessage, clusterAction, changes };
}

describe('ClusterTracker', () => {
  it('takes in cluster messages from the connection and ignores the others', () => {
    const { tracker, otherMessage, changes } = setup();
    otherMessage.emit({ type: 'estimate_progress' });
    expect(changes).toEqual([]);
    otherMessage.emit(makeClusterMessage(64, 1));
    expect(tracker.clusters[0].workers).toHaveLength(64);
    expect(tracker.everSeen).toBe(true);
    expect(tracker.time).toBe(makeClusterMessage(64, 1).time);
    expect(changes).toEqual(['clusters']);
  });

  it('keeps events by id, newest first, and bounded', () => {
    const { tracker } = setup();
    const e1 = makeClusterEvent({ id: 1, time: 10 });
    const e2 = makeClusterEvent({ id: 2, time: 20, kind: 'paused' });
    tracker.ingest(makeClusterMessage(2, 0, { events: [e1] }));
    tracker.ingest(makeClusterMessage(2, 1, { events: [e1, e2] }));
    expect(tracker.events.map(e => e.event.id)).toEqual([2, 1]);
    const many = Array.from({ length: MAX_CLUSTER_EVENTS + 20 }, (_, i) =>
      makeClusterEvent({ id: i + 10, time: 100 + i })
    );
    tracker.ingest(makeClusterMessage(2, 2, { events: many }));
    expect(tracker.events).toHaveLength(MAX_CLUSTER_EVENTS);
    expect(tracker.events[0].event.id).toBe(MAX_CLUSTER_EVENTS + 29);
  });

  it('keeps the events of an earlier helper apart when a new one counts from 1 again', () => {
    const { tracker } = setup();
    tracker.ingest(
      makeClusterMessage(1, 5, {
        events: [makeClusterEvent({ id: 1, time: 1 })]
      })
    );
    tracker.ingest(
      makeClusterMessage(1, 0, {
        events: [makeClusterEvent({ id: 1, time: 2 })]
      })
    );
    expect(tracker.events.map(e => e.key)).toEqual(['2:1', '1:1']);
  });

  it('says the cluster went away, and keeps its events', () => {
    const { tracker } = setup();
    tracker.ingest(makeClusterMessage(2, 0, { events: [makeClusterEvent()] }));
    expect(tracker.wentAway).toEqual([]);
    tracker.ingest(makeClusterMessage(0, 1, { clusters: [] }));
    expect(tracker.clusters).toEqual([]);
    expect(tracker.wentAway).toEqual(['tcp://127.0.0.1:8786']);
    expect(tracker.events).toHaveLength(1);
  });

  it('keeps a note, not a throw, for a message it cannot read', () => {
    const { tracker } = setup();
    expect(() => tracker.ingest({ type: 'cluster', seq: 'x' })).not.toThrow();
    expect(tracker.notes[0]).toContain('cluster.seq');
    expect(tracker.clusters).toEqual([]);
  });

  it('runs an action with the cluster named as the kernel gave it, and keeps the newer allocator', async () => {
    const { tracker, clusterAction } = setup(
      jest.fn(async () =>
        makeClusterActionResult(1, {
          action: 'read_allocators',
          workers: [
            {
              ...makeClusterActionResult(1).workers[0],
              allocator: {
                read_at: 5,
                torch: true,
                cuda_initialized: true,
                devices: []
              }
            }
          ]
        })
      )
    );
    tracker.ingest(makeClusterMessage(2));
    const state = await tracker.run(makeClusterState(2), 'read_allocators', 20);
    expect(clusterAction).toHaveBeenCalledWith({
      engine: 'dask',
      cluster: 'tcp://127.0.0.1:8786',
      action: 'read_allocators',
      timeout_s: 20
    });
    expect(state.status).toBe('done');
    expect(tracker.allocatorOf('tcp://127.0.0.1:40000')?.read_at).toBe(5);
    expect(tracker.allocatorOf('tcp://127.0.0.1:40001')).toBeNull();
  });

  it('turns a failed request into a failed state', async () => {
    const { tracker } = setup(
      jest.fn(async () => {
        throw new Error('The helper did not answer.');
      })
    );
    const state = await tracker.run(makeClusterState(1), 'gc');
    expect(state).toEqual({
      status: 'failed',
      cluster: 'tcp://127.0.0.1:8786',
      action: 'gc',
      error: expect.stringContaining('did not answer')
    });
    expect(tracker.isActing).toBe(false);
  });

  it('cannot act without a connection, and says so', async () => {
    const tracker = new ClusterTracker({
      connection: null,
      read: parseClusterMessage
    });
    expect(tracker.canAct).toBe(false);
    expect((await tracker.run(makeClusterState(1), 'gc')).status).toBe(
      'failed'
    );
  });
});
