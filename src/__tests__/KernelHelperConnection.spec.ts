import {
  LATE_KERNEL_TEXT,
  RUNNING_CELL_DELAYS_TEXT,
  SKIPPED_BEHIND_A_CELL_TEXT,
  UNKNOWN_STATUS_WAIT_MS
} from '../kernel/helperBootstrap';
import { MAX_REDELIVERIES } from '../kernel/HelperDelivery';
import { KernelHelperConnection } from '../kernel/KernelHelperConnection';
import {
  HelperRequestError,
  RequestAbandonedError
} from '../kernel/PendingRequests';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { describeState } from '../model/MonitorState';
import { COMM_TARGET } from '../protocol';
import { makeCellRecord } from './cellFixtures';
import { makeCpuSample, makeHello, makeSample, MiB, wire } from './fixtures';
import {
  connectHelper,
  FakeKernel,
  FakeSessionContext,
  settle
} from './fakeKernel';

const CONFIG = { interval_s: 1, change_threshold_bytes: 1048576, heartbeat_s: 10 };

function connect(
  kernel: FakeKernel | null,
  options: { requestTimeoutMs?: number } = {}
) {
  return connectHelper(kernel, { config: () => CONFIG, ...options });
}

describe('KernelHelperConnection', () => {
  it('bootstraps silently, opens the comm, then goes live on hello', async () => {
    const kernel = new FakeKernel();
    const { model } = connect(kernel);
    await settle();

    expect(kernel.executed).toHaveLength(1);
    expect(kernel.executed[0].content).toEqual({
      code: 'BOOTSTRAP',
      silent: true,
      store_history: false,
      allow_stdin: false,
      stop_on_error: false
    });
    expect(kernel.comms).toHaveLength(1);
    const comm = kernel.lastComm;
    expect(comm.targetName).toBe(COMM_TARGET);
    expect(comm.opened).toEqual([{ type: 'open', protocol: 1, config: CONFIG }]);
    expect(comm.openedOver).toEqual(['disabled']); // on the main shell, behind running cells
    expect(model.state).toBe('bootstrapping');

    comm.receive(wire(makeHello()));
    expect(model.state).toBe('live');
    comm.receive(wire(makeSample({ seq: 1, reason: 'initial' })));
    comm.receive(wire(makeSample({ seq: 2, time: 1732200001 })));
    expect(model.sampleCount).toBe(2);
    expect(model.latest?.seq).toBe(2);
  });

  it('uses the generated helper bundle by default', async () => {
    const kernel = new FakeKernel();
    const sessionContext = new FakeSessionContext(kernel);
    new KernelHelperConnection({
      sessionContext: sessionContext as any,
      model: new KernelMemoryModel({ historyCapacity: 10 }),
      config: () => CONFIG
    });
    await settle();
    expect(kernel.executed[0].content.code).toContain('jupyterlab-vram bootstrap');
  });

  it('reports a bootstrap error with ename and evalue', async () => {
    const kernel = new FakeKernel();
    kernel.executeOutcome = {
      status: 'error',
      ename: 'ModuleNotFoundError',
      evalue: "No module named 'psutil'",
      traceback: []
    };
    const { model } = connect(kernel);
    await settle();
    expect(model.state).toBe('helper-failed');
    expect(model.stateReason).toContain("ModuleNotFoundError: No module named 'psutil'");
    // The comm went with the bootstrap (in the same tick); its target was never
    // registered, so it is dropped, and the kernel's close of it changes nothing.
    expect(kernel.comms).toHaveLength(1);
    expect(kernel.lastComm.isDisposed).toBe(true);
    kernel.lastComm.closeFromKernel();
    expect(model.state).toBe('helper-failed');
  });

  it('fails a request sent while the bootstrap ran, when the helper did not start', async () => {
    const kernel = new FakeKernel();
    let reply: (outcome: { status: string; [key: string]: unknown }) => void = () => undefined;
    kernel.executeOutcome = { later: new Promise(resolve => (reply = resolve)) };
    const { connection, model } = connect(kernel);
    await settle();
    const pending = connection.configure({ interval_s: 0.5 });
    reply({ status: 'error', ename: 'ImportError', evalue: 'no helper', traceback: [] });
    await expect(pending).rejects.toThrow('did not start');
    expect(model.state).toBe('helper-failed');
  });

  it('reports an aborted bootstrap', async () => {
    const kernel = new FakeKernel();
    kernel.executeOutcome = { status: 'aborted' };
    const { model } = connect(kernel);
    await settle();
    expect(model.state).toBe('helper-failed');
    expect(model.stateReason).toContain('aborted');
  });

  it('leaves non-Python kernels alone and names their language', async () => {
    const kernel = new FakeKernel('R');
    const { model } = connect(kernel);
    await settle();
    expect(model.state).toBe('non-python');
    expect(model.stateReason).toContain('R');
    expect(kernel.executed).toHaveLength(0);
  });

  it('says when the notebook has no kernel', async () => {
    const { model } = connect(null);
    await settle();
    expect(model.state).toBe('disconnected');
    expect(model.stateReason).toContain('no kernel');
  });

  it('re-bootstraps after a restart, once the kernel is idle', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, model } = connect(kernel);
    await settle();
    const first = kernel.lastComm;
    first.receive(wire(makeHello()));
    first.receive(wire(makeSample()));
    expect(model.state).toBe('live');

    sessionContext.setStatus('restarting');
    expect(model.state).toBe('kernel-starting');
    expect(model.latest).toBeNull(); // old process figures are gone
    sessionContext.setStatus('starting');
    await settle();
    const bootstraps = () => kernel.executed.filter(e => e.content.code === 'BOOTSTRAP');
    expect(bootstraps()).toHaveLength(1); // the empty cell that makes it say idle, no helper yet

    sessionContext.setStatus('idle');
    await settle();
    expect(bootstraps()).toHaveLength(2);
    expect(kernel.comms).toHaveLength(2);
    // Messages on the old comm are ignored.
    first.receive(wire(makeSample({ seq: 99 })));
    expect(model.latest).toBeNull();
    kernel.lastComm.receive(wire(makeHello({ pid: 5151 })));
    expect(model.state).toBe('live');
    expect(model.hello?.pid).toBe(5151);
  });

  it('does not bootstrap twice when restartKernel() re-announces the same kernel', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, model } = connect(kernel);
    await settle();
    sessionContext.setStatus('restarting');
    sessionContext.setStatus('idle');
    await settle();
    expect(kernel.executed).toHaveLength(2);
    // SessionContext.restartKernel() ends with kernelChanged(same kernel).
    sessionContext.kernelChanged.emit({ name: 'kernel', oldValue: kernel, newValue: kernel });
    await settle();
    expect(kernel.executed).toHaveLength(2);
    expect(kernel.comms).toHaveLength(2);
    expect(kernel.comms[1].closed).toBe(false);
    kernel.lastComm.receive(wire(makeHello()));
    expect(model.state).toBe('live');
  });

  it('bootstraps when restartKernel() announces the kernel before it went idle', async () => {
    const kernel = new FakeKernel();
    const { sessionContext } = connect(kernel);
    await settle();
    sessionContext.setStatus('restarting');
    sessionContext.kernelChanged.emit({ name: 'kernel', oldValue: kernel, newValue: kernel });
    await settle();
    expect(kernel.executed).toHaveLength(2);
    sessionContext.setStatus('idle'); // no second bootstrap
    await settle();
    expect(kernel.executed).toHaveLength(2);
  });

  it('re-bootstraps after an automatic restart (kernel died)', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, model } = connect(kernel);
    await settle();
    sessionContext.setStatus('autorestarting');
    expect(model.stateReason).toContain('died');
    sessionContext.setStatus('idle');
    await settle();
    expect(kernel.executed).toHaveLength(2);
  });

  it('asks a restarted kernel that has not said idle to run an empty cell, once', async () => {
    // After an automatic restart the page can miss the new process's first
    // statuses (its IOPub not joined yet): it stays 'starting' until the
    // kernel runs something, and the helper waits for 'idle'.
    const kernel = new FakeKernel();
    const { sessionContext } = connect(kernel);
    await settle();
    sessionContext.setStatus('autorestarting');
    sessionContext.connectionStatusChanged.emit('connecting');
    sessionContext.connectionStatusChanged.emit('connected');
    sessionContext.setStatus('starting');
    const nudges = kernel.executed.filter(e => e.content.code === '');
    expect(nudges).toHaveLength(1);
    expect(nudges[0].content).toMatchObject({ silent: true, store_history: false });
    sessionContext.setStatus('idle'); // what the empty cell makes the kernel say
    await settle();
    expect(kernel.executed.filter(e => e.content.code === 'BOOTSTRAP')).toHaveLength(2);
    sessionContext.setStatus('starting'); // not restarting any more: nothing to ask
    expect(kernel.executed.filter(e => e.content.code === '')).toHaveLength(1);
  });

  it('asks nothing of a restarted kernel that does not run Python', async () => {
    const kernel = new FakeKernel('R');
    const { sessionContext, model } = connect(kernel);
    await settle();
    expect(model.state).toBe('non-python');
    sessionContext.setStatus('autorestarting');
    sessionContext.connectionStatusChanged.emit('connecting');
    sessionContext.connectionStatusChanged.emit('connected');
    sessionContext.setStatus('starting');
    expect(kernel.executed).toEqual([]);
  });

  it('says a Python kernel other than ipykernel is not supported, and never runs code in it', async () => {
    for (const implementation of ['xeus-python', 'pyodide']) {
      const kernel = new FakeKernel();
      kernel.info = Promise.resolve({ implementation, language_info: { name: 'python' } });
      const { model, connection } = connect(kernel);
      await settle();
      expect(model.state).toBe('non-python');
      expect(model.stateReason).toBe(
        `This notebook's kernel is ${implementation}: GPU memory monitoring needs ipykernel (IPython's Python kernel).`
      );
      connection.deliverBeforeExecution(); // a cell about to run: still nothing
      await settle();
      expect(kernel.executed).toEqual([]);
      expect(kernel.comms).toEqual([]);
      connection.dispose();
    }
  });

  it('follows a kernel change and closes the old comm', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, model } = connect(kernel);
    await settle();
    const oldComm = kernel.lastComm;
    const other = new FakeKernel();
    sessionContext.changeKernel(other);
    await settle();
    expect(oldComm.closed).toBe(true);
    expect(other.executed).toHaveLength(1);
    expect(other.comms).toHaveLength(1);
    expect(model.state).toBe('bootstrapping');
  });

  it('takes a kernel change in the order services signals it for no lost connection', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, model } = connect(kernel);
    await settle();
    const oldComm = kernel.lastComm;
    oldComm.receive(wire(makeHello()));
    const states: string[] = [];
    model.changed.connect(() => states.push(`${model.state}: ${model.stateReason ?? ''}`));
    const other = new FakeKernel();
    sessionContext.changeKernelAsServices(other);
    await settle();
    expect(states.filter(s => s.includes('Lost the connection'))).toEqual([]);
    // Attached once: one bootstrap and one comm in the new kernel.
    expect(other.executed).toHaveLength(1);
    expect(other.comms).toHaveLength(1);
    expect(model.state).toBe('bootstrapping');
    // The old comm could not be closed (its kernel's connection is gone): if the
    // notebook comes back to that kernel, the open names it for the helper to close.
    const back = kernel;
    back.isDisposed = false;
    sessionContext.changeKernelAsServices(back);
    await settle();
    expect(back.lastComm.opened[0].replaces).toEqual([oldComm.commId]);
  });

  it('sends the helper again when the kernel skipped it behind a failed cell', async () => {
    // A page opened while a cell runs: the bootstrap waits behind it; the cell
    // fails, and ipykernel skips what was queued behind it (not the comm_open).
    let answer: (reply: { status: string }) => void = () => undefined;
    const kernel = new FakeKernel();
    kernel.executeOutcome = { later: new Promise(resolve => (answer = resolve)) };
    const { model } = connect(kernel);
    await settle();
    const skipped = kernel.lastComm;
    expect(kernel.executed).toHaveLength(1);
    kernel.executeOutcome = 'never'; // the kernel runs the helper sent again
    answer({ status: 'aborted' });
    await settle();
    expect(skipped.closed).toBe(true); // told to the kernel: a helper already there had taken it
    expect(kernel.executed).toHaveLength(2);
    expect(kernel.comms).toHaveLength(2);
    expect(model.state).toBe('bootstrapping');
    // Said until the helper answers (the kernel is idle now: no running cell to wait for).
    expect(model.stateReason).toBe(SKIPPED_BEHIND_A_CELL_TEXT);
    kernel.lastComm.receive(wire(makeHello()));
    expect(model.state).toBe('live');
  });

  it('says the helper failed when the kernel keeps skipping it', async () => {
    const kernel = new FakeKernel();
    kernel.executeOutcome = { status: 'aborted' };
    const states: string[] = [];
    const { model } = connect(kernel);
    model.changed.connect(() => states.push(model.stateReason ?? ''));
    await settle();
    expect(kernel.executed).toHaveLength(1 + MAX_REDELIVERIES);
    expect(states).toContain(SKIPPED_BEHIND_A_CELL_TEXT);
    expect(model.state).toBe('helper-failed');
    expect(model.stateReason).toContain('aborted');
  });

  it('drops a bootstrap that a kernel change overtook', async () => {
    const slow = new FakeKernel();
    slow.executeOutcome = 'never';
    const { sessionContext, model } = connect(slow);
    await settle();
    const python = new FakeKernel('python');
    sessionContext.changeKernel(new FakeKernel('julia'));
    await settle();
    expect(model.state).toBe('non-python');
    sessionContext.changeKernel(python);
    await settle();
    expect(python.comms).toHaveLength(1);
  });

  it('shows a dead kernel as disconnected', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, model } = connect(kernel);
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    sessionContext.setStatus('dead');
    expect(model.state).toBe('disconnected');
    expect(model.stateReason).toContain('dead');
  });

  it('shows a lost connection and starts over when it comes back', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, model } = connect(kernel);
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    sessionContext.connectionStatusChanged.emit('connecting');
    expect(model.state).toBe('disconnected');
    sessionContext.connectionStatusChanged.emit('connected');
    await settle();
    expect(kernel.executed).toHaveLength(2);
    expect(kernel.comms).toHaveLength(2);
  });

  it('names the comm of a lost connection in the next open, which the helper then closes', async () => {
    const kernel = new FakeKernel();
    const { sessionContext } = connect(kernel);
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    const lost: string[] = [];
    for (let round = 0; round < 2; round++) {
      lost.push(kernel.lastComm.commId);
      sessionContext.connectionStatusChanged.emit('connecting');
      sessionContext.connectionStatusChanged.emit('connected');
      await settle();
      // Only the comm lost this time: the one before was named already.
      expect(kernel.lastComm.opened[0].replaces).toEqual([lost[round]]);
      kernel.lastComm.receive(wire(makeHello()));
    }
    // Lost, and then the notebook changes kernel: the other kernel never had that comm.
    sessionContext.connectionStatusChanged.emit('connecting');
    const another = new FakeKernel();
    sessionContext.changeKernel(another);
    await settle();
    expect(another.lastComm.opened[0].replaces).toBeUndefined(); // a lost comm of another kernel
  });

  it('fails the requests in flight as soon as the connection is lost', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, connection } = connect(kernel);
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    const pending = connection.inspect();
    sessionContext.connectionStatusChanged.emit('connecting');
    await expect(pending).rejects.toBeInstanceOf(RequestAbandonedError);
    await expect(pending).rejects.toThrow('Lost the connection');
  });

  it('lets new settings wait for a cell longer than the request timeout', async () => {
    const kernel = new FakeKernel();
    const { connection } = connect(kernel, { requestTimeoutMs: 10 });
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    let settled = false;
    const pending = connection.configure({ interval_s: 0.5 });
    pending.then(
      () => (settled = true),
      () => (settled = true)
    );
    await new Promise(resolve => setTimeout(resolve, 50));
    expect(settled).toBe(false); // a ping would have timed out by now
    const id = kernel.lastComm.lastRequest.request_id;
    kernel.lastComm.receive({ type: 'reply', request_id: id, request_type: 'configure', result: { config: CONFIG } });
    await expect(pending).resolves.toEqual({ config: CONFIG });
  });

  it('tracks busy and idle while live', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, model } = connect(kernel);
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    sessionContext.setStatus('busy');
    expect(model.kernelBusy).toBe(true);
    // Samples keep coming while busy.
    kernel.lastComm.receive(wire(makeSample()));
    expect(model.sampleCount).toBe(1);
    expect(model.state).toBe('live');
    sessionContext.setStatus('idle');
    expect(model.kernelBusy).toBe(false);
  });

  it('makes a protocol mismatch visible', async () => {
    const kernel = new FakeKernel();
    const { model } = connect(kernel);
    await settle();
    kernel.lastComm.receive({ type: 'hello', protocol: 3, helper_version: '3.0.0' });
    expect(model.state).toBe('protocol-mismatch');
    kernel.lastComm.closeFromKernel();
    expect(model.state).toBe('protocol-mismatch');
  });

  it('shows a comm closed by the kernel as disconnected', async () => {
    const kernel = new FakeKernel();
    const { model } = connect(kernel);
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    kernel.lastComm.closeFromKernel();
    expect(model.state).toBe('disconnected');
  });

  describe('requests', () => {
    it('resolves a snapshot with the seq of its sample', async () => {
      const kernel = new FakeKernel();
      const { model, connection } = connect(kernel);
      await settle();
      const comm = kernel.lastComm;
      comm.receive(wire(makeHello()));
      const pending = connection.requestSnapshot();
      const request = comm.lastRequest;
      expect(request.type).toBe('snapshot');
      expect(typeof request.request_id).toBe('string');
      comm.receive(wire(makeSample({ seq: 7, reason: 'snapshot' })));
      comm.receive({ type: 'reply', request_id: request.request_id, request_type: 'snapshot', result: { seq: 7 } });
      await expect(pending).resolves.toEqual({ seq: 7 });
      expect(model.latest?.seq).toBe(7);
    });

    it('gives every request its own id', async () => {
      const kernel = new FakeKernel();
      const { connection } = connect(kernel);
      await settle();
      void connection.ping().catch(() => undefined);
      void connection.ping().catch(() => undefined);
      const [a, b] = kernel.lastComm.sent;
      expect(a.request_id).not.toBe(b.request_id);
    });

    it('sends configure with the config and resolves with the effective one', async () => {
      const kernel = new FakeKernel();
      const { connection } = connect(kernel);
      await settle();
      const pending = connection.configure({ interval_s: 0.5 });
      const request = kernel.lastComm.lastRequest;
      expect(request).toEqual({ type: 'configure', request_id: request.request_id, config: { interval_s: 0.5 } });
      kernel.lastComm.receive({
        type: 'reply',
        request_id: request.request_id,
        request_type: 'configure',
        result: { config: { ...CONFIG, interval_s: 0.5 } }
      });
      await expect(pending).resolves.toEqual({ config: { ...CONFIG, interval_s: 0.5 } });
    });

    it('rejects with the helper error code and message', async () => {
      const kernel = new FakeKernel();
      const { connection } = connect(kernel);
      await settle();
      const pending = connection.configure({ interval_s: 999 });
      const id = kernel.lastComm.lastRequest.request_id;
      kernel.lastComm.receive({ type: 'error', request_id: id, code: 'invalid_config', message: 'interval_s must be ...' });
      await expect(pending).rejects.toBeInstanceOf(HelperRequestError);
      await expect(pending).rejects.toMatchObject({ code: 'invalid_config' });
    });

    it('rejects at once a request whose answer is malformed, and still counts it', async () => {
      const kernel = new FakeKernel();
      const { model, connection } = connect(kernel);
      await settle();
      const pending = connection.configure({ interval_s: 0.5 });
      const id = kernel.lastComm.lastRequest.request_id;
      kernel.lastComm.receive({ type: 'reply', request_id: id, request_type: 'configure', result: 'oops' });
      await expect(pending).rejects.toBeInstanceOf(HelperRequestError);
      await expect(pending).rejects.toMatchObject({ code: 'malformed_answer' });
      await expect(pending).rejects.toThrow(/answer was malformed.*reply\.result/);
      expect(model.ignoredMessageCount).toBe(1);
    });

    it('rejects at once a request whose error answer is malformed', async () => {
      const kernel = new FakeKernel();
      const { connection } = connect(kernel);
      await settle();
      const pending = connection.ping();
      const id = kernel.lastComm.lastRequest.request_id;
      kernel.lastComm.receive({ type: 'error', request_id: id, code: 7 });
      await expect(pending).rejects.toMatchObject({ code: 'malformed_answer' });
    });

    it('times out, and drops the late reply', async () => {
      const kernel = new FakeKernel();
      const { model, connection } = connect(kernel, { requestTimeoutMs: 10 });
      await settle();
      const pending = connection.ping();
      const id = kernel.lastComm.lastRequest.request_id;
      await expect(pending).rejects.toBeInstanceOf(RequestAbandonedError);
      kernel.lastComm.receive({ type: 'reply', request_id: id, request_type: 'ping', result: {} });
      expect(model.notes).toEqual([]);
    });

    it('rejects pending requests when the kernel restarts', async () => {
      const kernel = new FakeKernel();
      const { sessionContext, connection } = connect(kernel);
      await settle();
      const pending = connection.ping();
      sessionContext.setStatus('restarting');
      await expect(pending).rejects.toBeInstanceOf(RequestAbandonedError);
    });

    it('refuses requests without a comm', async () => {
      const kernel = new FakeKernel('R');
      const { connection } = connect(kernel);
      await settle();
      await expect(connection.ping()).rejects.toThrow('not connected');
      await expect(connection.configure({ interval_s: 2 })).resolves.toBeNull();
    });
  });

  it('closes its comm and stops listening when disposed', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, model, connection } = connect(kernel);
    await settle();
    const comm = kernel.lastComm;
    connection.dispose();
    expect(comm.closed).toBe(true);
    sessionContext.setStatus('restarting');
    sessionContext.setStatus('idle');
    await settle();
    expect(kernel.executed).toHaveLength(1);
    expect(model.state).toBe('bootstrapping');
  });

  it('reconnects on demand after a failure', async () => {
    const kernel = new FakeKernel();
    kernel.executeOutcome = { status: 'error', ename: 'RuntimeError', evalue: 'boom', traceback: [] };
    const { model, connection } = connect(kernel);
    await settle();
    expect(model.state).toBe('helper-failed');
    kernel.executeOutcome = { status: 'ok' };
    connection.reconnect();
    await settle();
    expect(kernel.comms.map(c => c.isDisposed)).toEqual([true, false]);
    expect(model.state).toBe('bootstrapping');
  });

  it('reports a rejected bootstrap request', async () => {
    const kernel = new FakeKernel();
    kernel.executeOutcome = 'reject';
    const { model } = connect(kernel);
    await settle();
    expect(model.state).toBe('helper-failed');
    expect(model.stateReason).toContain('Canceled future');
  });
});

