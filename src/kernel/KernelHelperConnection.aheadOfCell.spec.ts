/** KernelHelperConnection: the helper sent ahead of a notebook cell about to run (deliverBeforeExecution). */
import { connect } from '../testing/connectionFixtures';
import { makeHello, wire } from '../testing/fixtures';
import { FakeKernel, settle } from '../testing/fakeKernel';

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
      {
        language: 'python',
        name: 'xpython',
        argv: ['/opt/conda/bin/xpython', '-f', '{connection_file}']
      },
      { language: 'python', name: 'python', display_name: 'Python (Pyodide)' }
    ]) {
      const kernel = slowToAnswer();
      kernel.spec = Promise.resolve(spec);
      const { connection } = connect(kernel);
      await settle();
      connection.deliverBeforeExecution();
      runCell(kernel, 'x = 1');
      expect(kernel.executed.map(e => e.code)).toEqual(['x = 1']);
      expect(kernel.comms).toEqual([]);
      connection.dispose();
    }
    // An ipykernel environment whose name merely contains "xeus" is ipykernel.
    const kernel = slowToAnswer();
    kernel.spec = Promise.resolve({
      language: 'python',
      name: 'py-xeus-dev',
      argv: [
        '/envs/xeus-dev/bin/python',
        '-m',
        'ipykernel_launcher',
        '-f',
        '{connection_file}'
      ]
    });
    const { connection } = connect(kernel);
    await settle();
    connection.deliverBeforeExecution();
    runCell(kernel, 'x = 1');
    expect(kernel.executed.map(e => e.code)).toEqual(['BOOTSTRAP', 'x = 1']);
  });

  it('sent ahead of a cell to a kernel whose info then says it is not ipykernel: says so, not that the helper failed', async () => {
    const kernel = slowToAnswer();
    let answer: (info: any) => void = () => undefined;
    kernel.info = new Promise(resolve => (answer = resolve));
    let reply: (content: any) => void = () => undefined;
    kernel.executeOutcome = {
      later: new Promise(resolve => (reply = resolve))
    };
    const { connection, model } = connect(kernel);
    await settle();
    connection.deliverBeforeExecution(); // its spec said only 'python'
    expect(kernel.executed.map(e => e.code)).toEqual(['BOOTSTRAP']);
    answer({
      implementation: 'xeus-python',
      language_info: { name: 'python' }
    });
    await settle();
    expect(model.state).toBe('non-python');
    reply({
      status: 'error',
      ename: 'NameError',
      evalue: "name 'get_ipython' is not defined",
      traceback: []
    });
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
    expect(kernel.executed.map(e => e.code)).toEqual(['BOOTSTRAP', 'x = 1']);
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
    expect(kernel.executed.map(e => e.code)).toEqual([
      'BOOTSTRAP',
      'BOOTSTRAP',
      'x = 1'
    ]);
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
