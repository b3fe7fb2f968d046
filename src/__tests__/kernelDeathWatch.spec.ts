import { MessageLoop } from '@lumino/messaging';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { DeathNotifier, INotifications } from '../deathNotifier';
import { KernelDeathWatch } from '../kernel/KernelDeathWatch';
import { KernelHelperConnection } from '../kernel/KernelHelperConnection';
import { RunningCellTracker } from '../kernel/RunningCellTracker';
import { cellIdOfCode, cellIdOfOtherPagesCode } from '../model/cellOfCode';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { kernelDeathText, kernelDeathTextLoaded } from '../model/lazyKernelDeath';
import { DEFAULT_SETTINGS } from '../settings';
import { KernelDeathView } from '../views/KernelDeathView';
import { MemoryTimeline } from '../views/MemoryTimeline';
import { NotebookCellBadges } from '../views/NotebookCellBadges';
import { FakeKernel, FakeSessionContext, settle } from './fakeKernel';
import { GiB, makeCpuSample, makeHello, wire } from './fixtures';

let nextId = 0;
function msg(type: string, extra: { content?: any; parent?: string; metadata?: any } = {}) {
  return {
    header: { msg_id: `m${++nextId}`, msg_type: type },
    parent_header: extra.parent ? { msg_id: extra.parent } : {},
    metadata: extra.metadata ?? {},
    content: extra.content ?? {}
  } as any;
}

/** The notebook sends `cellId` to run; the kernel starts it as [count]. */
function run(kernel: FakeKernel, cellId: string, count: number): string {
  const request = msg('execute_request', { metadata: { cellId } });
  kernel.anyMessage.emit({ msg: request, direction: 'send' });
  const id = request.header.msg_id;
  kernel.anyMessage.emit({
    msg: msg('execute_input', { parent: id, content: { execution_count: count } }),
    direction: 'recv'
  });
  return id;
}

function finish(kernel: FakeKernel, id: string) {
  kernel.anyMessage.emit({
    msg: msg('status', { parent: id, content: { execution_state: 'idle' } }),
    direction: 'recv'
  });
}

describe('RunningCellTracker', () => {
  it('knows the running cell from execute_input, not the queued ones', () => {
    const kernel = new FakeKernel();
    let now = 100;
    const tracker = new RunningCellTracker(() => now);
    tracker.attach(kernel as any);
    const queued = msg('execute_request', { metadata: { cellId: 'later' } });
    const first = run(kernel, 'cell-a', 4);
    kernel.anyMessage.emit({ msg: queued, direction: 'send' });
    expect(tracker.running).toEqual({ cellId: 'cell-a', executionCount: 4, confirmed: true, startedAt: 100 });
    now = 105;
    finish(kernel, first);
    // The queued one is next: not confirmed until its execute_input (till
    // then, its start is when it was sent).
    expect(tracker.running).toEqual({ cellId: 'later', executionCount: null, confirmed: false, startedAt: 100 });
    now = 107;
    kernel.anyMessage.emit({
      msg: msg('execute_input', { parent: queued.header.msg_id, content: { execution_count: 5 } }),
      direction: 'recv'
    });
    expect(tracker.running).toEqual({ cellId: 'later', executionCount: 5, confirmed: true, startedAt: 107 });
    tracker.attach(null);
    expect(tracker.running).toBeNull();
    run(kernel, 'x', 6); // no longer listening
    expect(tracker.running).toBeNull();
  });

  it('names the oldest unanswered request, unconfirmed, when no execute_input came (a kernel that dies at once)', () => {
    const kernel = new FakeKernel();
    const tracker = new RunningCellTracker(() => 100);
    tracker.attach(kernel as any);
    expect(tracker.running).toBeNull();
    const exits = msg('execute_request', { metadata: { cellId: 'os-exit' } });
    const after = msg('execute_request', { metadata: { cellId: 'after' } });
    kernel.anyMessage.emit({ msg: exits, direction: 'send' });
    kernel.anyMessage.emit({ msg: after, direction: 'send' });
    expect(tracker.running).toEqual({ cellId: 'os-exit', executionCount: null, confirmed: false, startedAt: 100 });
    // A silent request without a cell (the helper's bootstrap) names nothing.
    tracker.reset();
    kernel.anyMessage.emit({ msg: msg('execute_request', { metadata: {} }), direction: 'send' });
    kernel.anyMessage.emit({ msg: after, direction: 'send' });
    expect(tracker.running).toBeNull();
  });

  it('survives odd messages (no metadata, a bad count)', () => {
    const tracker = new RunningCellTracker(() => 100);
    const request = msg('execute_request', { metadata: { cellId: 42 } });
    tracker.handle(request, 'send');
    tracker.handle(msg('execute_input', { parent: request.header.msg_id, content: { execution_count: 'x' } }), 'recv');
    expect(tracker.running).toEqual({ cellId: null, executionCount: null, confirmed: true, startedAt: 100 });
    tracker.handle({ header: { msg_type: 'status' }, content: {} } as any, 'recv');
    expect(tracker.running).not.toBeNull();
  });
});

