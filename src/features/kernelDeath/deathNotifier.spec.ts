/** Tests the notification of a kernel's death: how it is emitted, updated, shared and dismissed. */
import { Signal } from '@lumino/signaling';

import { DeathNotifier, INotifications } from './deathNotifier';
import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import {
  kernelDeathText,
  kernelDeathTextLoaded
} from '../../model/lazyKernelDeath';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { makeHello, wire } from '../../testing/fixtures';
import { dead } from '../../testing/kernelDeathWatchFixtures';

describe('the death in the panel, the timeline, the badge and a notification', () => {
  it('a notification: emitted once, updated with evidence, dismissed on clear', async () => {
    // The text loads with the first death that a page sees; a test further
    // down covers that first death.
    await kernelDeathTextLoaded();
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
      monitor: {
        sessions: () => [{ model } as any],
        sessionsChanged,
        settings: DEFAULT_SETTINGS
      } as any,
      showDetails: () => undefined,
      notifications
    });
    const source = dead();
    model.ingest(wire(makeHello()));
    model.ingest(wire(source.death!.lastSample));
    model.noteKernelDeath('autorestarting', {
      cellId: 'cell-b',
      executionCount: 12,
      confirmed: true
    });
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
    model.noteKernelDeath('autorestarting', {
      cellId: 'cell-b',
      executionCount: 12,
      confirmed: true
    });
    expect(model.death).not.toBeNull();
    const notifier = new DeathNotifier({
      monitor: {
        sessions: () => [{ model } as any],
        sessionsChanged: new Signal<any, void>({}),
        settings: DEFAULT_SETTINGS
      } as any,
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

  it("a second death replaces the first one's notification", async () => {
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
      monitor: {
        sessions: () => [{ model } as any],
        sessionsChanged: new Signal<any, void>({}),
        settings: DEFAULT_SETTINGS
      } as any,
      showDetails: () => undefined,
      notifications
    });
    const source = dead();
    model.ingest(wire(makeHello()));
    model.ingest(wire(source.death!.lastSample));
    model.noteKernelDeath(
      'autorestarting',
      { cellId: 'cell-b', executionCount: 12, confirmed: true },
      2000
    );
    // The restarted kernel runs and then dies again, because the batch size
    // is still too large.
    model.startKernelSession();
    model.ingest(wire(makeHello({ pid: 5151 })));
    const later = wire(source.death!.lastSample) as any;
    later.time += 3600;
    model.ingest(later);
    model.noteKernelDeath(
      'autorestarting',
      { cellId: 'cell-c', executionCount: 14, confirmed: true },
      5600
    );
    model.clearKernelDeath();
    expect(calls.filter(c => !c.startsWith('update'))).toEqual([
      'emit n1',
      'dismiss n1',
      'emit n2',
      'dismiss n2'
    ]);
    notifier.dispose();
  });

  /**
   * Creates one notebook on each of the kernels `kernelIds`, with a notifier
   * whose calls are logged; `close(model)` closes that notebook.
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
      update: args => (
        calls.push(`update ${args.id} ${args.type}: ${args.message}`),
        true
      ),
      dismiss: id => calls.push(`dismiss ${id}`)
    };
    const models = kernelIds.map(
      () => new KernelMemoryModel({ historyCapacity: 10 })
    );
    let sessions = models.map((model, i) => ({
      model,
      sessionContext: { session: { kernel: { id: kernelIds[i] } } }
    }));
    const sessionsChanged = new Signal<any, void>({});
    const notifier = new DeathNotifier({
      monitor: {
        sessions: () => sessions,
        sessionsChanged,
        settings: DEFAULT_SETTINGS
      } as any,
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
    runner.noteKernelDeath(
      'autorestarting',
      { cellId: 'cell-b', executionCount: 12, confirmed: true },
      2000.4
    );
    expect(calls).toEqual([
      'emit n1 error: The kernel died at RAM 3.9 GiB (51.2 MiB more available): most likely the out-of-memory killer.',
      'update n1 error: The kernel (running [12]) died at RAM 3.9 GiB (51.2 MiB more available): most likely the out-of-memory killer.'
    ]);
    // Another kernel that dies at the same moment gets its own notification.
    elsewhere.noteKernelDeath('autorestarting', null, 2000.2);
    expect(calls.slice(2).map(c => c.split(' ').slice(0, 2).join(' '))).toEqual(
      ['emit n2']
    );
    // Closing one of the two notebooks leaves the notification to the other.
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
    runner.noteKernelDeath(
      'autorestarting',
      { cellId: 'cell-b', executionCount: 12, confirmed: true },
      2000.4
    );
    close(runner);
    expect(calls.slice(-1)).toEqual([
      'update n1 error: The kernel died at RAM 3.9 GiB (51.2 MiB more available): most likely the out-of-memory killer.'
    ]);
    notifier.dispose();
  });

  it('a first death notifies once its explanation has loaded, as the death is then', async () => {
    await jest.isolateModulesAsync(async () => {
      const { DeathNotifier: FreshNotifier } = await import('./deathNotifier');
      const fresh = await import('../../model/lazyKernelDeath');
      const emitted: string[] = [];
      const model = new KernelMemoryModel({ historyCapacity: 10 });
      const notifier = new FreshNotifier({
        monitor: {
          sessions: () => [{ model } as any],
          sessionsChanged: new Signal<any, void>({}),
          settings: DEFAULT_SETTINGS
        } as any,
        showDetails: () => undefined,
        notifications: {
          emit: (message: string) => (emitted.push(message), 'n1'),
          update: () => true,
          dismiss: () => undefined
        }
      });
      const source = dead();
      model.ingest(wire(makeHello()));
      model.ingest(wire(source.death!.lastSample));
      model.noteKernelDeath('autorestarting', {
        cellId: 'cell-b',
        executionCount: 12,
        confirmed: true
      });
      expect(emitted).toEqual([]); // The text is not loaded yet in this page.
      await fresh.kernelDeathTextLoaded();
      await new Promise(resolve => setTimeout(resolve, 0));
      expect(emitted).toHaveLength(1);
      expect(emitted[0]).toContain('most likely the out-of-memory killer');
      notifier.dispose();
    });
    expect(kernelDeathText(() => undefined)).not.toBeNull(); // This module's copy was loaded above.
  });

  it('an explanation that failed to load is tried again at the next death', async () => {
    await jest.isolateModulesAsync(async () => {
      let failures = 1;
      jest.doMock('../../model/kernelDeath', () => {
        if (failures-- > 0) {
          throw new Error('chunk failed to load');
        }
        return jest.requireActual('../../model/kernelDeath');
      });
      const warn = jest
        .spyOn(console, 'warn')
        .mockImplementation(() => undefined);
      const fresh = await import('../../model/lazyKernelDeath');
      const settle = () => new Promise(resolve => setTimeout(resolve, 0));
      let calls = 0;
      expect(fresh.kernelDeathText(() => calls++)).toBeNull();
      await settle();
      expect(calls).toBe(0); // The load failed, so there is nothing to render with.
      expect(fresh.kernelDeathText(() => calls++)).toBeNull(); // Asking again starts a new load.
      await settle();
      expect(calls).toBe(1);
      expect(
        fresh.kernelDeathText(() => calls++)?.explainKernelDeath
      ).toBeDefined();
      warn.mockRestore();
      jest.dontMock('../../model/kernelDeath');
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
      monitor: {
        sessions: () => sessions,
        sessionsChanged,
        settings: DEFAULT_SETTINGS
      } as any,
      showDetails: () => undefined,
      notifications
    });
    const source = dead();
    model.ingest(wire(makeHello()));
    model.ingest(wire(source.death!.lastSample));
    model.noteKernelDeath('autorestarting', {
      cellId: 'cell-b',
      executionCount: 12,
      confirmed: true
    });
    expect(dismissed).toEqual([]);
    sessions = [];
    sessionsChanged.emit();
    expect(dismissed).toEqual(['n1']);
    notifier.dispose();
  });
});
