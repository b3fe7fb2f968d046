/**
 * Tests what KernelHelperConnection learns on IOPub beyond its own comm,
 * above all a restart made from another page.
 */
import { makeCellRecord } from '../testing/cellFixtures';
import { connect } from '../testing/connectionFixtures';
import { makeCpuSample, makeHello, wire } from '../testing/fixtures';
import { FakeKernel, settle } from '../testing/fakeKernel';

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
    // Another page restarted the kernel, and this page saw no status. The
    // new process's helper says hello to that other page's comm.
    kernel.processSession = 'process-2';
    kernel.publishCommMsg(
      'other-page',
      wire(makeHello({ pid: 200, record_series: 'series-2' }))
    );
    await settle();
    expect(model.history.marks.map(m => m.kind)).toEqual(['restarted']);
    expect(kernel.executed).toHaveLength(2); // The bootstrap was sent again.
    expect(kernel.comms).toHaveLength(2);
    expect(kernel.comms[0].closed).toBe(false); // No close is sent to a process that is gone.
    // The old comm is still named in the next open: if its open had reached
    // the new process, the helper there would close it.
    expect(kernel.lastComm.opened[0].replaces).toEqual([
      kernel.comms[0].commId
    ]);
    kernel.lastComm.receive(
      wire(makeHello({ pid: 200, record_series: 'series-2' }))
    );
    expect(model.stateReason).toContain('kernel process 200');
  });

  it('without a session in the headers, a hello from another pid still says the kernel was restarted elsewhere', async () => {
    const { kernel, model } = await live();
    kernel.processSession = '';
    kernel.publishCommMsg(
      'other-page',
      wire(makeHello({ pid: 200, record_series: 'series-2' }))
    );
    await settle();
    expect(model.history.marks.map(m => m.kind)).toEqual(['restarted']);
    expect(kernel.executed).toHaveLength(2);
  });

  it("after its own restart, the old process's last record and the new process's messages are no restart elsewhere", async () => {
    const { kernel, comm, model, sessionContext } = await live();
    sessionContext.setStatus('restarting');
    kernel.publishCommMsg(
      comm.commId,
      wire({
        type: 'cells',
        records: [makeCellRecord({ record_id: 7, status: 'interrupted' })]
      })
    );
    kernel.processSession = 'process-2';
    sessionContext.setStatus('idle'); // JupyterLab updates its status before IOPub listeners hear the message
    await settle();
    expect(kernel.executed).toHaveLength(2);
    kernel.lastComm.receive(
      wire(makeHello({ pid: 200, record_series: 'series-2' }))
    );
    const marks = model.history.marks.length;
    kernel.publishCommMsg(
      kernel.lastComm.commId,
      wire(makeHello({ pid: 200, record_series: 'series-2' }))
    );
    kernel.publishCommMsg('other-page', wire(makeCpuSample({ time: 2000 })));
    // A late message of the old process, after the new one spoke.
    kernel.processSession = 'process-1';
    kernel.publishCommMsg(
      comm.commId,
      wire({ type: 'cells', records: [makeCellRecord({ record_id: 8 })] })
    );
    await settle();
    expect(model.history.marks).toHaveLength(marks);
    expect(kernel.executed).toHaveLength(2);
    expect(model.state).toBe('live');
  });

  it('its own comm speaking from a process it did not know of (a restart no page heard) is no restart elsewhere', async () => {
    const { kernel, comm, model, connection } = await live();
    kernel.publishCommMsg(comm.commId, wire(makeCpuSample({ time: 1001 })));
    // A console, which has a connection of its own, restarted the kernel,
    // and this page heard no status. Its silence watch connects again.
    kernel.processSession = 'process-2';
    connection.reconnect();
    await settle();
    expect(kernel.executed).toHaveLength(2);
    const fresh = kernel.lastComm;
    // Services hands the message to the comm first, then to IOPub listeners.
    fresh.receive(wire(makeHello({ pid: 200, record_series: 'series-2' })));
    kernel.publishCommMsg(
      fresh.commId,
      wire(makeHello({ pid: 200, record_series: 'series-2' }))
    );
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
    // status says idle, because this page's nudge waits behind that page's
    // cells.
    kernel.processSession = 'process-2';
    kernel.publishCommMsg(
      'other-page',
      wire(makeHello({ pid: 200, record_series: 'series-2' }))
    );
    kernel.publishCommMsg('other-page', wire(makeCpuSample({ time: 2000 })));
    kernel.executeOutcome = 'never'; // this page's helper then waits behind a cell
    sessionContext.setStatus('idle');
    await settle();
    expect(kernel.executed).toHaveLength(2);
    const queued = kernel.lastComm;
    // The other page restarts the kernel again.
    kernel.processSession = 'process-3';
    kernel.executeOutcome = { status: 'ok' };
    kernel.publishCommMsg(
      'other-page-3',
      wire(makeHello({ pid: 300, record_series: 'series-3' }))
    );
    await settle();
    expect(kernel.executed).toHaveLength(3);
    expect(kernel.lastComm).not.toBe(queued);
    kernel.lastComm.receive(
      wire(makeHello({ pid: 300, record_series: 'series-3' }))
    );
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
    kernel.publishCommMsg(
      comm.commId,
      wire({
        type: 'cells',
        records: [makeCellRecord({ record_id: 7, status: 'interrupted' })]
      })
    );
    expect(model.cells.entries.map(e => e.record.record_id)).toEqual([7]);
    const oldSession = model.cells.session;
    // Once the new process said hello, nothing more is taken from the old comm.
    sessionContext.setStatus('idle');
    await settle();
    kernel.lastComm.receive(
      wire(makeHello({ pid: 200, record_series: 'series-2' }))
    );
    kernel.publishCommMsg(
      comm.commId,
      wire({ type: 'cells', records: [makeCellRecord({ record_id: 8 })] })
    );
    expect(
      model.cells.entries.map(e => [e.session, e.record.record_id])
    ).toEqual([[oldSession, 7]]);
    // Nothing is taken from any other page's comm either, because those
    // records belong to that page.
    kernel.publishCommMsg(
      'other-page',
      wire({ type: 'cells', records: [makeCellRecord({ record_id: 1 })] })
    );
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
    // A panel request (a comm message) is not a cell.
    kernel.publishStatus('busy', 'comm_msg');
    expect(model.kernelBusy).toBe(false);
  });
});