describe('KernelDeathWatch', () => {
  function setup() {
    const kernel = new FakeKernel();
    const sessionContext = new FakeSessionContext(kernel);
    const model = new KernelMemoryModel({ historyCapacity: 100 });
    const watch = new KernelDeathWatch({ sessionContext: sessionContext as any, model });
    model.ingest(wire(makeHello()));
    model.ingest(wire(makeCpuSample({ time: 1000 })));
    return { kernel, sessionContext, model, watch };
  }

  /** What JupyterLab says when the server restarted a dead kernel. */
  function serverRestart(sessionContext: FakeSessionContext) {
    sessionContext.setStatus('restarting'); // the server's status message
    sessionContext.setStatus('autorestarting'); // the microtask right after
  }

  it('restarting then autorestarting is a death, with the running cell', () => {
    const { kernel, sessionContext, model } = setup();
    run(kernel, 'cell-a', 9);
    serverRestart(sessionContext);
    expect(model.death).toMatchObject({
      status: 'autorestarting',
      runningCell: { cellId: 'cell-a', executionCount: 9, confirmed: true }
    });
    expect(model.death!.lastSample!.time).toBe(1000);
  });

  it('a lone autorestarting (older frontends) is a death too', () => {
    const { sessionContext, model } = setup();
    sessionContext.setStatus('autorestarting');
    expect(model.death?.status).toBe('autorestarting');
  });

  it('a restart without autorestarting was the user\'s: no death, and the last one is cleared', async () => {
    const { sessionContext, model } = setup();
    serverRestart(sessionContext);
    sessionContext.setStatus('idle');
    expect(model.death).not.toBeNull();
    sessionContext.setStatus('restarting'); // sessionContext.restartKernel()
    sessionContext.setStatus('restarting'); // the kernel connection's own
    model.startKernelSession(); // what the helper connection does meanwhile
    expect(model.history.marks.map(m => m.kind)).toEqual(['died']); // the restart is not yet known
    await settle();
    expect(model.death).toBeNull();
    // The earlier figures stay, and a mark (at a gap) says where the user restarted.
    expect(model.history.window(-Infinity).times[0]).toBe(1000);
    expect(Number.isNaN(model.history.latest('host.rss'))).toBe(true);
    expect(model.history.marks.map(m => m.kind)).toEqual(['died', 'restarted']);
    sessionContext.setStatus('idle');
    serverRestart(sessionContext);
    expect(model.death).not.toBeNull();
  });

  it('dead is a death, unless this notebook shut the kernel down', () => {
    const { sessionContext, model } = setup();
    sessionContext.setStatus('terminating');
    sessionContext.setStatus('dead');
    expect(model.death).toBeNull();
    sessionContext.setStatus('idle');
    sessionContext.setStatus('dead');
    expect(model.death?.status).toBe('dead');
  });

  it('one death, not two, when the automatic restart fails', async () => {
    const { sessionContext, model } = setup();
    serverRestart(sessionContext);
    const first = model.death;
    sessionContext.setStatus('dead');
    await settle();
    expect(model.death).toBe(first);
  });

  it('a restarted process that dies before it answers leaves nothing to stand in for the next death\'s figures', async () => {
    const { sessionContext, model } = setup();
    const withKills = (time: number, kills: number) =>
      wire(
        makeCpuSample({
          time,
          host: {
            rss_bytes: 3.9 * GiB,
            total_bytes: 64 * GiB,
            available_bytes: 40 * GiB,
            container: { limit_bytes: 4 * GiB, usage_bytes: 3.95 * GiB, inactive_file_bytes: 0, oom_kill_count: kills, cgroup_version: 2 }
          }
        })
      );
    serverRestart(sessionContext);
    model.startKernelSession();
    serverRestart(sessionContext); // the restarted process dies too, before it says idle
    model.startKernelSession();
    await settle();
    sessionContext.setStatus('idle');
    // The third process runs for an hour, then the killer takes it.
    model.ingest(wire(makeHello({ pid: 999, record_series: 'third' })));
    model.ingest(withKills(5000, 1));
    serverRestart(sessionContext);
    model.startKernelSession();
    model.ingest(withKills(5010, 2)); // the restarted kernel's count: it rose
    expect(model.death!.lastSample!.time).toBe(5000);
    expect(model.death!.oomKillsAfter).toBe(2);
  });

  it('a kernel change clears the death', () => {
    const { sessionContext, model, watch } = setup();
    serverRestart(sessionContext);
    sessionContext.changeKernel(new FakeKernel());
    expect(model.death).toBeNull();
    watch.dispose();
    sessionContext.setStatus('autorestarting');
    expect(model.death).toBeNull();
  });

  it('sees the death before the helper connection forgets the figures', async () => {
    const kernel = new FakeKernel();
    const sessionContext = new FakeSessionContext(kernel);
    const model = new KernelMemoryModel({ historyCapacity: 100 });
    new KernelDeathWatch({ sessionContext: sessionContext as any, model });
    // The same wiring as MemoryMonitor: the watch first, then the connection.
    const connection = new KernelHelperConnection({
      sessionContext: sessionContext as any,
      model,
      bootstrapCode: 'BOOTSTRAP',
      config: () => ({}) as any
    });
    await settle();
    model.ingest(wire(makeHello()));
    model.ingest(wire(makeCpuSample({ time: 1000 })));
    sessionContext.setStatus('restarting'); // the connection forgets the figures here
    expect(model.latest).toBeNull();
    sessionContext.setStatus('autorestarting');
    expect(model.death!.lastSample).not.toBeNull();
    expect(model.latest).toBeNull(); // the connection forgot it afterwards
    expect(model.history.window(-Infinity).times[0]).toBe(1000); // the sample stays
    expect(Number.isNaN(model.history.latest('host.rss'))).toBe(true); // then a gap
    connection.dispose();
  });
});