describe('KernelHelperConnection: the helper goes ahead of a cell', () => {
  /** A Python kernel (by its spec) whose info reply has not come yet. */
  function slowToAnswer(language = 'python') {
    const kernel = new FakeKernel() as FakeKernel & { spec: Promise<any> };
    kernel.info = new Promise(() => undefined);
    kernel.spec = Promise.resolve({ language });
    return kernel;
  }

  /** What the notebook sends for a cell. */
  function runCell(kernel: FakeKernel, code: string) {
    kernel.requestExecute({ code, silent: false });
  }

  it('goes nowhere ahead of a cell when the spec names a Python kernel other than ipykernel', async () => {
    for (const spec of [
      { language: 'python', name: 'xpython', argv: ['/opt/conda/bin/xpython', '-f', '{connection_file}'] },
      { language: 'python', name: 'python', display_name: 'Python (Pyodide)' }
    ]) {
      const kernel = slowToAnswer();
      kernel.spec = Promise.resolve(spec);
      const { connection } = connect(kernel);
      await settle();
      connection.deliverBeforeExecution();
      runCell(kernel, 'x = 1');
      expect(kernel.executed.map(e => e.content.code)).toEqual(['x = 1']);
      expect(kernel.comms).toEqual([]);
      connection.dispose();
    }
    // An ipykernel environment whose name merely contains "xeus" is ipykernel.
    const kernel = slowToAnswer();
    kernel.spec = Promise.resolve({
      language: 'python',
      name: 'py-xeus-dev',
      argv: ['/envs/xeus-dev/bin/python', '-m', 'ipykernel_launcher', '-f', '{connection_file}']
    });
    const { connection } = connect(kernel);
    await settle();
    connection.deliverBeforeExecution();
    runCell(kernel, 'x = 1');
    expect(kernel.executed.map(e => e.content.code)).toEqual(['BOOTSTRAP', 'x = 1']);
  });

  it('sent ahead of a cell to a kernel whose info then says it is not ipykernel: says so, not that the helper failed', async () => {
    const kernel = slowToAnswer();
    let answer: (info: any) => void = () => undefined;
    kernel.info = new Promise(resolve => (answer = resolve));
    let reply: (content: any) => void = () => undefined;
    kernel.executeOutcome = { later: new Promise(resolve => (reply = resolve)) };
    const { connection, model } = connect(kernel);
    await settle();
    connection.deliverBeforeExecution(); // its spec said only 'python'
    expect(kernel.executed.map(e => e.content.code)).toEqual(['BOOTSTRAP']);
    answer({ implementation: 'xeus-python', language_info: { name: 'python' } });
    await settle();
    expect(model.state).toBe('non-python');
    reply({ status: 'error', ename: 'NameError', evalue: "name 'get_ipython' is not defined", traceback: [] });
    await settle();
    expect(model.state).toBe('non-python');
    expect(model.stateReason).toContain('xeus-python');
  });

  it('a cell run before the kernel answered follows the helper (Run All on opening)', async () => {
    const kernel = slowToAnswer();
    const { connection, model } = connect(kernel);
    await settle();
    expect(kernel.executed).toHaveLength(0); // the run waits for the kernel's info
    connection.deliverBeforeExecution();
    runCell(kernel, 'x = 1');
    expect(kernel.executed.map(e => e.content.code)).toEqual(['BOOTSTRAP', 'x = 1']);
    expect(kernel.comms).toHaveLength(1); // opened in the same tick, before the cell
    expect(kernel.lastComm.opened).toHaveLength(1);
    connection.deliverBeforeExecution(); // the next cell of Run All
    await settle();
    expect(kernel.executed).toHaveLength(2);
    kernel.lastComm.receive(wire(makeHello()));
    expect(model.state).toBe('live');
  });

  it('after a restart, the first cell follows the helper (Restart and Run All)', async () => {
    const kernel = new FakeKernel() as FakeKernel & { spec: Promise<any> };
    kernel.spec = Promise.resolve({ language: 'python' });
    const { connection, sessionContext } = connect(kernel);
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    connection.deliverBeforeExecution(); // live: nothing to do
    expect(kernel.executed).toHaveLength(1);
    sessionContext.setStatus('restarting');
    connection.deliverBeforeExecution();
    runCell(kernel, 'x = 1');
    expect(kernel.executed.map(e => e.content.code)).toEqual(['BOOTSTRAP', 'BOOTSTRAP', 'x = 1']);
    const comm = kernel.lastComm;
    sessionContext.setStatus('idle'); // the restarted kernel answers: already delivered
    await settle();
    expect(kernel.executed).toHaveLength(3);
    expect(kernel.lastComm).toBe(comm);
    expect(comm.isDisposed).toBe(false);
  });

  it('never sends Python to a kernel of another language', async () => {
    const kernel = slowToAnswer('R');
    const { connection } = connect(kernel);
    await settle();
    connection.deliverBeforeExecution();
    expect(kernel.executed).toHaveLength(0);
    expect(kernel.comms).toHaveLength(0);
  });

  it('the run that was waiting does not send the helper again', async () => {
    let answer: (info: any) => void = () => undefined;
    const kernel = slowToAnswer();
    kernel.info = new Promise(resolve => (answer = resolve));
    const { connection } = connect(kernel);
    await settle();
    connection.deliverBeforeExecution();
    answer({ language_info: { name: 'python' } });
    await settle();
    expect(kernel.executed).toHaveLength(1);
    expect(kernel.comms).toHaveLength(1);
  });

  it('an info answer that comes after the helper went live leaves the panel live', async () => {
    let answer: (info: any) => void = () => undefined;
    const kernel = slowToAnswer();
    kernel.info = new Promise(resolve => (answer = resolve));
    const { connection, model } = connect(kernel);
    await settle();
    connection.deliverBeforeExecution();
    kernel.lastComm.receive(wire(makeHello()));
    expect(model.state).toBe('live');
    const states: string[] = [];
    model.changed.connect(() => states.push(model.state));
    answer({ language_info: { name: 'python' } });
    await settle();
    expect(states).not.toContain('bootstrapping');
    expect(model.state).toBe('live');
  });
});

