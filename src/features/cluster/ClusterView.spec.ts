/**
 * ClusterView: hidden while the kernel reports no cluster; 64 worker rows
 * keyed by id and updated in place (the same nodes from reading to
 * reading); the status of a cluster that did not answer, with the age of
 * its figures; the events with their sentences; the cluster that went
 * away; the action's result per worker; and kernel text as text, never
 * HTML.
 */
import { Widget } from '@lumino/widgets';

import { parseClusterMessage } from '../../protocol/cluster';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import {
  makeClusterActionResult,
  makeClusterEvent,
  makeClusterMessage,
  makeClusterState,
  makeClusterWorker
} from '../../testing/clusterFixtures';
import { ClusterTracker } from './ClusterTracker';
import { ClusterView } from './ClusterView';

function setup(
  clusterAction = jest.fn(async () => makeClusterActionResult(2))
) {
  const tracker = new ClusterTracker({
    connection: { clusterAction },
    read: parseClusterMessage
  });
  const acted: string[] = [];
  const view = new ClusterView({
    settings: { ...DEFAULT_SETTINGS },
    act: (c, a) => acted.push(`${a}:${c.name}`)
  });
  Widget.attach(view, document.body);
  view.tracker = tracker;
  const show = (data: unknown) => {
    tracker.ingest(data);
    view.renderNow();
  };
  const q = (role: string) =>
    Array.from(
      view.node.querySelectorAll<HTMLElement>(`[data-vram-role="${role}"]`)
    );
  return { tracker, view, show, q, acted };
}

