import { Signal } from '@lumino/signaling';

import { MemoryMonitor } from './MemoryMonitor';
import { IHelperConnection, IMonitoredNotebook } from './monitoredSession';
import { RequestAbandonedError } from '../kernel/PendingRequests';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { DEFAULT_SETTINGS, VramSettings } from '../settings/settings';
import { IKernelMemoryModel } from '../model/IKernelMemoryModel';
import {
  ISessionPart,
  SessionPartFactory,
  SessionPartKind
} from './sessionParts';
import {
  ALLOCATION_RECORDING,
  allocationsFor
} from '../features/allocations/allocationRecordingPart';

class FakePanel implements IMonitoredNotebook {
  constructor(readonly sessionContext: any = { name: 'session' }) {}
  disposed = new Signal<this, void>(this);
  isDisposed = false;
  dispose(): void {
    this.isDisposed = true;
    this.disposed.emit();
  }
}

class FakeTracker {
  currentWidget: FakePanel | null = null;
  currentChanged = new Signal<this, FakePanel | null>(this);
  activate(panel: FakePanel | null): void {
    this.currentWidget = panel;
    this.currentChanged.emit(panel);
  }
}

class FakeConnection implements IHelperConnection {
  constructor(readonly model: KernelMemoryModel) {}
  isDisposed = false;
  configured: unknown[] = [];
  snapshots = 0;
  reconnects = 0;
  /**
   * Set this to hold the configure answer back, as a kernel busy with a cell
   * does.
   */
  configureAnswer: Promise<null> | null = null;
  async configure(config: unknown) {
    this.configured.push(config);
    return this.configureAnswer ?? null;
  }
  async requestSnapshot() {
    this.snapshots++;
    return { seq: 1 };
  }
  reconnect() {
    this.reconnects++;
  }
  freeMemory(): Promise<any> {
    return Promise.reject(new Error('not in this test'));
  }
  inspect(): Promise<any> {
    return Promise.reject(new Error('not in this test'));
  }
  deleteHolders(): Promise<any> {
    return Promise.reject(new Error('not in this test'));
  }
  dispose() {
    this.isDisposed = true;
  }
}

/** A connection that can record allocations; the kernel records at 16 frames. */
class RecordingConnection extends FakeConnection {
  recorded: unknown[] = [];
  async recordAllocations(request: {
    enabled: boolean;
    host_frames?: number;
    gpu_max_entries?: number;
  }) {
    this.recorded.push(request);
    return {
      enabled: request.enabled,
      host: {
        state: 'recording',
        frames: request.host_frames ?? 16,
        started: 1,
        overhead_bytes: 0,
        restarted_at: null
      },
      gpu: {
        state: 'waiting',
        max_entries: request.gpu_max_entries ?? 100_000,
        started: null,
        allocated_before_bytes: null,
        reason: 'waiting',
        restarted_at: null,
        restart_kept_stacks: null
      }
    };
  }
  async allocationSites(): Promise<any> {
    throw new Error('not in this test');
  }
  async allocationSnapshot(): Promise<any> {
    throw new Error('not in this test');
  }
}

function setup(
  settings?: VramSettings,
  Connection = FakeConnection,
  partKinds: SessionPartKind<ISessionPart>[] = []
) {
  const tracker = new FakeTracker();
  const connections: FakeConnection[] = [];
  const monitor = new MemoryMonitor({
    notebooks: tracker,
    settings,
    partKinds,
    createConnection: (_sc, model) => {
      const c = new Connection(model);
      connections.push(c);
      return c;
    }
  });
  const currents: (IKernelMemoryModel | null)[] = [];
  monitor.currentChanged.connect((_, m) => currents.push(m));
  return { tracker, monitor, connections, currents };
}