describe('the death in the panel, the timeline, the badge and a notification', () => {
  function dead(): KernelMemoryModel {
    const model = new KernelMemoryModel({ historyCapacity: 100 });
    model.ingest(wire(makeHello()));
    model.ingest(
      wire(
        makeCpuSample({
          time: 1000,
          host: {
            rss_bytes: 3.9 * GiB,
            total_bytes: 64 * GiB,
            available_bytes: 40 * GiB,
            container: { limit_bytes: 4 * GiB, usage_bytes: 3.95 * GiB, inactive_file_bytes: 0, oom_kill_count: 0, cgroup_version: 2 }
          }
        })
      )
    );
    model.noteKernelDeath('autorestarting', { cellId: 'cell-b', executionCount: 12, confirmed: true });
    return model;
  }

  it('the panel says why, as text, and hides without a death', () => {
    const view = new KernelDeathView(DEFAULT_SETTINGS);
    Widget.attach(view, document.body);
    const model = dead();
    view.model = model;
    MessageLoop.flush();
    expect(view.node.hidden).toBe(false);
    expect(view.node.dataset.vramVerdict).toBe('near-limit');
    const summary = view.node.querySelector('[data-vram-role="kernel-death-summary"]')!;
    expect(summary.textContent).toContain('container limit 4 GiB');
    expect(view.node.querySelector('[data-vram-role="kernel-death-cell"]')!.textContent).toBe(
      'Cell [12] was running.'
    );
    model.clearKernelDeath();
    MessageLoop.flush();
    expect(view.node.hidden).toBe(true);
    view.dispose();
  });

  it('the timeline counts its death marks', () => {
    const view = new MemoryTimeline(DEFAULT_SETTINGS);
    Widget.attach(view, document.body);
    view.model = dead();
    MessageLoop.flush();
    expect(view.node.dataset.vramDeaths).toBe('1');
    view.dispose();
  });

  it("marks the running cell's badge 'kernel died' until the death is cleared", async () => {
    const cell = (id: string) => {
      const node = document.createElement('div');
      const wrapper = document.createElement('div');
      wrapper.className = 'jp-Cell-inputWrapper';
      const input = document.createElement('div');
      wrapper.appendChild(input);
      node.appendChild(wrapper);
      return {
        model: { id, type: 'code', getMetadata: () => undefined, setMetadata: () => undefined },
        node,
        inputArea: { node: input },
        ready: Promise.resolve(),
        isDisposed: false
      };
    };
    const a = cell('cell-a');
    const b = cell('cell-b');
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    const badges = new NotebookCellBadges({
      notebook: {
        widgets: [a, b],
        model: { cells: { changed: new Signal<any, any>({}) } },
        modelChanged: new Signal<any, void>({}),
        isDisposed: false
      },
      model,
      settings: DEFAULT_SETTINGS
    });
    const deadModel = dead();
    // The same death on the model the badges follow:
    model.ingest(wire(makeHello()));
    model.ingest(wire(deadModel.death!.lastSample));
    model.noteKernelDeath('autorestarting', { cellId: 'cell-b', executionCount: 12, confirmed: true });
    const mark = b.node.querySelector('[data-vram-role="cell-death-badge"]') as HTMLElement;
    expect(mark.textContent).toBe('kernel died'); // at once
    // Its explanation loads with the first death the page sees, then fills the title.
    for (let i = 0; i < 50 && !mark.title; i++) {
      await new Promise(resolve => setTimeout(resolve, 0));
    }
    expect(mark.title).toContain('most likely the out-of-memory killer');
    expect(a.node.querySelector('[data-vram-role="cell-death-badge"]')).toBeNull();
    model.clearKernelDeath();
    expect(b.node.querySelector('[data-vram-role="cell-death-badge"]')).toBeNull();
    badges.dispose();
  });

  it('a notification: emitted once, updated with evidence, dismissed on clear', async () => {
    await kernelDeathTextLoaded(); // loaded with the first death a page sees (below: the first after load)
    const calls: string[] = [];
    const notifications: INotifications = {
      emit: (message, type) => {
        calls.push(`emit ${type}: ${message}`);
        return 'n1';
      },
      update: args => {
        calls.push(`update ${args.type}: ${args.message}`);
        return true;
      },
      dismiss: id => calls.push(`dismiss ${id}`)
    };
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    const sessionsChanged = new Signal<any, void>({});
    const notifier = new DeathNotifier({
      monitor: { sessions: () => [{ model } as any], sessionsChanged, settings: DEFAULT_SETTINGS } as any,
      showDetails: () => undefined,
      notifications
    });
    const source = dead();
    model.ingest(wire(makeHello()));
    model.ingest(wire(source.death!.lastSample));
    model.noteKernelDeath('autorestarting', { cellId: 'cell-b', executionCount: 12, confirmed: true });
    model.startKernelSession();
    const after = wire(source.death!.lastSample) as any;
    after.host.container.oom_kill_count = 1;
    model.ingest(after);
    model.clearKernelDeath();
    expect(calls).toEqual([
      'emit error: The kernel (running [12]) died at RAM 3.9 GiB (51.2 MiB more available): most likely the out-of-memory killer.',
      'update error: The kernel (running [12]) was killed by the out-of-memory killer (memory.events oom_kill) at RAM 3.9 GiB (51.2 MiB more available).',
      'dismiss n1'
    ]);
    notifier.dispose();
  });

  it('a notifier made after a death (its code loads with the first notebook) tells it at once', async () => {
    await kernelDeathTextLoaded();
    const calls: string[] = [];
    const notifications: INotifications = {
      emit: (message, type) => (calls.push(`emit ${type}: ${message}`), 'n1'),
      update: args => (calls.push(`update ${args.id}`), true),
      dismiss: id => calls.push(`dismiss ${id}`)
    };
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    const source = dead();
    model.ingest(wire(makeHello()));
    model.ingest(wire(source.death!.lastSample));
    model.noteKernelDeath('autorestarting', { cellId: 'cell-b', executionCount: 12, confirmed: true });
    expect(model.death).not.toBeNull();
    const notifier = new DeathNotifier({
      monitor: { sessions: () => [{ model } as any], sessionsChanged: new Signal<any, void>({}), settings: DEFAULT_SETTINGS } as any,
      showDetails: () => undefined,
      notifications
    });
    expect(calls).toEqual([
      'emit error: The kernel (running [12]) died at RAM 3.9 GiB (51.2 MiB more available): most likely the out-of-memory killer.'
    ]);
    model.clearKernelDeath();
    expect(calls[1]).toBe('dismiss n1');
    notifier.dispose();
  });

  it('a second death replaces the first one\'s notification', async () => {
    await kernelDeathTextLoaded();
    const calls: string[] = [];
    let next = 0;
    const notifications: INotifications = {
      emit: () => {
        const id = `n${++next}`;
        calls.push(`emit ${id}`);
        return id;
      },
      update: args => (calls.push(`update ${args.id}`), true),
      dismiss: id => calls.push(`dismiss ${id}`)
    };
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    const notifier = new DeathNotifier({
      monitor: { sessions: () => [{ model } as any], sessionsChanged: new Signal<any, void>({}), settings: DEFAULT_SETTINGS } as any,
      showDetails: () => undefined,
      notifications
    });
    const source = dead();
    model.ingest(wire(makeHello()));
    model.ingest(wire(source.death!.lastSample));
    model.noteKernelDeath('autorestarting', { cellId: 'cell-b', executionCount: 12, confirmed: true }, 2000);
    // The restarted kernel runs, then dies again (the batch size still too large).
    model.startKernelSession();
    model.ingest(wire(makeHello({ pid: 5151 })));
    const later = wire(source.death!.lastSample) as any;
    later.time += 3600;
    model.ingest(later);
    model.noteKernelDeath('autorestarting', { cellId: 'cell-c', executionCount: 14, confirmed: true }, 5600);
    model.clearKernelDeath();
    expect(calls.filter(c => !c.startsWith('update'))).toEqual(['emit n1', 'dismiss n1', 'emit n2', 'dismiss n2']);
    notifier.dispose();
  });

  /**
   * Notebooks on the kernels `kernelIds` (one each), with a notifier whose
   * calls are logged; `close(model)` closes that notebook.
   */
  function notebooksOn(kernelIds: string[]) {
    const calls: string[] = [];
    let next = 0;
    const notifications: INotifications = {
      emit: (message, type) => {
        const id = `n${++next}`;
        calls.push(`emit ${id} ${type}: ${message}`);
        return id;
      },
      update: args => (calls.push(`update ${args.id} ${args.type}: ${args.message}`), true),
      dismiss: id => calls.push(`dismiss ${id}`)
    };
    const models = kernelIds.map(() => new KernelMemoryModel({ historyCapacity: 10 }));
    let sessions = models.map((model, i) => ({ model, sessionContext: { session: { kernel: { id: kernelIds[i] } } } }));
    const sessionsChanged = new Signal<any, void>({});
    const notifier = new DeathNotifier({
      monitor: { sessions: () => sessions, sessionsChanged, settings: DEFAULT_SETTINGS } as any,
      showDetails: () => undefined,
      notifications
    });
    const source = dead();
    for (const model of models) {
      model.ingest(wire(makeHello()));
      model.ingest(wire(source.death!.lastSample));
    }
    const close = (model: KernelMemoryModel) => {
      sessions = sessions.filter(s => s.model !== model);
      sessionsChanged.emit();
    };
    return { models, calls, notifier, close };
  }

  it('notebooks that share a kernel share its notification, which names the cell one of them ran', async () => {
    await kernelDeathTextLoaded();
    const { models, calls, notifier, close } = notebooksOn(['k1', 'k1', 'k2']);
    const [viewer, runner, elsewhere] = models;
    // The notebook that only views the kernel hears of the death first.
    viewer.noteKernelDeath('autorestarting', null, 2000);
    runner.noteKernelDeath('autorestarting', { cellId: 'cell-b', executionCount: 12, confirmed: true }, 2000.4);
    expect(calls).toEqual([
      'emit n1 error: The kernel died at RAM 3.9 GiB (51.2 MiB more available): most likely the out-of-memory killer.',
      'update n1 error: The kernel (running [12]) died at RAM 3.9 GiB (51.2 MiB more available): most likely the out-of-memory killer.'
    ]);
    // Another kernel that dies at the same moment has its own.
    elsewhere.noteKernelDeath('autorestarting', null, 2000.2);
    expect(calls.slice(2).map(c => c.split(' ').slice(0, 2).join(' '))).toEqual(['emit n2']);
    // Closing one of the two notebooks leaves it to the other one.
    close(viewer);
    expect(calls.filter(c => c.startsWith('dismiss'))).toEqual([]);
    runner.clearKernelDeath();
    expect(calls.filter(c => c.startsWith('dismiss'))).toEqual(['dismiss n1']);
    notifier.dispose();
  });

  it('a shared notification is told again without the cell when the notebook that ran it closes', async () => {
    await kernelDeathTextLoaded();
    const { models, calls, notifier, close } = notebooksOn(['k1', 'k1']);
    const [viewer, runner] = models;
    viewer.noteKernelDeath('autorestarting', null, 2000);
    runner.noteKernelDeath('autorestarting', { cellId: 'cell-b', executionCount: 12, confirmed: true }, 2000.4);
    close(runner);
    expect(calls.slice(-1)).toEqual([
      'update n1 error: The kernel died at RAM 3.9 GiB (51.2 MiB more available): most likely the out-of-memory killer.'
    ]);
    notifier.dispose();
  });

  it('a first death notifies once its explanation has loaded, as the death is then', async () => {
    await jest.isolateModulesAsync(async () => {
      const { DeathNotifier: FreshNotifier } = await import('../deathNotifier');
      const fresh = await import('../model/lazyKernelDeath');
      const emitted: string[] = [];
      const model = new KernelMemoryModel({ historyCapacity: 10 });
      const notifier = new FreshNotifier({
        monitor: { sessions: () => [{ model } as any], sessionsChanged: new Signal<any, void>({}), settings: DEFAULT_SETTINGS } as any,
        showDetails: () => undefined,
        notifications: { emit: (message: string) => (emitted.push(message), 'n1'), update: () => true, dismiss: () => undefined }
      });
      const source = dead();
      model.ingest(wire(makeHello()));
      model.ingest(wire(source.death!.lastSample));
      model.noteKernelDeath('autorestarting', { cellId: 'cell-b', executionCount: 12, confirmed: true });
      expect(emitted).toEqual([]); // not loaded yet in this page
      await fresh.kernelDeathTextLoaded();
      await new Promise(resolve => setTimeout(resolve, 0));
      expect(emitted).toHaveLength(1);
      expect(emitted[0]).toContain('most likely the out-of-memory killer');
      notifier.dispose();
    });
    expect(kernelDeathText(() => undefined)).not.toBeNull(); // this module's copy, loaded above
  });

  it('an explanation that failed to load is tried again at the next death', async () => {
    await jest.isolateModulesAsync(async () => {
      let failures = 1;
      jest.doMock('../model/kernelDeath', () => {
        if (failures-- > 0) {
          throw new Error('chunk failed to load');
        }
        return jest.requireActual('../model/kernelDeath');
      });
      const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
      const fresh = await import('../model/lazyKernelDeath');
      const settle = () => new Promise(resolve => setTimeout(resolve, 0));
      let calls = 0;
      expect(fresh.kernelDeathText(() => calls++)).toBeNull();
      await settle();
      expect(calls).toBe(0); // failed: nothing to render with
      expect(fresh.kernelDeathText(() => calls++)).toBeNull(); // asked again: loads again
      await settle();
      expect(calls).toBe(1);
      expect(fresh.kernelDeathText(() => calls++)?.explainKernelDeath).toBeDefined();
      warn.mockRestore();
      jest.dontMock('../model/kernelDeath');
    });
  });

  it('a notification: dismissed when its notebook closes', () => {
    const dismissed: string[] = [];
    const notifications: INotifications = {
      emit: () => 'n1',
      update: () => true,
      dismiss: id => dismissed.push(id)
    };
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    let sessions = [{ model } as any];
    const sessionsChanged = new Signal<any, void>({});
    const notifier = new DeathNotifier({
      monitor: { sessions: () => sessions, sessionsChanged, settings: DEFAULT_SETTINGS } as any,
      showDetails: () => undefined,
      notifications
    });
    const source = dead();
    model.ingest(wire(makeHello()));
    model.ingest(wire(source.death!.lastSample));
    model.noteKernelDeath('autorestarting', { cellId: 'cell-b', executionCount: 12, confirmed: true });
    expect(dismissed).toEqual([]);
    sessions = [];
    sessionsChanged.emit();
    expect(dismissed).toEqual(['n1']);
    notifier.dispose();
  });
});