describe('KernelHelperConnection: a page opened while a cell runs', () => {
  it('says the running cell delays the kernel when its status is busy, not that it starts', async () => {
    const kernel = new FakeKernel();
    kernel.status = 'busy';
    kernel.info = new Promise(() => undefined); // its info request waits behind the cell
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
    // A cell starts; JupyterLab's status then says idle for another
    // request (a subshell a reloading tab deletes) while the cell runs.
    kernel.publishStatus('busy', 'execute_request');
    kernel.status = 'idle';
    kernel.executeOutcome = 'never'; // the bootstrap waits behind the cell
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
      kernel.status = 'unknown'; // a page knows no status until the kernel sends one
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
  /** A kernel busy with a cell: its info request and this page's comm wait behind it. */
  function busyKernel(): { kernel: FakeKernel; answer: () => void } {
    let answer: (info: any) => void = () => undefined;
    const kernel = new FakeKernel();
    kernel.status = 'unknown'; // a reloaded page knows no status until the cell ends
    kernel.info = new Promise(resolve => (answer = resolve));
    return { kernel, answer: () => answer({ language_info: { name: 'python' } }) };
  }

  it('shows the samples the helper sends to the earlier page comm, as live, and stops once its own comm speaks', async () => {
    const { kernel, answer } = busyKernel();
    const { model } = connect(kernel);
    await settle();
    expect(model.state).toBe('kernel-starting');

    kernel.publishCommMsg('earlier-page', wire(makeCpuSample({ time: 100, host: { ...makeCpuSample().host, rss_bytes: 300 * MiB } })));
    // Figures shown, and said to come by way of another page; no request can be made yet.
    expect(model.state).toBe('overheard');
    expect(model.stateReason).toBe(describeState('overheard'));
    expect(model.latest?.host.rss_bytes).toBe(300 * MiB);
    expect(model.history.length).toBe(1);

    // The same sample sent to a second comm is a copy, not a new point.
    kernel.publishCommMsg('other-tab', wire(makeCpuSample({ time: 100 })));
    expect(model.history.length).toBe(1);
    kernel.publishCommMsg('other-tab', wire(makeCpuSample({ time: 101 })));
    expect(model.history.length).toBe(2);

    // The cell ends: the page's own comm opens and says hello.
    answer();
    await settle();
    const own = kernel.lastComm;
    own.receive(wire(makeHello()));
    expect(model.stateReason).toMatch(/^Live: kernel process/);
    // From now on only this page's comm counts: a later sample elsewhere is not taken.
    kernel.publishCommMsg('earlier-page', wire(makeCpuSample({ time: 200, host: { ...makeCpuSample().host, rss_bytes: 900 * MiB } })));
    expect(model.latest?.time).toBe(101);
    expect(model.history.length).toBe(2);
  });

  it('takes nothing but samples: records, replies, hellos and other comms\' data are not its business', async () => {
    const { kernel } = busyKernel();
    const { model } = connect(kernel);
    await settle();
    kernel.publishCommMsg('earlier-page', wire(makeHello()));
    kernel.publishCommMsg('earlier-page', { type: 'cells', records: [] });
    kernel.publishCommMsg('earlier-page', { type: 'reply', request_id: 'x', request_type: 'snapshot', result: {} });
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
      return new Promise(() => undefined); // queued behind the cell too
    };
    const { model } = connect(kernel);
    await jest.advanceTimersByTimeAsync(10 * 60_000);
    expect(model.state).toBe('kernel-starting');
    expect(model.stateReason).toBe(LATE_KERNEL_TEXT);
    // Asked again with growing waits (10, 20, 40, then every 60 s), not every 10 s.
    expect(requests.length).toBeLessThanOrEqual(12);

    answer({ language_info: { name: 'python' } }); // the cell ended
    await jest.advanceTimersByTimeAsync(0);
    expect(kernel.executed).toHaveLength(1);
    kernel.lastComm.receive(wire(makeHello()));
    expect(model.state).toBe('live');
  });
});

describe('KernelHelperConnection: what it hears on IOPub beyond its comm', () => {
  async function live() {
    const kernel = new FakeKernel();
    const setup = connect(kernel);
    await settle();
    const comm = kernel.lastComm;
    comm.receive(wire(makeHello({ pid: 100 })));
    comm.receive(wire(makeCpuSample({ time: 1000 })));
    return { kernel, comm, ...setup };
  }

  it('a restart from another page (a hello from another process) is marked, and the helper delivered anew', async () => {
    const { kernel, model } = await live();
    expect(model.state).toBe('live');
    // Another page restarted the kernel: this page saw no status; the new
    // process's helper says hello to that page's comm.
    kernel.processSession = 'process-2';
    kernel.publishCommMsg('other-page', wire(makeHello({ pid: 200, record_series: 'series-2' })));
    await settle();
    expect(model.history.marks.map(m => m.kind)).toEqual(['restarted']);
    expect(kernel.executed).toHaveLength(2); // the bootstrap again
    expect(kernel.comms).toHaveLength(2);
    expect(kernel.comms[0].closed).toBe(false); // no close sent to a process that is gone
    // Named in the next open all the same: had its open reached the new
    // process, the helper there closes it.
    expect(kernel.lastComm.opened[0].replaces).toEqual([kernel.comms[0].commId]);
    kernel.lastComm.receive(wire(makeHello({ pid: 200, record_series: 'series-2' })));
    expect(model.stateReason).toContain('kernel process 200');
  });

  it('without a session in the headers, a hello from another pid still says the kernel was restarted elsewhere', async () => {
    const { kernel, model } = await live();
    kernel.processSession = '';
    kernel.publishCommMsg('other-page', wire(makeHello({ pid: 200, record_series: 'series-2' })));
    await settle();
    expect(model.history.marks.map(m => m.kind)).toEqual(['restarted']);
    expect(kernel.executed).toHaveLength(2);
  });

  it('after its own restart, the old process\'s last record and the new process\'s messages are no restart elsewhere', async () => {
    const { kernel, comm, model, sessionContext } = await live();
    sessionContext.setStatus('restarting');
    kernel.publishCommMsg(comm.commId, wire({ type: 'cells', records: [makeCellRecord({ record_id: 7, status: 'interrupted' })] }));
    kernel.processSession = 'process-2';
    sessionContext.setStatus('idle'); // JupyterLab updates its status before IOPub listeners hear the message
    await settle();
    expect(kernel.executed).toHaveLength(2);
    kernel.lastComm.receive(wire(makeHello({ pid: 200, record_series: 'series-2' })));
    const marks = model.history.marks.length;
    kernel.publishCommMsg(kernel.lastComm.commId, wire(makeHello({ pid: 200, record_series: 'series-2' })));
    kernel.publishCommMsg('other-page', wire(makeCpuSample({ time: 2000 })));
    // A late message of the old process, after the new one spoke.
    kernel.processSession = 'process-1';
    kernel.publishCommMsg(comm.commId, wire({ type: 'cells', records: [makeCellRecord({ record_id: 8 })] }));
    await settle();
    expect(model.history.marks).toHaveLength(marks);
    expect(kernel.executed).toHaveLength(2);
    expect(model.state).toBe('live');
  });

  it('its own comm speaking from a process it did not know of (a restart no page heard) is no restart elsewhere', async () => {
    const { kernel, comm, model, connection } = await live();
    kernel.publishCommMsg(comm.commId, wire(makeCpuSample({ time: 1001 })));
    // A console (a connection of its own) restarted the kernel, and this
    // page heard no status: its silence watch connects anew.
    kernel.processSession = 'process-2';
    connection.reconnect();
    await settle();
    expect(kernel.executed).toHaveLength(2);
    const fresh = kernel.lastComm;
    // services hands the comm its message, then IOPub listeners.
    fresh.receive(wire(makeHello({ pid: 200, record_series: 'series-2' })));
    kernel.publishCommMsg(fresh.commId, wire(makeHello({ pid: 200, record_series: 'series-2' })));
    kernel.publishCommMsg('other-page', wire(makeCpuSample({ time: 1002 })));
    await settle();
    expect(kernel.executed).toHaveLength(2);
    expect(kernel.lastComm).toBe(fresh);
    expect(fresh.isDisposed).toBe(false);
    expect(model.state).toBe('live');
  });

  it('a new process first heard while its own restart runs is the restarted one: a restart elsewhere after it is still seen', async () => {
    const { kernel, comm, model, sessionContext } = await live();
    kernel.publishCommMsg(comm.commId, wire(makeCpuSample({ time: 1001 })));
    sessionContext.setStatus('autorestarting');
    // Another page's helper in the new process speaks before this page's
    // status says idle (its nudge waits behind that page's cells).
    kernel.processSession = 'process-2';
    kernel.publishCommMsg('other-page', wire(makeHello({ pid: 200, record_series: 'series-2' })));
    kernel.publishCommMsg('other-page', wire(makeCpuSample({ time: 2000 })));
    kernel.executeOutcome = 'never'; // this page's helper then waits behind a cell
    sessionContext.setStatus('idle');
    await settle();
    expect(kernel.executed).toHaveLength(2);
    const queued = kernel.lastComm;
    // The other page restarts the kernel again.
    kernel.processSession = 'process-3';
    kernel.executeOutcome = { status: 'ok' };
    kernel.publishCommMsg('other-page-3', wire(makeHello({ pid: 300, record_series: 'series-3' })));
    await settle();
    expect(kernel.executed).toHaveLength(3);
    expect(kernel.lastComm).not.toBe(queued);
    kernel.lastComm.receive(wire(makeHello({ pid: 300, record_series: 'series-3' })));
    expect(model.state).toBe('live');
    expect(model.stateReason).toContain('kernel process 300');
  });

  it('a hello to another page from the same process changes nothing', async () => {
    const { kernel, model } = await live();
    kernel.publishCommMsg('other-page', wire(makeHello({ pid: 100 })));
    await settle();
    expect(model.history.marks).toHaveLength(0);
    expect(kernel.executed).toHaveLength(1);
    expect(model.stateReason).toContain('kernel process 100');
  });

  it('keeps the record of the cell a restart interrupted, sent after JupyterLab disposed the comm', async () => {
    const { kernel, comm, model, sessionContext } = await live();
    sessionContext.setStatus('restarting');
    kernel.publishCommMsg(comm.commId, wire({ type: 'cells', records: [makeCellRecord({ record_id: 7, status: 'interrupted' })] }));
    expect(model.cells.entries.map(e => e.record.record_id)).toEqual([7]);
    const oldSession = model.cells.session;
    // Once the new process said hello, nothing more is taken from the old comm.
    sessionContext.setStatus('idle');
    await settle();
    kernel.lastComm.receive(wire(makeHello({ pid: 200, record_series: 'series-2' })));
    kernel.publishCommMsg(comm.commId, wire({ type: 'cells', records: [makeCellRecord({ record_id: 8 })] }));
    expect(model.cells.entries.map(e => [e.session, e.record.record_id])).toEqual([[oldSession, 7]]);
    // Nor from any other page's comm: their records are that page's.
    kernel.publishCommMsg('other-page', wire({ type: 'cells', records: [makeCellRecord({ record_id: 1 })] }));
    expect(model.cells.length).toBe(1);
  });

  it('is busy while a cell runs, whatever other requests (comm messages, subshells) do to the status', async () => {
    const { kernel, model } = await live();
    kernel.publishStatus('busy', 'execute_request');
    expect(model.kernelBusy).toBe(true);
    // Another tab reloads: JupyterLab deletes its subshell, and the kernel
    // says idle for that request while the cell still runs.
    kernel.publishStatus('idle', 'delete_subshell_request');
    expect(model.kernelBusy).toBe(true);
    kernel.publishStatus('idle', 'execute_request');
    expect(model.kernelBusy).toBe(false);
    // A panel request (a comm message) is no cell.
    kernel.publishStatus('busy', 'comm_msg');
    expect(model.kernelBusy).toBe(false);
  });
});

describe('KernelHelperConnection: a restart elsewhere while its own helper waits behind a cell', () => {
  it('delivers the helper to the new process: what it sent went with the old one', async () => {
    const kernel = new FakeKernel();
    kernel.status = 'busy';
    kernel.executeOutcome = 'never'; // queued behind the running cell
    const { model } = connect(kernel);
    await settle();
    expect(kernel.executed).toHaveLength(1);
    const queued = kernel.lastComm;
    // The old process's helper samples for the page that started the cell.
    kernel.publishCommMsg('earlier-page', wire(makeCpuSample({ time: 100 })));
    expect(model.state).toBe('overheard');

    // Another page restarts the kernel (this page hears no status) and
    // delivers its helper to the new process, which says hello there.
    kernel.processSession = 'process-2';
    kernel.status = 'idle';
    kernel.executeOutcome = { status: 'ok' };
    kernel.publishStatus('busy', 'execute_request');
    kernel.publishStatus('idle', 'execute_request');
    expect(kernel.executed).toHaveLength(1); // a status is no proof (the server publishes its own)
    expect(kernel.infoRequests).toBe(0);
    kernel.publishCommMsg('earlier-page-2', wire(makeHello({ pid: 200, record_series: 'series-2' })));
    await settle();
    expect(model.history.marks.map(m => m.kind)).toEqual(['restarted']);
    expect(kernel.infoRequests).toBe(1); // the new process is asked; the old one's answer never comes
    expect(kernel.executed).toHaveLength(2);
    expect(kernel.lastComm).not.toBe(queued);
    expect(queued.closed).toBe(false); // its process is gone: nothing to close
    kernel.lastComm.receive(wire(makeHello({ pid: 200, record_series: 'series-2' })));
    expect(model.state).toBe('live');
    expect(model.stateReason).toContain('kernel process 200');
  });

  it('asks the new process for the kernel info that went with the old one, not at the next retry', async () => {
    jest.useFakeTimers();
    try {
      const kernel = new FakeKernel();
      kernel.status = 'unknown'; // opened during the cell: JupyterLab's info request waits behind it
      let answer: (info: any) => void = () => undefined;
      kernel.info = new Promise(resolve => (answer = resolve));
      let processes = 1;
      (kernel as any).requestKernelInfo = () => {
        if (processes === 2) {
          answer({ language_info: { name: 'python' } }); // services settles kernel.info with a reply
        }
        return kernel.info.then(content => ({ content }));
      };
      const { model, connection } = connect(kernel);
      await jest.advanceTimersByTimeAsync(100);
      kernel.publishCommMsg('earlier-page', wire(makeCpuSample({ time: Date.now() / 1000 })));
      expect(model.state).toBe('overheard');

      processes = 2;
      kernel.processSession = 'process-2';
      kernel.status = 'idle';
      kernel.publishCommMsg('earlier-page-2', wire(makeHello({ pid: 200, record_series: 'series-2' })));
      await jest.advanceTimersByTimeAsync(100); // far below the info wait's 10 s
      expect(kernel.executed).toHaveLength(1);
      kernel.lastComm.receive(wire(makeHello({ pid: 200, record_series: 'series-2' })));
      expect(model.state).toBe('live');
      connection.dispose();
    } finally {
      jest.useRealTimers();
    }
  });

  it('another page\'s comm to the same process changes nothing', async () => {
    const kernel = new FakeKernel();
    kernel.status = 'busy';
    kernel.executeOutcome = 'never';
    const { model } = connect(kernel);
    await settle();
    kernel.publishCommMsg('earlier-page', wire(makeCpuSample({ time: 100 })));
    kernel.publishCommMsg('later-page', wire(makeHello({ pid: 100 })));
    kernel.publishCommMsg('later-page', wire(makeCpuSample({ time: 101 })));
    await settle();
    expect(model.history.marks).toHaveLength(0);
    expect(kernel.executed).toHaveLength(1);
    expect(model.state).toBe('overheard');
  });
});

describe('KernelHelperConnection: figures heard on another page\'s comm that stop', () => {
  it('keeps asking the kernel for its info (the figures do not count as a busy kernel), and says when they went stale', async () => {
    jest.useFakeTimers();
    try {
      const kernel = new FakeKernel();
      kernel.status = 'unknown';
      kernel.info = new Promise(() => undefined); // lost with a process another page restarted
      let asked = 0;
      (kernel as any).requestKernelInfo = () => {
        asked++;
        return new Promise(() => undefined);
      };
      const { model, connection } = connect(kernel);
      await jest.advanceTimersByTimeAsync(100);
      kernel.publishCommMsg('earlier-page', wire(makeCpuSample({ time: Date.now() / 1000 })));
      expect(model.state).toBe('overheard');
      expect(model.kernelBusy).toBe(false);
      await jest.advanceTimersByTimeAsync(40_000);
      expect(asked).toBeGreaterThan(0); // not held back as if a cell ran
      // No sample heard for longer than the silence limit: not "live" any more.
      expect(model.state).toBe('kernel-starting');
      expect(model.stateReason).toMatch(/^No sample heard for \d+ s; waiting for the kernel to answer/);
      connection.dispose();
    } finally {
      jest.useRealTimers();
    }
  });

  it('takes another page\'s samples on a page opened mid-cell even when JupyterLab says idle for a subshell request', async () => {
    const kernel = new FakeKernel();
    kernel.status = 'unknown';
    kernel.info = new Promise(() => undefined);
    const { model } = connect(kernel);
    await settle();
    kernel.publishStatus('busy', 'execute_request'); // a later cell heard starting
    kernel.status = 'idle'; // another page's subshell request ended
    kernel.publishStatus('idle', 'create_subshell_request');
    kernel.publishCommMsg('earlier-page', wire(makeCpuSample({ time: 100 })));
    expect(model.state).toBe('overheard');
    kernel.publishStatus('idle', 'execute_request'); // the cell ended: this page's comm opens next
    kernel.publishCommMsg('earlier-page', wire(makeCpuSample({ time: 101 })));
    expect(model.sampleCount).toBe(1);
  });
});
