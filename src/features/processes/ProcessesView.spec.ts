/** ProcessesView: the list, its messages, the rows' text and the stop outcome. */
import { Widget } from '@lumino/widgets';

import { DEFAULT_SETTINGS } from '../../settings/settings';
import { makeCellRecord } from '../../testing/cellFixtures';
import { liveModel } from '../../testing/cellViewsFixtures';
import { EVIL, makeSample, wire } from '../../testing/fixtures';
import {
  makeProcessTree,
  makeReleasable,
  makeReleaseResult,
  makeStopResult,
  makeTreeProcess
} from '../../testing/processFixtures';
import type { Releasable } from '../../protocol/release';
import { ProcessesView } from './ProcessesView';
import { ProcessTracker, TrackedProcess } from './ProcessTracker';

const T0 = 1732200000;

function setup() {
  const model = liveModel();
  model.setState('live');
  const connection = { stopProcess: jest.fn(), releaseEngine: jest.fn() };
  const tracker = new ProcessTracker({
    connection,
    engines: connection,
    model
  });
  const stopped: TrackedProcess[] = [];
  const released: Releasable[] = [];
  const view = new ProcessesView({
    settings: DEFAULT_SETTINGS,
    stop: p => stopped.push(p),
    release: r => released.push(r)
  });
  Widget.attach(view, document.body);
  view.model = model;
  view.tracker = tracker;
  const q = (role: string) =>
    view.node.querySelector<HTMLElement>(`[data-vram-role="${role}"]`)!;
  const rows = () =>
    Array.from(
      view.node.querySelectorAll<HTMLElement>('[data-vram-role="process-row"]')
    );
  return { model, tracker, view, q, rows, stopped, released, connection };
}