describe('a cell another page sent', () => {
  function panelWith(sources: [string, string, string?][]) {
    return {
      sessionContext: null as any,
      disposed: null as any,
      isDisposed: false,
      content: {
        model: {
          cells: sources.map(([id, source, type]) => ({
            id,
            type: type ?? 'code',
            sharedModel: { getSource: () => source }
          }))
        }
      }
    };
  }

  it('is the one code cell with exactly the code the kernel echoed; none when several or none have it', () => {
    const panel = panelWith([
      ['a', 'x = 1'],
      ['b', 'train()'],
      ['c', 'train()\n'],
      ['d', 'train()', 'markdown'],
      ['e', 'y = 2'],
      ['f', 'y = 2']
    ]);
    expect(cellIdOfCode(panel, 'train()')).toBe('b');
    expect(cellIdOfCode(panel, 'y = 2')).toBeNull();
    expect(cellIdOfCode(panel, 'z = 3')).toBeNull();
    expect(cellIdOfCode({ ...panel, content: undefined } as any, 'x = 1')).toBeNull();
  });

  it('is none when this page sent the code from a console or another notebook on the kernel', () => {
    const panel = panelWith([['b', 'train()']]);
    const pageClients = new Set(['console-client', 'other-notebook-client']);
    const ofCode = (code: string, client: string | null) =>
      cellIdOfOtherPagesCode(panel, code, client, c => pageClients.has(c));
    const tracker = new RunningCellTracker(() => 100, ofCode);
    const fromConsole = msg('execute_input', { content: { execution_count: 6, code: 'train()' } });
    fromConsole.parent_header = { msg_id: 'console-request', session: 'console-client' };
    tracker.handle(fromConsole, 'recv');
    expect(tracker.running?.cellId).toBeNull();
    const fromAnotherTab = msg('execute_input', { content: { execution_count: 7, code: 'train()' } });
    fromAnotherTab.parent_header = { msg_id: 'tab-request', session: 'another-tab-client' };
    tracker.handle(fromAnotherTab, 'recv');
    expect(tracker.running?.cellId).toBe('b');
  });

  it('is named by the tracker from its execute_input, which has no request of this page behind it', () => {
    const tracker = new RunningCellTracker(() => 100, code => (code === 'train()' ? 'cell-b' : null));
    const elsewhere = msg('execute_request', { metadata: { cellId: 'cell-b' } }); // sent by another page
    tracker.handle(
      msg('execute_input', { parent: elsewhere.header.msg_id, content: { execution_count: 6, code: 'train()' } }),
      'recv'
    );
    expect(tracker.running).toEqual({ cellId: 'cell-b', executionCount: 6, confirmed: true, startedAt: 100 });
    // This page's own request names its cell by id, whatever the code.
    const own = msg('execute_request', { metadata: { cellId: 'mine' } });
    tracker.handle(own, 'send');
    tracker.handle(msg('execute_input', { parent: own.header.msg_id, content: { execution_count: 7, code: 'train()' } }), 'recv');
    expect(tracker.running?.cellId).toBe('mine');
  });
});