describe('MemoryMonitor', () => {
  it('has no current model without a notebook', () => {
    const { monitor } = setup();
    expect(monitor.current).toBeNull();
    return expect(monitor.refresh()).rejects.toThrow('No notebook');
  });

  it('follows the active notebook with one model per session', () => {
    const { tracker, monitor, connections, currents } = setup();
    const a = new FakePanel();
    const b = new FakePanel();
    tracker.activate(a);
    const modelA = monitor.current;
    expect(modelA).not.toBeNull();
    tracker.activate(b);
    expect(monitor.current).not.toBe(modelA);
    tracker.activate(a);
    // The model is kept, with its history.
    expect(monitor.current).toBe(modelA);
    expect(connections).toHaveLength(2);
    expect(currents).toHaveLength(3);
  });

  it('shares one model between two views of the same notebook', () => {
    const { tracker, monitor, connections } = setup();
    const shared = { name: 'same session' };
    const view1 = new FakePanel(shared);
    const view2 = new FakePanel(shared);
    tracker.activate(view1);
    const model = monitor.current;
    tracker.activate(view2);
    expect(monitor.current).toBe(model);
    expect(connections).toHaveLength(1);
    view1.dispose();
    expect(connections[0].isDisposed).toBe(false);
    view2.dispose();
    expect(connections[0].isDisposed).toBe(true);
  });

  it('disposes the connection and model when the notebook closes', () => {
    const { tracker, monitor, connections, currents } = setup();
    const a = new FakePanel();
    tracker.activate(a);
    const model = monitor.current as KernelMemoryModel;
    a.dispose();
    expect(connections[0].isDisposed).toBe(true);
    expect(model.isDisposed).toBe(true);
    expect(monitor.current).toBeNull();
    expect(currents[currents.length - 1]).toBeNull();
    expect(monitor.sessionCount).toBe(0);
  });

  it('picks up a notebook that is already active', () => {
    const tracker = new FakeTracker();
    tracker.currentWidget = new FakePanel();
    const monitor = new MemoryMonitor({
      notebooks: tracker,
      createConnection: (_sc, model) => new FakeConnection(model)
    });
    expect(monitor.current).not.toBeNull();
  });

  it('asks the active connection for snapshots and reconnects', async () => {
    const { tracker, monitor, connections } = setup();
    tracker.activate(new FakePanel());
    await expect(monitor.refresh()).resolves.toEqual({ seq: 1 });
    monitor.reconnect();
    expect(connections[0].snapshots).toBe(1);
    expect(connections[0].reconnects).toBe(1);
  });

  it('applies a new stack depth or GPU history size live to a kernel that records', async () => {
    // The kind's code is fetched with the first kernel.
    await ALLOCATION_RECORDING.load();
    const { tracker, monitor, connections } = setup(
      undefined,
      RecordingConnection,
      [ALLOCATION_RECORDING]
    );
    tracker.activate(new FakePanel());
    (monitor.current as KernelMemoryModel).setState('live');
    const connection = connections[0] as RecordingConnection;
    const recorder = allocationsFor(monitor, monitor.current)!;
    // While the kernel is not recording, a change waits for the next start.
    monitor.updateSettings({ ...monitor.settings, allocationHostFrames: 8 });
    await Promise.resolve();
    expect(connection.recorded).toEqual([]);
    await recorder.setRecording(true);
    expect(connection.recorded).toEqual([
      { enabled: true, host_frames: 8, gpu_max_entries: 100_000 }
    ]);
    monitor.updateSettings({ ...monitor.settings, allocationHostFrames: 32 });
    // The units are not a recording setting.
    monitor.updateSettings({ ...monitor.settings, units: 'decimal' });
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(connection.recorded).toEqual([
      { enabled: true, host_frames: 8, gpu_max_entries: 100_000 },
      { enabled: true, host_frames: 32, gpu_max_entries: 100_000 }
    ]);
    expect(recorder.recording?.host.frames).toBe(32);
    monitor.updateSettings({
      ...monitor.settings,
      allocationHistoryMaxEntries: 500_000
    });
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(connection.recorded).toHaveLength(3);
    expect(connection.recorded[2]).toEqual({
      enabled: true,
      host_frames: 32,
      gpu_max_entries: 500_000
    });
  });

  it('says that new sampling settings wait for the running cell, until they are applied', async () => {
    const { tracker, monitor, connections } = setup();
    tracker.activate(new FakePanel());
    const model = monitor.current as KernelMemoryModel;
    const pending = () => model.notes.some(n => n.id === 'settings-pending');
    monitor.updateSettings({ ...DEFAULT_SETTINGS, sampleIntervalSeconds: 0.5 });
    // An idle kernel answers at once, so no note flashes up.
    expect(pending()).toBe(false);
    let answer: (value: null) => void = () => undefined;
    connections[0].configureAnswer = new Promise(resolve => (answer = resolve));
    model.setKernelBusy(true);
    monitor.updateSettings({ ...monitor.settings, sampleIntervalSeconds: 0.2 });
    expect(pending()).toBe(true);
    expect(model.notes.find(n => n.id === 'settings-pending')!.text).toContain(
      'apply when the running cell finishes'
    );
    answer(null);
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(pending()).toBe(false);
  });

  it('applies settings live: helper config and history capacity', () => {
    const { tracker, monitor, connections } = setup();
    tracker.activate(new FakePanel());
    const seen: VramSettings[] = [];
    monitor.settingsChanged.connect((_, s) => seen.push(s));
    monitor.updateSettings({ ...DEFAULT_SETTINGS, sampleIntervalSeconds: 0.5 });
    expect(connections[0].configured).toEqual([
      {
        interval_s: 0.5,
        change_threshold_bytes: 1048576,
        heartbeat_s: 10,
        reset_peak_per_cell: true,
        watch_cluster: true,
        cluster_interval_s: 2
      }
    ]);
    expect((monitor.current as KernelMemoryModel).history.capacity).toBe(
      172_800
    );
    // Display-only changes do not bother the kernel.
    monitor.updateSettings({ ...monitor.settings, units: 'decimal' });
    expect(connections[0].configured).toHaveLength(1);
    // The per-cell peak reset is kernel config, so it is sent.
    monitor.updateSettings({ ...monitor.settings, exactPeakPerCell: false });
    expect(connections[0].configured).toHaveLength(2);
    expect(connections[0].configured[1]).toMatchObject({
      reset_peak_per_cell: false
    });
    // Display-only cell settings do not bother the kernel.
    monitor.updateSettings({ ...monitor.settings, showCellBadges: false });
    expect(connections[0].configured).toHaveLength(2);
    // Cluster watching is the helper's, so it is sent.
    monitor.updateSettings({ ...monitor.settings, watchCluster: false });
    expect(connections[0].configured).toHaveLength(3);
    expect(connections[0].configured[2]).toMatchObject({
      watch_cluster: false
    });
    // Identical settings are not re-applied.
    monitor.updateSettings({ ...monitor.settings });
    expect(seen).toHaveLength(5);
  });

  it('says settings failed when the helper refused them, not when a restart abandoned them', async () => {
    const { tracker, monitor, connections } = setup();
    tracker.activate(new FakePanel());
    const model = monitor.current as KernelMemoryModel;
    connections[0].configureAnswer = Promise.reject(
      new RequestAbandonedError('The kernel restarted.')
    );
    monitor.updateSettings({ ...DEFAULT_SETTINGS, sampleIntervalSeconds: 0.5 });
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(model.problem).toBeNull();
    connections[0].configureAnswer = Promise.reject(
      new Error('interval_s must be at least 0.05')
    );
    monitor.updateSettings({ ...DEFAULT_SETTINGS, sampleIntervalSeconds: 2 });
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(model.problem).toContain(
      'Could not apply the new sampling settings'
    );
  });

  it('stops following the tracker when disposed', () => {
    const { tracker, monitor, connections } = setup();
    tracker.activate(new FakePanel());
    monitor.dispose();
    expect(connections[0].isDisposed).toBe(true);
    tracker.activate(new FakePanel());
    expect(connections).toHaveLength(1);
  });
});

