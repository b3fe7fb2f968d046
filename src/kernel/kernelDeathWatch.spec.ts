/** Tests that KernelDeathWatch tells a kernel's death from a restart that the user asked for. */
import { KernelDeathWatch } from './KernelDeathWatch';
import { KernelHelperConnection } from './KernelHelperConnection';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { FakeKernel, FakeSessionContext, settle } from '../testing/fakeKernel';
import { GiB, makeCpuSample, makeHello, wire } from '../testing/fixtures';
import { run } from '../testing/kernelDeathWatchFixtures';

describe('KernelDeathWatch', () => {
  function setup() {
    const kernel = new FakeKernel();
    const sessionContext = new FakeSessionContext(kernel);
    const model = new KernelMemoryModel({ historyCapacity: 100 });
    const watch = new KernelDeathWatch({
      sessionContext: sessionContext as any,
      model
    });
    model.ingest(wire(makeHello()));
    model.ingest(wire(makeCpuSample({ time: 1000 })));
    return { kernel, sessionContext, model, watch };
  }

  /** What JupyterLab says when the server restarted a dead kernel. */
  function serverRestart(sessionContext: FakeSessionContext) {
    sessionContext.setStatus('restarting'); // This is the server's status message.
    sessionContext.setStatus('autorestarting'); // This follows in the next microtask.
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

  it("a restart without autorestarting was the user's: no death, and the last one is cleared", async () => {
    const { sessionContext, model } = setup();
    serverRestart(sessionContext);
    sessionContext.setStatus('idle');
    expect(model.death).not.toBeNull();
    sessionContext.setStatus('restarting'); // Said by sessionContext.restartKernel().
    sessionContext.setStatus('restarting'); // Said again by the kernel connection itself.
    model.startKernelSession(); // The helper connection does this meanwhile.
    expect(model.history.marks.map(m => m.kind)).toEqual(['died']); // The restart is not known yet.
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

  it("a restarted process that dies before it answers leaves nothing to stand in for the next death's figures", async () => {
    const { sessionContext, model } = setup();
    const withKills = (time: number, kills: number) =>
      wire(
        makeCpuSample({
          time,
          host: {
            rss_bytes: 3.9 * GiB,
            total_bytes: 64 * GiB,
            available_bytes: 40 * GiB,
            container: {
              limit_bytes: 4 * GiB,
              usage_bytes: 3.95 * GiB,
              inactive_file_bytes: 0,
              oom_kill_count: kills,
              cgroup_version: 2
            }
          }
        })
      );
    serverRestart(sessionContext);
    model.startKernelSession();
    serverRestart(sessionContext); // The restarted process dies too, before it says idle.
    model.startKernelSession();
    await settle();
    sessionContext.setStatus('idle');
    // The third process runs for an hour, and then the OOM killer ends it.
    model.ingest(wire(makeHello({ pid: 999, record_series: 'third' })));
    model.ingest(withKills(5000, 1));
    serverRestart(sessionContext);
    model.startKernelSession();
    model.ingest(withKills(5010, 2)); // The restarted kernel's kill count has risen.
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
    sessionContext.setStatus('restarting'); // The connection forgets the figures here.
    expect(model.latest).toBeNull();
    sessionContext.setStatus('autorestarting');
    expect(model.death!.lastSample).not.toBeNull();
    expect(model.latest).toBeNull(); // The connection forgot the sample afterwards.
    expect(model.history.window(-Infinity).times[0]).toBe(1000); // The timeline keeps it.
    expect(Number.isNaN(model.history.latest('host.rss'))).toBe(true); // A gap follows it.
    connection.dispose();
  });
});
