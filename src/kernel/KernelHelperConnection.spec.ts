/**
 * KernelHelperConnection: the helper's delivery to a kernel and what a
 * restart, a death, a kernel change or a lost connection does to it. The
 * other concepts have spec files of their own, KernelHelperConnection.*.spec.ts.
 */
import { SKIPPED_BEHIND_A_CELL_TEXT } from './helperBootstrapLazy';
import { MAX_REDELIVERIES } from './HelperDelivery';
import { KernelHelperConnection } from './KernelHelperConnection';
import { RequestAbandonedError } from './PendingRequests';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { COMM_TARGET } from '../protocol/messages';
import { CONFIG, connect } from '../testing/connectionFixtures';
import { makeHello, makeSample, wire } from '../testing/fixtures';
import { FakeKernel, FakeSessionContext, settle } from '../testing/fakeKernel';

describe('KernelHelperConnection', () => {
  it('bootstraps silently, opens the comm, then goes live on hello', async () => {
    const kernel = new FakeKernel();
    const { model } = connect(kernel);
    await settle();

    expect(kernel.executed).toHaveLength(1);
    expect(kernel.executed[0].content).toEqual({
      code: '',
      user_expressions: { jupyterlab_vram_bootstrap: 'BOOTSTRAP' },
      silent: true,
      store_history: false,
      allow_stdin: false,
      stop_on_error: false
    });
    expect(kernel.comms).toHaveLength(1);
    const comm = kernel.lastComm;
    expect(comm.targetName).toBe(COMM_TARGET);
    expect(comm.opened).toEqual([
      { type: 'open', protocol: 1, config: CONFIG }
    ]);
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
    expect(kernel.executed[0].code).toContain('jupyterlab-vram bootstrap');
  });

  it('reports a bootstrap error with ename and evalue', async () => {
    const kernel = new FakeKernel();
    // ipykernel runs the empty cell, and the expression's error is in the reply.
    kernel.executeOutcome = {
      status: 'ok',
      user_expressions: {
        jupyterlab_vram_bootstrap: {
          status: 'error',
          ename: 'ModuleNotFoundError',
          evalue: "No module named 'psutil'",
          traceback: []
        }
      }
    };
    const { model } = connect(kernel);
    await settle();
    expect(model.state).toBe('helper-failed');
    expect(model.stateReason).toContain(
      "ModuleNotFoundError: No module named 'psutil'"
    );
    // The comm went with the bootstrap (in the same tick); its target was never
    // registered, so it is dropped, and the kernel's close of it changes nothing.
    expect(kernel.comms).toHaveLength(1);
    expect(kernel.lastComm.isDisposed).toBe(true);
    kernel.lastComm.closeFromKernel();
    expect(model.state).toBe('helper-failed');
  });

  it('fails a request sent while the bootstrap ran, when the helper did not start', async () => {
    const kernel = new FakeKernel();
    let reply: (outcome: {
      status: string;
      [key: string]: unknown;
    }) => void = () => undefined;
    kernel.executeOutcome = {
      later: new Promise(resolve => (reply = resolve))
    };
    const { connection, model } = connect(kernel);
    await settle();
    const pending = connection.configure({ interval_s: 0.5 });
    reply({
      status: 'error',
      ename: 'ImportError',
      evalue: 'no helper',
      traceback: []
    });
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
    const bootstraps = () =>
      kernel.executed.filter(e => e.code === 'BOOTSTRAP');
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
    sessionContext.kernelChanged.emit({
      name: 'kernel',
      oldValue: kernel,
      newValue: kernel
    });
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
    sessionContext.kernelChanged.emit({
      name: 'kernel',
      oldValue: kernel,
      newValue: kernel
    });
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
    const nudges = kernel.executed.filter(e => e.code === '');
    expect(nudges).toHaveLength(1);
    expect(nudges[0].content).toMatchObject({
      silent: true,
      store_history: false
    });
    sessionContext.setStatus('idle'); // what the empty cell makes the kernel say
    await settle();
    expect(kernel.executed.filter(e => e.code === 'BOOTSTRAP')).toHaveLength(2);
    sessionContext.setStatus('starting'); // not restarting any more: nothing to ask
    expect(kernel.executed.filter(e => e.code === '')).toHaveLength(1);
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
      kernel.info = Promise.resolve({
        implementation,
        language_info: { name: 'python' }
      });
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
    model.changed.connect(() =>
      states.push(`${model.state}: ${model.stateReason ?? ''}`)
    );
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
    kernel.executeOutcome = {
      later: new Promise(resolve => (answer = resolve))
    };
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
    kernel.lastComm.receive({
      type: 'reply',
      request_id: id,
      request_type: 'configure',
      result: { config: CONFIG }
    });
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
    kernel.lastComm.receive({
      type: 'hello',
      protocol: 3,
      helper_version: '3.0.0'
    });
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
    kernel.executeOutcome = {
      status: 'error',
      ename: 'RuntimeError',
      evalue: 'boom',
      traceback: []
    };
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
