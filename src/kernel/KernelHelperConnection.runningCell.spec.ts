/**
 * Tests KernelHelperConnection on a page that opened while a cell runs: its
 * helper waits behind the cell, and meanwhile it shows the samples it hears
 * on other pages' comms.
 */
import {
  bootstrapHelper,
  KERNEL_STARTING_TEXT,
  LATE_KERNEL_TEXT,
  LATE_STARTING_KERNEL_TEXT,
  RUNNING_CELL_DELAYS_TEXT,
  UNKNOWN_STATUS_WAIT_MS
} from './helperBootstrapLazy';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { describeState } from '../model/MonitorState';
import { CONFIG, connect } from '../testing/connectionFixtures';
import { makeCpuSample, makeHello, MiB, wire } from '../testing/fixtures';
import { FakeKernel, settle } from '../testing/fakeKernel';

describe('KernelHelperConnection: a page opened while a cell runs', () => {
  it('says the running cell delays the kernel when its status is busy, not that it starts', async () => {
    const kernel = new FakeKernel();
    kernel.status = 'busy';
    kernel.info = new Promise(() => undefined); // Its info request waits behind the cell.
    const { model } = connect(kernel);
    await settle();
    expect(model.state).toBe('kernel-starting');
    expect(model.stateReason).toBe(RUNNING_CELL_DELAYS_TEXT);
  });

  it('says the helper waits for the running cell when a cell was heard starting, whatever the status says', async () => {
    const kernel = new FakeKernel();
    let answerInfo: () => void = () => undefined;
    const known = kernel.info;
    kernel.info = new Promise(resolve => (answerInfo = () => resolve(known)));
    const { model } = connect(kernel);
    await settle();
    // A cell starts. JupyterLab's status then says idle for another request
    // (a subshell that a reloading tab deletes) while the cell still runs.
    kernel.publishStatus('busy', 'execute_request');
    kernel.status = 'idle';
    kernel.executeOutcome = 'never'; // The bootstrap waits behind the cell.
    answerInfo();
    await settle();
    expect(model.state).toBe('bootstrapping');
    expect(model.stateReason).toBe(
      'Waiting for the running cell to finish to start the memory helper\u2026'
    );
  });

  it('says so for a kernel of unknown status only once it stayed silent a while', async () => {
    jest.useFakeTimers();
    try {
      const kernel = new FakeKernel();
      kernel.status = 'unknown'; // A page knows no status until the kernel sends one.
      kernel.info = new Promise(() => undefined);
      const { model, connection } = connect(kernel);
      await jest.advanceTimersByTimeAsync(UNKNOWN_STATUS_WAIT_MS - 500);
      expect(model.stateReason).toBe('Waiting for the kernel to start.');
      await jest.advanceTimersByTimeAsync(1000);
      expect(model.stateReason).toBe(RUNNING_CELL_DELAYS_TEXT);
      connection.dispose();
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('KernelHelperConnection: samples heard on other comms while its own waits', () => {
  /** Makes a kernel busy with a cell, so that its info request and this page's comm wait behind the cell. */
  function busyKernel(): { kernel: FakeKernel; answer: () => void } {
    let answer: (info: any) => void = () => undefined;
    const kernel = new FakeKernel();
    kernel.status = 'unknown'; // A reloaded page knows no status until the cell ends.
    kernel.info = new Promise(resolve => (answer = resolve));
    return {
      kernel,
      answer: () => answer({ language_info: { name: 'python' } })
    };
  }

  it('shows the samples the helper sends to the earlier page comm, as live, and stops once its own comm speaks', async () => {
    const { kernel, answer } = busyKernel();
    const { model } = connect(kernel);
    await settle();
    expect(model.state).toBe('kernel-starting');

    kernel.publishCommMsg(
      'earlier-page',
      wire(
        makeCpuSample({
          time: 100,
          host: { ...makeCpuSample().host, rss_bytes: 300 * MiB }
        })
      )
    );
    // The figures are shown, with a note that they come by way of another
    // page, and no request can be made yet.
    expect(model.state).toBe('overheard');
    expect(model.stateReason).toBe(describeState('overheard'));
    expect(model.latest?.host.rss_bytes).toBe(300 * MiB);
    expect(model.history.length).toBe(1);

    // The same sample sent to a second comm is a copy, not a new point.
    kernel.publishCommMsg('other-tab', wire(makeCpuSample({ time: 100 })));
    expect(model.history.length).toBe(1);
    kernel.publishCommMsg('other-tab', wire(makeCpuSample({ time: 101 })));
    expect(model.history.length).toBe(2);

    // The cell ends, so the page's own comm opens and says hello.
    answer();
    await settle();
    const own = kernel.lastComm;
    own.receive(wire(makeHello()));
    expect(model.stateReason).toMatch(/^Live: kernel process/);
    // Once this page's comm is open, only it counts, so a later sample sent
    // elsewhere is not taken.
    kernel.publishCommMsg(
      'earlier-page',
      wire(
        makeCpuSample({
          time: 200,
          host: { ...makeCpuSample().host, rss_bytes: 900 * MiB }
        })
      )
    );
    expect(model.latest?.time).toBe(101);
    expect(model.history.length).toBe(2);
  });

  it("takes nothing but samples: records, replies, hellos and other comms' data are not its business", async () => {
    const { kernel } = busyKernel();
    const { model } = connect(kernel);
    await settle();
    kernel.publishCommMsg('earlier-page', wire(makeHello()));
    kernel.publishCommMsg('earlier-page', { type: 'cells', records: [] });
    kernel.publishCommMsg('earlier-page', {
      type: 'reply',
      request_id: 'x',
      request_type: 'snapshot',
      result: {}
    });
    kernel.publishCommMsg('widget', { method: 'update', state: { value: 3 } });
    kernel.publishCommMsg('widget', { type: 'sample', value: 'not ours' });
    kernel.publishCommMsg('widget', null);
    expect(model.state).toBe('kernel-starting');
    expect(model.hello).toBeNull();
    expect(model.sampleCount).toBe(0);
    expect(model.ignoredMessageCount).toBe(0);
    expect(model.problem).toBeNull();
  });

  it('takes none while the kernel restarts, nor from a kernel it left, nor once disposed', async () => {
    const { kernel } = busyKernel();
    const { model, sessionContext, connection } = connect(kernel);
    await settle();
    sessionContext.setStatus('restarting');
    kernel.publishCommMsg('earlier-page', wire(makeCpuSample({ time: 100 })));
    expect(model.sampleCount).toBe(0);

    const other = busyKernel().kernel;
    sessionContext.changeKernel(other);
    await settle();
    kernel.publishCommMsg('earlier-page', wire(makeCpuSample({ time: 101 })));
    expect(model.sampleCount).toBe(0);
    other.publishCommMsg('its-page', wire(makeCpuSample({ time: 102 })));
    expect(model.sampleCount).toBe(1);

    connection.dispose();
    other.publishCommMsg('its-page', wire(makeCpuSample({ time: 103 })));
    expect(model.sampleCount).toBe(1);
  });

  it('a helper of another protocol keeps its samples to itself', async () => {
    const { kernel, answer } = busyKernel();
    const { model } = connect(kernel);
    await settle();
    answer();
    await settle();
    kernel.lastComm.receive(wire(makeHello({ protocol: 999 as any })));
    expect(model.state).toBe('protocol-mismatch');
    kernel.publishCommMsg('earlier-page', wire(makeCpuSample({ time: 100 })));
    expect(model.state).toBe('protocol-mismatch');
    expect(model.sampleCount).toBe(0);
  });
});

describe('KernelHelperConnection: a cell that outlasts the kernel info wait', () => {
  afterEach(() => jest.useRealTimers());

  it('says after two minutes that the kernel has not answered, and starts the helper when it does', async () => {
    jest.useFakeTimers();
    let answer: (info: any) => void = () => undefined;
    const kernel = new FakeKernel();
    kernel.status = 'unknown';
    kernel.info = new Promise(resolve => (answer = resolve));
    const requests: unknown[] = [];
    (kernel as any).requestKernelInfo = () => {
      requests.push(null);
      return new Promise(() => undefined); // This request is queued behind the cell too.
    };
    const { model } = connect(kernel);
    await jest.advanceTimersByTimeAsync(10 * 60_000);
    expect(model.state).toBe('kernel-starting');
    expect(model.stateReason).toBe(LATE_KERNEL_TEXT);
    // The info is asked for again with growing waits (10, 20, 40, and then
    // every 60 s), not every 10 s.
    expect(requests.length).toBeLessThanOrEqual(12);

    answer({ language_info: { name: 'python' } }); // The cell ended.
    await jest.advanceTimersByTimeAsync(0);
    expect(kernel.executed).toHaveLength(1);
    kernel.lastComm.receive(wire(makeHello()));
    expect(model.state).toBe('live');
  });
});

describe("KernelHelperConnection: figures heard on another page's comm that stop", () => {
  it('keeps asking the kernel for its info (the figures do not count as a busy kernel), and says when they went stale', async () => {
    jest.useFakeTimers();
    try {
      const kernel = new FakeKernel();
      kernel.status = 'unknown';
      kernel.info = new Promise(() => undefined); // Lost with a process that another page restarted.
      let asked = 0;
      (kernel as any).requestKernelInfo = () => {
        asked++;
        return new Promise(() => undefined);
      };
      const { model, connection } = connect(kernel);
      await jest.advanceTimersByTimeAsync(100);
      kernel.publishCommMsg(
        'earlier-page',
        wire(makeCpuSample({ time: Date.now() / 1000 }))
      );
      expect(model.state).toBe('overheard');
      expect(model.kernelBusy).toBe(false);
      await jest.advanceTimersByTimeAsync(40_000);
      expect(asked).toBeGreaterThan(0); // It is not held back as if a cell ran.
      // No sample was heard for longer than the silence limit, so the state
      // is no longer "live".
      expect(model.state).toBe('kernel-starting');
      expect(model.stateReason).toMatch(
        /^No sample heard for \d+ s; waiting for the kernel to answer/
      );
      connection.dispose();
    } finally {
      jest.useRealTimers();
    }
  });

  it("takes another page's samples on a page opened mid-cell even when JupyterLab says idle for a subshell request", async () => {
    const kernel = new FakeKernel();
    kernel.status = 'unknown';
    kernel.info = new Promise(() => undefined);
    const { model } = connect(kernel);
    await settle();
    kernel.publishStatus('busy', 'execute_request'); // A later cell is heard starting.
    kernel.status = 'idle'; // Another page's subshell request ended.
    kernel.publishStatus('idle', 'create_subshell_request');
    kernel.publishCommMsg('earlier-page', wire(makeCpuSample({ time: 100 })));
    expect(model.state).toBe('overheard');
    kernel.publishStatus('idle', 'execute_request'); // The cell ended, so this page's comm opens next.
    kernel.publishCommMsg('earlier-page', wire(makeCpuSample({ time: 101 })));
    expect(model.sampleCount).toBe(1);
  });
});

describe('KernelHelperConnection: a running cell is said only where one may run', () => {
  const WAITS_FOR_CELL =
    'Waiting for the running cell to finish to start the memory helper\u2026';
  const WAITS_FOR_START =
    'The kernel is still starting; the memory helper starts when it is ready\u2026';

  /** Collects the state sentences that the model reports after this call. */
  function reasons(model: KernelMemoryModel): string[] {
    const said: string[] = [];
    model.changed.connect((_, change) => {
      if (change === 'state') {
        said.push(model.stateReason);
      }
    });
    return said;
  }

  it('connecting anew while the kernel runs the bootstrap this page sent: the kernel starts, no cell runs', async () => {
    const kernel = new FakeKernel();
    kernel.executeOutcome = 'never'; // The kernel is still starting the helper.
    const { model, connection } = connect(kernel);
    await settle();
    const bootstrap = kernel.executed[0].msg.header.msg_id;
    kernel.status = 'busy';
    kernel.publishStatus('busy', 'execute_request', bootstrap);
    const said = reasons(model);
    connection.reconnect(); // For example its silence watch, while the first bootstrap runs.
    await settle();
    expect(said).toEqual([KERNEL_STARTING_TEXT, WAITS_FOR_START]);
    expect(model.kernelBusyWith).toBe('helper'); // The banner says so too.
    // The helper was sent again, queued behind the first bootstrap.
    expect(kernel.executed.map(e => e.code)).toEqual([
      'BOOTSTRAP',
      'BOOTSTRAP'
    ]);
  });

  it('connecting anew while a cell runs still speaks of the cell', async () => {
    const kernel = new FakeKernel();
    kernel.executeOutcome = 'never';
    const { model, connection } = connect(kernel);
    await settle();
    kernel.status = 'busy';
    kernel.publishStatus('busy', 'execute_request', 'a-cell');
    const said = reasons(model);
    connection.reconnect();
    await settle();
    expect(said).toEqual([RUNNING_CELL_DELAYS_TEXT, WAITS_FOR_CELL]);
  });

  it('a cell about to run in a restarted kernel busy with its wake-up: the helper goes ahead, said as the kernel starting', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, model, connection } = connect(kernel);
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    sessionContext.setStatus('restarting');
    sessionContext.connectionStatusChanged.emit('connecting');
    sessionContext.connectionStatusChanged.emit('connected');
    sessionContext.setStatus('starting');
    const nudge = kernel.executed.find(e => e.code === '')!;
    kernel.status = 'busy';
    kernel.publishStatus('busy', 'execute_request', nudge.msg.header.msg_id);
    kernel.executeOutcome = 'never';
    connection.deliverBeforeExecution(); // As Restart and Run All does.
    await settle();
    expect(kernel.executed.map(e => e.code)).toEqual([
      'BOOTSTRAP',
      '',
      'BOOTSTRAP'
    ]);
    expect(model.state).toBe('bootstrapping');
    expect(model.stateReason).toBe(WAITS_FOR_START);
  });

  describe('the kernel info wait', () => {
    afterEach(() => jest.useRealTimers());

    /** Runs a bootstrap against a kernel that never answers its info request. */
    function waitForInfo(status: string, busyWith: 'cell' | 'helper' | null) {
      const model = new KernelMemoryModel({ historyCapacity: 10 });
      if (busyWith) {
        model.setKernelBusy(true, busyWith);
      }
      let stale = false;
      const kernel = {
        status,
        info: new Promise(() => undefined),
        requestKernelInfo: () => new Promise(() => undefined)
      };
      void bootstrapHelper(kernel as any, {
        model,
        stale: () => stale,
        loadBootstrapCode: async () => 'BOOTSTRAP',
        config: () => CONFIG,
        adopt: () => undefined,
        abandon: () => undefined,
        claimDelivery: () => true
      });
      return { model, stop: () => (stale = true) };
    }

    it.each([
      ['busy', 'helper', KERNEL_STARTING_TEXT, LATE_STARTING_KERNEL_TEXT],
      ['busy', 'cell', RUNNING_CELL_DELAYS_TEXT, LATE_KERNEL_TEXT],
      // JupyterLab says busy, and the page heard nothing of what the kernel
      // is busy with, so a cell may be running.
      ['busy', null, RUNNING_CELL_DELAYS_TEXT, LATE_KERNEL_TEXT],
      ['unknown', 'helper', KERNEL_STARTING_TEXT, LATE_STARTING_KERNEL_TEXT],
      ['unknown', null, RUNNING_CELL_DELAYS_TEXT, LATE_KERNEL_TEXT]
    ] as const)(
      'status %s, heard busy with %s',
      async (status, busyWith, waiting, late) => {
        jest.useFakeTimers();
        const { model, stop } = waitForInfo(status, busyWith);
        await jest.advanceTimersByTimeAsync(UNKNOWN_STATUS_WAIT_MS + 500);
        expect(model.stateReason).toBe(waiting);
        await jest.advanceTimersByTimeAsync(3 * 60_000);
        expect(model.stateReason).toBe(late);
        stop();
        await jest.advanceTimersByTimeAsync(2 * 60_000);
      }
    );
  });
});