describe('KernelHelperConnection: what keeps the kernel busy', () => {
  it('is the helper while the kernel runs the bootstrap this page sent, a cell otherwise', async () => {
    const kernel = new FakeKernel();
    kernel.executeOutcome = 'never'; // the kernel is still starting the helper
    const { model } = connect(kernel);
    await settle();
    expect(model.state).toBe('bootstrapping');
    const bootstrap = kernel.executed[0].msg.header.msg_id;
    kernel.publishStatus('busy', 'execute_request', bootstrap);
    expect(model.kernelBusy).toBe(true);
    expect(model.kernelBusyWith).toBe('helper');
    kernel.publishStatus('idle', 'execute_request', bootstrap);
    expect(model.kernelBusyWith).toBeNull();
    // A cell queued behind it.
    kernel.publishStatus('busy', 'execute_request', 'a-cell');
    expect(model.kernelBusyWith).toBe('cell');
    kernel.publishStatus('idle', 'execute_request', 'a-cell');
    // A status that names no request is counted as a cell's.
    kernel.publishStatus('busy', 'execute_request');
    expect(model.kernelBusyWith).toBe('cell');
  });

  it('is the helper while a restarted kernel runs the empty request that wakes it for the helper', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, model } = connect(kernel);
    await settle();
    sessionContext.setStatus('autorestarting');
    sessionContext.connectionStatusChanged.emit('connecting');
    sessionContext.connectionStatusChanged.emit('connected');
    sessionContext.setStatus('starting');
    const nudge = kernel.executed.find(e => e.code === '')!;
    kernel.publishStatus('busy', 'execute_request', nudge.msg.header.msg_id);
    expect(model.kernelBusyWith).toBe('helper');
    kernel.publishStatus('idle', 'execute_request', nudge.msg.header.msg_id);
    expect(model.kernelBusy).toBe(false);
  });
});

describe('KernelHelperConnection: a restart elsewhere while its own helper waits behind a cell', () => {
  it('delivers the helper to the new process: what it sent went with the old one', async () => {
    const kernel = new FakeKernel();
    kernel.status = 'busy';
    kernel.executeOutcome = 'never'; // The bootstrap is queued behind the running cell.
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
    expect(kernel.executed).toHaveLength(1); // A status proves nothing, because the server publishes its own.
    expect(kernel.infoRequests).toBe(0);
    kernel.publishCommMsg(
      'earlier-page-2',
      wire(makeHello({ pid: 200, record_series: 'series-2' }))
    );
    await settle();
    expect(model.history.marks.map(m => m.kind)).toEqual(['restarted']);
    expect(kernel.infoRequests).toBe(1); // The new process is asked, because the old one's answer never comes.
    expect(kernel.executed).toHaveLength(2);
    expect(kernel.lastComm).not.toBe(queued);
    expect(queued.closed).toBe(false); // Its process is gone, so there is nothing to close.
    kernel.lastComm.receive(
      wire(makeHello({ pid: 200, record_series: 'series-2' }))
    );
    expect(model.state).toBe('live');
    expect(model.stateReason).toContain('kernel process 200');
  });

  it('asks the new process for the kernel info that went with the old one, not at the next retry', async () => {
    jest.useFakeTimers();
    try {
      const kernel = new FakeKernel();
      kernel.status = 'unknown'; // The page opened during the cell, so JupyterLab's info request waits behind it.
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
      kernel.publishCommMsg(
        'earlier-page',
        wire(makeCpuSample({ time: Date.now() / 1000 }))
      );
      expect(model.state).toBe('overheard');

      processes = 2;
      kernel.processSession = 'process-2';
      kernel.status = 'idle';
      kernel.publishCommMsg(
        'earlier-page-2',
        wire(makeHello({ pid: 200, record_series: 'series-2' }))
      );
      await jest.advanceTimersByTimeAsync(100); // This is far below the info wait's 10 s.
      expect(kernel.executed).toHaveLength(1);
      kernel.lastComm.receive(
        wire(makeHello({ pid: 200, record_series: 'series-2' }))
      );
      expect(model.state).toBe('live');
      connection.dispose();
    } finally {
      jest.useRealTimers();
    }
  });

  it("another page's comm to the same process changes nothing", async () => {
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