describe('ClusterView', () => {
  afterEach(() => {
    document.body.replaceChildren();
  });

  it('is hidden while the kernel reports no cluster', () => {
    const { view, show } = setup();
    view.renderNow();
    expect(view.node.hidden).toBe(true);
    show({ type: 'sample' });
    expect(view.node.hidden).toBe(true);
    show(makeClusterMessage(2));
    expect(view.node.hidden).toBe(false);
  });

  it('renders 64 workers and updates the same rows in place', () => {
    const { show, q } = setup();
    show(makeClusterMessage(64, 0));
    const rows = q('cluster-worker');
    expect(rows).toHaveLength(64);
    const memoryBefore = rows[5].querySelector(
      '[data-vram-role="cluster-worker-memory"]'
    )!;
    const textBefore = memoryBefore.textContent;
    show(makeClusterMessage(64, 3));
    const after = q('cluster-worker');
    expect(after).toHaveLength(64);
    after.forEach((row, i) => expect(row).toBe(rows[i]));
    const memoryAfter = after[5].querySelector(
      '[data-vram-role="cluster-worker-memory"]'
    )!;
    expect(memoryAfter).toBe(memoryBefore);
    expect(memoryAfter.textContent).not.toBe(textBefore);
    expect(after[0].dataset.vramWorkerId).toBe('tcp://127.0.0.1:40000');
  });

  it('removes a worker that left and adds one that came, keeping the others', () => {
    const { show, q } = setup();
    show(makeClusterMessage(3));
    const [first] = q('cluster-worker');
    const state = makeClusterState(3);
    state.workers.splice(1, 1, makeClusterWorker(7));
    show(makeClusterMessage(3, 0, { clusters: [state] }));
    const rows = q('cluster-worker');
    expect(rows.map(r => r.dataset.vramWorkerId)).toEqual([
      'tcp://127.0.0.1:40000',
      'tcp://127.0.0.1:40007',
      'tcp://127.0.0.1:40002'
    ]);
    expect(rows[0]).toBe(first);
  });

  it('shows a worker, its bar, its GPU scope and the totals', () => {
    const { show, q } = setup();
    const w = makeClusterWorker(0, 0, {
      memory_bytes: 1.5 * 2 ** 30,
      gpus: [{ ...makeClusterWorker(0).gpus[0], scope: 'device' }]
    });
    show(
      makeClusterMessage(1, 0, {
        clusters: [makeClusterState(1, 0, { workers: [w] })]
      })
    );
    const row = q('cluster-worker')[0];
    expect(
      row.querySelector('[data-vram-role="cluster-worker-memory"]')!.textContent
    ).toBe('1.5 GiB of 2 GiB (75%)');
    expect(
      row.querySelector<HTMLElement>('.jp-vram-Bar-segment')!.style.width
    ).toBe('75.00%');
    expect(
      row.querySelector('[data-vram-role="cluster-worker-gpus"]')!.textContent
    ).toContain('the whole device, every process on it');
    expect(q('cluster-totals')[0].textContent).toContain('1 worker');
    expect(q('cluster-dashboard')[0].textContent).toBe(
      'Dashboard: http://127.0.0.1:8787/status'
    );
    expect(q('cluster-unseen')[0].textContent).toContain('Dask reports no');
  });

  it('states a timeout plainly, with the age of the figures shown', () => {
    const { show, q } = setup();
    const state = makeClusterState(2, 0, {
      status: 'timeout',
      message: 'The scheduler did not answer within 5 s.',
      read_at: 1000
    });
    show(makeClusterMessage(2, 0, { time: 1012, clusters: [state] }));
    expect(q('cluster-status')[0].textContent).toBe(
      'The scheduler did not answer in time. The scheduler did not answer within 5 s. The figures shown are old: read 12 s before.'
    );
    expect(q('cluster-status')[0].hidden).toBe(false);
  });

  it("lists events with a sentence per kind, the last figures and the engine's words", () => {
    const { show, q } = setup();
    show(
      makeClusterMessage(2, 0, {
        time: 1732200013,
        events: [
          makeClusterEvent(),
          makeClusterEvent({ id: 2, kind: 'shrunk', time: 1732200005 })
        ]
      })
    );
    const events = q('cluster-event');
    expect(events.map(e => e.dataset.vramEventKind)).toEqual([
      'memory_restart',
      'shrunk'
    ]);
    expect(events[0].textContent).toContain('Its nanny restarted');
    expect(events[0].textContent).toContain(
      'used 1.77 GiB of its 1.86 GiB limit 3 s before'
    );
    expect(events[0].textContent).toContain('The engine said: Worker tcp://');
    expect(events[1].textContent).toContain('shrunk');
  });

  it('says the cluster went away and keeps the events', () => {
    const { view, show, q } = setup();
    show(makeClusterMessage(2, 0, { events: [makeClusterEvent()] }));
    show(makeClusterMessage(0, 1, { clusters: [] }));
    expect(view.node.hidden).toBe(false);
    expect(q('cluster-block')).toHaveLength(0);
    expect(q('cluster-gone')[0].textContent).toBe(
      'The cluster went away: tcp://127.0.0.1:8786.'
    );
    expect(q('cluster-event')).toHaveLength(1);
  });

  it('puts kernel text in as text', () => {
    const { show, q } = setup();
    const w = makeClusterWorker(0, 0, { name: '<img src=x onerror=alert(1)>' });
    show(
      makeClusterMessage(1, 0, {
        clusters: [makeClusterState(1, 0, { workers: [w] })]
      })
    );
    const name = q('cluster-worker-name')[0];
    expect(name.textContent).toContain('<img');
    expect(name.querySelector('img')).toBeNull();
  });

  it('runs the actions the cluster offers through its buttons, and shows what came back per worker', async () => {
    const { tracker, view, show, q, acted } = setup();
    const state = makeClusterState(2, 0, {
      actions: ['gc', 'read_allocators']
    });
    show(makeClusterMessage(2, 0, { clusters: [state] }));
    expect(q('cluster-action-restart')[0].hidden).toBe(true);
    q('cluster-action-gc')[0].click();
    expect(acted).toEqual(['gc:tcp://127.0.0.1:8786']);
    await tracker.run(state, 'empty_cache');
    view.renderNow();
    const result = q('cluster-action-result')[0];
    expect(result.textContent).toContain(
      'Empty the CUDA cache on the workers: done on 2 of 2 workers.'
    );
    expect(q('cluster-action-worker')[0].textContent).toBe(
      'tcp://127.0.0.1:40000: host 300 MiB returned, GPU reserved 1 GiB returned'
    );
  });
});