/** A feature's per-kernel part that records what the monitor did with it. */
class RecordingPart implements ISessionPart {
  constructor(readonly model: IKernelMemoryModel) {}
  settings: [VramSettings, VramSettings][] = [];
  isDisposed = false;
  settingsChanged(settings: VramSettings, old: VramSettings): void {
    this.settings.push([settings, old]);
  }
  dispose(): void {
    this.isDisposed = true;
  }
}

describe("MemoryMonitor: the features' session parts", () => {
  it('makes one part of each kind per session, tells it of settings and disposes of it with the session', () => {
    const parts: RecordingPart[] = [];
    const kind = new SessionPartKind('recording', ({ model }) => {
      const part = new RecordingPart(model);
      parts.push(part);
      return part;
    });
    const { tracker, monitor } = setup(undefined, FakeConnection, [kind]);
    const panel = new FakePanel();
    tracker.activate(panel);
    tracker.activate(new FakePanel());
    expect(parts.map(part => part.model)).toEqual(
      monitor.sessions().map(entry => entry.model)
    );
    expect(monitor.currentPart(kind)).toBe(parts[1]);
    expect(monitor.partFor(kind, parts[0].model)).toBe(parts[0]);
    expect(monitor.partFor(kind, null)).toBeNull();

    const old = monitor.settings;
    monitor.updateSettings({ ...old, units: 'decimal' });
    expect(parts[0].settings).toEqual([[monitor.settings, old]]);
    expect(parts[1].settings).toEqual([[monitor.settings, old]]);

    panel.dispose();
    expect(parts[0].isDisposed).toBe(true);
    expect(parts[1].isDisposed).toBe(false);
    expect(monitor.partFor(kind, parts[0].model)).toBeNull();
  });

  it('makes parts for the sessions already followed when a kind comes later, once however often it is added', () => {
    const { tracker, monitor } = setup();
    tracker.activate(new FakePanel());
    let made = 0;
    const kind = new SessionPartKind(
      'late',
      ({ model }) => (made++, new RecordingPart(model))
    );
    expect(monitor.currentPart(kind)).toBeNull();
    monitor.addPartKind(kind);
    monitor.addPartKind(kind);
    expect(made).toBe(1);
    expect(monitor.currentPart(kind)?.model).toBe(monitor.current);
  });

  it('makes the parts of a kind loaded later once its code is there, and says so', async () => {
    let finishLoading: (
      create: SessionPartFactory<RecordingPart>
    ) => void = () => undefined;
    let loads = 0;
    const kind = SessionPartKind.loadedLater<RecordingPart>('lazy', () => {
      loads++;
      return new Promise(resolve => (finishLoading = resolve));
    });
    const { tracker, monitor } = setup(undefined, FakeConnection, [kind]);
    const said: unknown[] = [];
    monitor.partsChanged.connect((_, changed) => said.push(changed));
    tracker.activate(new FakePanel());
    tracker.activate(new FakePanel());
    // The parts are not there while the code is fetched, which happens once
    // for both sessions.
    expect(monitor.currentPart(kind)).toBeNull();
    expect(loads).toBe(1);
    finishLoading(({ model }) => new RecordingPart(model));
    await kind.load();
    await Promise.resolve();
    expect(said).toEqual([kind]);
    for (const entry of monitor.sessions()) {
      expect(monitor.partFor(kind, entry.model)?.model).toBe(entry.model);
    }
    // A session followed after the code came gets its part at once.
    tracker.activate(new FakePanel());
    expect(monitor.currentPart(kind)?.model).toBe(monitor.current);
    expect(said).toHaveLength(1);
  });

  it('fetches the code of a kind loaded later again after a failed fetch', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    let loads = 0;
    const kind = SessionPartKind.loadedLater<RecordingPart>('flaky', () =>
      ++loads === 1
        ? Promise.reject(new Error('offline'))
        : Promise.resolve(({ model }) => new RecordingPart(model))
    );
    const { tracker, monitor } = setup(undefined, FakeConnection, [kind]);
    tracker.activate(new FakePanel());
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(monitor.currentPart(kind)).toBeNull();
    expect(warn).toHaveBeenCalledTimes(1);
    // The next session asks again, and this time the parts are made for both.
    tracker.activate(new FakePanel());
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(loads).toBe(2);
    for (const entry of monitor.sessions()) {
      expect(monitor.partFor(kind, entry.model)).not.toBeNull();
    }
    warn.mockRestore();
  });

  it('leaves out a part its kind declines for a session', () => {
    const kind = new SessionPartKind<RecordingPart>('declined', () => null);
    const { tracker, monitor } = setup(undefined, FakeConnection, [kind]);
    tracker.activate(new FakePanel());
    expect(monitor.currentPart(kind)).toBeNull();
  });
});