describe('ProcessesView', () => {
  afterEach(() => {
    document.body.innerHTML = '';
  });

  it("says why a kernel without the helper has no list (its state's sentence)", () => {
    const { model, view, q } = setup();
    model.setState('non-python', 'This kernel is not Python: no figures.');
    view.renderNow();
    expect(q('processes-message').textContent).toBe(
      'This kernel is not Python: no figures.'
    );
  });

  it('says when the helper does not report processes, and when there are none', () => {
    const { model, view, q, rows } = setup();
    view.renderNow();
    expect(q('processes-message').textContent).toContain('first figures');
    model.ingest(wire(makeSample()));
    view.renderNow();
    expect(q('processes-message').textContent).toBe(
      'The helper of this kernel does not report processes (an older helper, or a system without /proc).'
    );
    model.ingest(wire(makeSample({ processes: makeProcessTree([], T0) })));
    view.renderNow();
    expect(q('processes-message').textContent).toContain(
      'no process of its own'
    );
    expect(rows()).toHaveLength(0);
    expect(q('processes-summary').hidden).toBe(true);
  });

  it('shows each process: role, pid, command as text, memory with its measure, GPUs, age and cell', () => {
    const { model, view, q, rows } = setup();
    model.ingest(wire(makeSample({ processes: makeProcessTree([], T0) })));
    model.ingest(
      wire({
        type: 'cells',
        records: [
          makeCellRecord({
            execution_count: 3,
            started: T0 + 1,
            duration_s: 0.01
          })
        ]
      })
    );
    const worker = makeTreeProcess({ pid: 10, command: EVIL });
    const sleeper = makeTreeProcess({
      pid: 11,
      role: 'other',
      name: 'sleep',
      command: 'sleep 600',
      depth: 2,
      host: {
        measure: 'rss',
        host_bytes: 2 * 2 ** 20,
        uss_bytes: null,
        pss_bytes: null,
        rss_bytes: 2 * 2 ** 20,
        swap_bytes: null,
        rollup_at: null
      },
      gpus: []
    });
    model.ingest(
      wire(
        makeSample({ processes: makeProcessTree([worker, sleeper], T0 + 2) })
      )
    );
    model.ingest(
      wire(
        makeSample({
          seq: 2,
          processes: makeProcessTree([worker, sleeper], T0 + 122)
        })
      )
    );
    view.renderNow();
    expect(q('processes-message').hidden).toBe(true);
    expect(q('processes-summary').textContent).toBe(
      'Kernel + 2 processes: 614 MiB RAM; GPU 0: 2.99 GiB'
    );
    const [first, second] = rows();
    const text = (row: HTMLElement, role: string) =>
      row.querySelector(`[data-vram-role="${role}"]`)!.textContent;
    expect(text(first, 'process-role')).toBe('DataLoader worker');
    expect(text(first, 'process-pid')).toBe('pid 10');
    expect(text(first, 'process-command')).toBe(EVIL);
    expect(first.querySelector('img')).toBeNull();
    expect(text(first, 'process-host')).toBe('100 MiB USS');
    expect(text(first, 'process-gpus')).toBe('GPU 0: 500 MiB');
    expect(text(first, 'process-age')).toBe('2 min');
    expect(text(first, 'process-origin')).toBe(
      'Started by: [3] (seen after it ended)'
    );
    expect(first.dataset.vramOutlived).toBe('true');
    expect(text(first, 'process-outlived')).toBe('outlived [3]');
    expect(text(second, 'process-host')).toBe('2 MiB RSS');
    const host = second.querySelector<HTMLElement>(
      '[data-vram-role="process-host"]'
    )!;
    expect(host.classList).toContain('jp-vram-Process-rssOnly');
    expect(host.title).toContain('Only the RSS is known');
    expect(
      second.querySelector<HTMLElement>('[data-vram-role="process-gpus"]')!
        .hidden
    ).toBe(true);
  });

  it('runs the stop action for its row, and shows how the last stop went', async () => {
    const { model, view, rows, stopped, tracker, connection, q } = setup();
    const worker = makeTreeProcess({ pid: 10 });
    model.ingest(
      wire(makeSample({ processes: makeProcessTree([worker], T0) }))
    );
    view.renderNow();
    rows()[0]
      .querySelector<HTMLButtonElement>('[data-vram-role="process-stop"]')!
      .click();
    expect(stopped.map(p => p.process.pid)).toEqual([10]);
    connection.stopProcess.mockResolvedValueOnce(
      makeStopResult(worker, {
        outcome: 'killed',
        signals: ['SIGTERM', 'SIGKILL'],
        waited_s: 5
      })
    );
    await tracker.stop(worker);
    view.renderNow();
    expect(rows()).toHaveLength(0);
    const outcome = q('process-stop-outcome');
    expect(outcome.hidden).toBe(false);
    expect(outcome.dataset.vramOutcome).toBe('killed');
    expect(Array.from(outcome.children).map(c => c.textContent)).toEqual([
      'Stopped DataLoader worker pid 10: it did not end on SIGTERM within 5.0 s, and SIGKILL ended it.',
      "The kernel's processes (host): 100 MiB \u2192 0 B",
      'Available RAM: 19.5 GiB \u2192 19.6 GiB',
      'GPU 0 used: 2.99 GiB \u2192 2.5 GiB'
    ]);
  });

  it('says a refusal in words', async () => {
    const { model, view, tracker, connection, q } = setup();
    const worker = makeTreeProcess({ pid: 10 });
    model.ingest(
      wire(makeSample({ processes: makeProcessTree([worker], T0) }))
    );
    connection.stopProcess.mockResolvedValueOnce(
      makeStopResult(worker, {
        outcome: 'refused',
        refusal: 'reused',
        reason: 'pid 10 is another process now',
        signals: []
      })
    );
    await tracker.stop(worker);
    view.renderNow();
    expect(q('process-stop-outcome').textContent).toBe(
      'Not stopped: pid 10 is another process now (its start time differs), so it was left alone.'
    );
    expect(q('process-stop-outcome').title).toBe(
      'pid 10 is another process now'
    );
  });

  it('lists what can be released with its button, and says how the release went, as text', async () => {
    const { model, view, tracker, connection, q, released } = setup();
    const pool = makeReleasable({ name: EVIL, label: EVIL });
    model.ingest(
      wire(makeSample({ processes: makeProcessTree([makeTreeProcess()], T0) }))
    );
    connection.releaseEngine.mockResolvedValueOnce({
      mode: 'list',
      releasables: [pool],
      released: null,
      elapsed_ms: 2
    });
    await tracker.engines.refresh();
    view.renderNow();
    expect(q('releasables').hidden).toBe(false);
    const row = q('releasable-row');
    expect(row.querySelector('img')).toBeNull();
    const text = (role: string) =>
      row.querySelector(`[data-vram-role="${role}"]`)!.textContent;
    expect(text('releasable-name')).toBe(
      `multiprocessing pool \u201c${EVIL}\u201d`
    );
    expect(text('releasable-label')).toBe(EVIL);
    expect(text('releasable-holds')).toBe('2 processes, 100 MiB of RAM');
    row
      .querySelector<HTMLButtonElement>(
        '[data-vram-role="releasable-release"]'
      )!
      .click();
    expect(released).toEqual([pool]);
    connection.releaseEngine.mockResolvedValueOnce(
      makeReleaseResult(pool, {
        outcome: 'partial',
        reason: 'a process is still alive',
        still_alive: [pool.processes[1]],
        waited_s: 10
      })
    );
    await tracker.engines.release(pool);
    // The next tree has no process left: the outcome stays in view.
    model.ingest(
      wire(makeSample({ seq: 2, processes: makeProcessTree([], T0 + 5) }))
    );
    view.renderNow();
    expect(q('processes-message').textContent).toContain(
      'no process of its own'
    );
    expect(q('releasables').hidden).toBe(false);
    expect(q('releasables-list').children).toHaveLength(0);
    const outcome = q('release-outcome');
    expect(outcome.dataset.vramOutcome).toBe('partial');
    expect(Array.from(outcome.children).map(c => c.textContent)).toEqual([
      `Released multiprocessing pool \u201c${EVIL}\u201d in part: a process is still alive.`,
      'Still running after 10.0 s: multiprocessing pool worker pid 4421. Stop them in the list below.',
      "The kernel's processes (host): 100 MiB \u2192 0 B",
      'Available RAM: 19.5 GiB \u2192 19.6 GiB',
      'GPU 0 used: 2.99 GiB \u2192 2.5 GiB'
    ]);
  });

  it('hides the releasables while there are none and nothing was released', () => {
    const { model, view, q } = setup();
    model.ingest(
      wire(makeSample({ processes: makeProcessTree([makeTreeProcess()], T0) }))
    );
    view.renderNow();
    expect(q('releasables').hidden).toBe(true);
  });
});
