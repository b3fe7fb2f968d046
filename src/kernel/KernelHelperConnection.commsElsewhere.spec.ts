/**
 * KernelHelperConnection where this page cannot talk to the helper: a
 * kernel connection JupyterLab made without comms (another notebook or
 * console of the page connected to the kernel first), and a connection to
 * the kernel that is lost while the user asks for a refresh.
 */
import { noCommsText } from './KernelHelperConnection';
import { connect } from '../testing/connectionFixtures';
import { makeHello, wire } from '../testing/fixtures';
import { FakeKernel, settle } from '../testing/fakeKernel';

describe('KernelHelperConnection: comms this page cannot use', () => {
  /** A kernel connection as services makes the second one to a kernel in a page. */
  function withoutComms(): FakeKernel {
    const kernel = new FakeKernel() as FakeKernel & { handleComms: boolean };
    kernel.handleComms = false;
    kernel.createComm = () => {
      throw new Error('Comms are disabled on this kernel connection');
    };
    return kernel;
  }

  it('runs nothing in a kernel whose connection here has no comms, and says why', async () => {
    const kernel = withoutComms();
    const { sessionContext, model, connection } = connect(kernel);
    await settle();
    connection.deliverBeforeExecution(); // a cell about to run
    sessionContext.setStatus('restarting');
    sessionContext.setStatus('idle');
    await settle();
    expect(kernel.executed.filter(e => e.code === 'BOOTSTRAP')).toEqual([]);
    expect(model.state).toBe('disconnected');
    expect(model.stateReason).toBe(noCommsText());
    expect(model.kernelBusy).toBe(false);
  });

  it('leaves the delivery to the connection coming back when a refresh is asked while it is lost', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, connection } = connect(kernel);
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    sessionContext.connectionStatusChanged.emit('connecting');
    // "Refresh GPU memory" on the disconnected panel. Services would queue
    // what it sent and send it once connected: a comm that nothing listens
    // to, and that no open names for the helper to close.
    connection.reconnect();
    await settle();
    sessionContext.connectionStatusChanged.emit('connected');
    await settle();
    expect(kernel.executed.filter(e => e.code === 'BOOTSTRAP')).toHaveLength(2);
    expect(kernel.comms).toHaveLength(2);
  });

  it('counts the connection as back once it is, also when a restart brought it back', async () => {
    const kernel = new FakeKernel();
    const { sessionContext, connection } = connect(kernel);
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    sessionContext.connectionStatusChanged.emit('connecting');
    sessionContext.setStatus('restarting'); // the user restarts the unreachable kernel
    sessionContext.connectionStatusChanged.emit('connected');
    sessionContext.setStatus('idle');
    await settle();
    expect(kernel.comms).toHaveLength(2);
    connection.reconnect(); // "Refresh GPU memory" later on
    await settle();
    expect(kernel.comms).toHaveLength(3);
  });
});