describe('MemoryMonitor.sessions (the Kernels tab)', () => {
  it('lists every monitored session with its context and panels', () => {
    const { tracker, monitor } = setup();
    let changes = 0;
    monitor.sessionsChanged.connect(() => changes++);
    const contextA = { session: { kernel: { id: 'kernel-a' } } };
    const contextB = { session: { kernel: { id: 'kernel-b' } } };
    const a1 = new FakePanel(contextA);
    const a2 = new FakePanel(contextA);
    const b = new FakePanel(contextB);
    tracker.activate(a1);
    tracker.activate(b);
    tracker.activate(a2);
    // The changes are two sessions, then a second view of the first.
    expect(changes).toBe(3);

    const sessions = monitor.sessions();
    expect(sessions.map(s => s.sessionContext)).toEqual([contextA, contextB]);
    expect(sessions[0].panels).toEqual([a1, a2]);
    expect(sessions[0].model).toBe(monitor.modelFor(a1));
    expect(monitor.sessionsOfKernel('kernel-b').map(s => s.panels)).toEqual([
      [b]
    ]);
    expect(monitor.sessionsOfKernel('no-such-kernel')).toEqual([]);

    // A panel leaves, and the session stays.
    a2.dispose();
    expect(changes).toBe(4);
    expect(monitor.sessions()[0].panels).toEqual([a1]);
    // The last panel of a session leaves.
    b.dispose();
    expect(changes).toBe(5);
    expect(monitor.sessions().map(s => s.sessionContext)).toEqual([contextA]);
  });

  it('does not emit when the active notebook only changes', () => {
    const { tracker, monitor } = setup();
    const a = new FakePanel();
    const b = new FakePanel();
    tracker.activate(a);
    tracker.activate(b);
    let changes = 0;
    monitor.sessionsChanged.connect(() => changes++);
    tracker.activate(a);
    tracker.activate(b);
    expect(changes).toBe(0);
  });
});