describe('RunningCellTracker and a kernel process it did not see start', () => {
  it('forgets the cell the old process ran once a message comes from another process (a restart made in another tab)', () => {
    const tracker = new RunningCellTracker(() => 100);
    const request = msg('execute_request', { metadata: { cellId: 'interrupted' } });
    tracker.handle(request, 'send');
    const input = msg('execute_input', { parent: request.header.msg_id, content: { execution_count: 3 } });
    input.header.session = 'process-1';
    tracker.handle(input, 'recv');
    expect(tracker.running?.cellId).toBe('interrupted');
    // The same process goes on: nothing forgotten.
    const output = msg('stream', { parent: request.header.msg_id });
    output.header.session = 'process-1';
    tracker.handle(output, 'recv');
    expect(tracker.running?.cellId).toBe('interrupted');
    // The server announces an automatic restart under its own session: the
    // dead process's cell must still be named (status messages do not count).
    const restarting = msg('status', { content: { execution_state: 'restarting' } });
    restarting.header.session = 'server';
    tracker.handle(restarting, 'recv');
    expect(tracker.running?.cellId).toBe('interrupted');
    // The new process speaks (a comm message to another tab's helper): the
    // old one's cell never ends.
    const hello = msg('comm_msg', { content: { comm_id: 'other-tab', data: { type: 'hello' } } });
    hello.header.session = 'process-2';
    tracker.handle(hello, 'recv');
    expect(tracker.running).toBeNull();
  });
});