describe('MemoryMonitor: what the browser keeps between pages', () => {
  class CountingStores {
    recordLoads = 0;
    timelineLoads = 0;
    /** The writes and forgets, in the order the stores got them. */
    log: string[] = [];
    records = {
      load: async () => {
        this.recordLoads++;
        return [];
      },
      save: async () => void this.log.push('save cells'),
      clear: async () => undefined,
      forgetAll: async () => void this.log.push('forget cells')
    };
    timeline = {
      load: async () => {
        this.timelineLoads++;
        return [];
      },
      save: async () => void this.log.push('save timeline'),
      replace: async () => undefined,
      forgetAll: async () => void this.log.push('forget timeline')
    };
  }

  const tick = () => new Promise(resolve => setTimeout(resolve, 0));

  function keepingSetup(settingsLoading: boolean) {
    const stores = new CountingStores();
    const tracker = new FakeTracker();
    const monitor = new MemoryMonitor({
      notebooks: tracker,
      createConnection: (_sc, model) => new FakeConnection(model),
      recordStore: stores.records,
      timelineStore: stores.timeline,
      settingsLoading
    });
    const panel = new FakePanel({
      path: 'a.ipynb',
      propertyChanged: new Signal<any, string>({})
    });
    return { stores, tracker, monitor, panel };
  }

  it('keeps nothing until the settings are known, then what they ask for', async () => {
    const { stores, tracker, monitor, panel } = keepingSetup(true);
    tracker.activate(panel);
    await tick();
    expect([stores.recordLoads, stores.timelineLoads]).toEqual([0, 0]);
    monitor.updateSettings({ ...DEFAULT_SETTINGS, rememberCellHistory: false });
    await tick();
    expect([stores.recordLoads, stores.timelineLoads]).toEqual([0, 1]);
  });

  it('starts keeping when the settings, once known, are the defaults', async () => {
    const { stores, tracker, monitor, panel } = keepingSetup(true);
    tracker.activate(panel);
    monitor.updateSettings({ ...DEFAULT_SETTINGS });
    await tick();
    expect([stores.recordLoads, stores.timelineLoads]).toEqual([1, 1]);
  });

  it('follows the settings live: off stops keeping, on starts again', async () => {
    const { stores, tracker, monitor, panel } = keepingSetup(false);
    tracker.activate(panel);
    await tick();
    expect([stores.recordLoads, stores.timelineLoads]).toEqual([1, 1]);
    monitor.updateSettings({
      ...DEFAULT_SETTINGS,
      rememberCellHistory: false,
      rememberTimeline: false
    });
    const model = monitor.current as KernelMemoryModel;
    const saves: string[] = [];
    stores.timeline.save = async () => {
      saves.push('timeline');
    };
    model.history.append(1, new Map([['host.rss', 1]]));
    // A mark would be written at once if the timeline were kept.
    model.history.markKernelEnd(2, 'died');
    await tick();
    expect(saves).toEqual([]);
    monitor.updateSettings({ ...DEFAULT_SETTINGS });
    await tick();
    expect([stores.recordLoads, stores.timelineLoads]).toEqual([2, 2]);
  });

  it('forgets what it is not to keep once the settings say so, not at every change', async () => {
    const { stores, tracker, monitor, panel } = keepingSetup(true);
    tracker.activate(panel);
    monitor.updateSettings({ ...DEFAULT_SETTINGS, rememberTimeline: false });
    await tick();
    expect(stores.log).toEqual(['forget timeline']);
    monitor.updateSettings({
      ...DEFAULT_SETTINGS,
      rememberTimeline: false,
      units: 'decimal'
    });
    await tick();
    expect(stores.log).toEqual(['forget timeline']);
  });

  it('turned off, writes what waits first and then forgets it with the rest; on and off again forgets again', async () => {
    const { stores, tracker, monitor, panel } = keepingSetup(false);
    tracker.activate(panel);
    await tick();
    const model = monitor.current as KernelMemoryModel;
    // A row waits for the timeline's write delay.
    model.history.append(1, new Map([['host.rss', 1]]));
    monitor.updateSettings({ ...DEFAULT_SETTINGS, rememberTimeline: false });
    await tick();
    expect(stores.log).toEqual(['save timeline', 'forget timeline']);
    monitor.updateSettings({ ...DEFAULT_SETTINGS });
    monitor.updateSettings({
      ...DEFAULT_SETTINGS,
      rememberTimeline: false,
      rememberCellHistory: false
    });
    await tick();
    expect(stores.log.slice(2).sort()).toEqual([
      'forget cells',
      'forget timeline'
    ]);
  });
});
