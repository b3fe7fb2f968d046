import { makeCellRecord, manyRecords } from '../testing/cellFixtures';
import { makeHello, wire } from '../testing/fixtures';
import { connectHelper, FakeKernel, settle } from '../testing/fakeKernel';

const CONFIG = {
  interval_s: 1,
  change_threshold_bytes: 1048576,
  heartbeat_s: 10,
  reset_peak_per_cell: true
};

function connect(kernel: FakeKernel) {
  return connectHelper(kernel, { config: () => CONFIG });
}

function historyRequests(kernel: FakeKernel) {
  return kernel.lastComm.sent.filter(m => m.type === 'history');
}

function replyHistory(kernel: FakeKernel, records: unknown) {
  kernel.lastComm.reply({ records }, historyRequests(kernel).pop());
}

/** The helper says hello, then answers the history request with `records`. */
async function helloWithHistory(kernel: FakeKernel, records: unknown) {
  kernel.lastComm.receive(wire(makeHello()));
  replyHistory(kernel, records);
  await settle();
}

describe('KernelHelperConnection: cell records', () => {
  it('opens with reset_peak_per_cell in the config', async () => {
    const kernel = new FakeKernel();
    connect(kernel);
    await settle();
    expect(kernel.lastComm.opened[0].config.reset_peak_per_cell).toBe(true);
  });

  it('routes cell messages into the model', async () => {
    const kernel = new FakeKernel();
    const { model } = connect(kernel);
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    kernel.lastComm.receive(
      wire({ type: 'cells', records: [makeCellRecord({ record_id: 3 })] })
    );
    expect(model.cells.length).toBe(1);
    expect(model.cells.latestForCell('cell-a')!.record.record_id).toBe(3);
  });

  it('asks for the history on hello and merges it, de-duplicated', async () => {
    const kernel = new FakeKernel();
    const { model } = connect(kernel);
    await settle();
    expect(historyRequests(kernel)).toHaveLength(0);
    kernel.lastComm.receive(wire(makeHello()));
    expect(historyRequests(kernel)).toHaveLength(1);
    expect(historyRequests(kernel)[0]).toEqual({
      type: 'history',
      request_id: expect.any(String)
    });
    // A live record arrives before the reply.
    kernel.lastComm.receive(
      wire({
        type: 'cells',
        records: [makeCellRecord({ record_id: 3, cell_id: 'cell-3' })]
      })
    );
    replyHistory(kernel, wire(manyRecords(3)));
    await settle();
    expect(model.cells.entries.map(e => e.record.record_id)).toEqual([1, 2, 3]);
  });

  it('waits for the history behind queued cells longer than for other requests', async () => {
    const kernel = new FakeKernel();
    const { model } = connectHelper(kernel, {
      config: () => CONFIG,
      requestTimeoutMs: 10
    });
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    // Queued behind a Run All sent as the page opened: the answer comes late.
    await new Promise(resolve => setTimeout(resolve, 50));
    replyHistory(kernel, wire(manyRecords(3)));
    await settle();
    expect(model.cells.entries.map(e => e.record.record_id)).toEqual([1, 2, 3]);
  });

  it('asks again after a reconnect and keeps one copy of each record', async () => {
    const kernel = new FakeKernel();
    const { model, connection } = connect(kernel);
    await settle();
    await helloWithHistory(kernel, wire(manyRecords(2)));
    connection.reconnect();
    await settle();
    await helloWithHistory(kernel, wire(manyRecords(3)));
    expect(model.cells.entries.map(e => e.record.record_id)).toEqual([1, 2, 3]);
  });

  it('does not bring back cleared records on reconnect', async () => {
    const kernel = new FakeKernel();
    const { model, connection } = connect(kernel);
    await settle();
    await helloWithHistory(kernel, wire(manyRecords(2)));
    model.cells.clear();
    connection.reconnect();
    await settle();
    await helloWithHistory(kernel, wire(manyRecords(2)));
    expect(model.cells.length).toBe(0);
  });

  it('starts a new record session after a restart', async () => {
    const kernel = new FakeKernel();
    const { model, sessionContext } = connect(kernel);
    await settle();
    await helloWithHistory(kernel, wire(manyRecords(2)));
    sessionContext.setStatus('restarting');
    sessionContext.setStatus('idle');
    await settle();
    // Same pid (a container), but the new process's helper names a new series.
    kernel.lastComm.receive(wire(makeHello({ record_series: 'series-2' })));
    replyHistory(kernel, []);
    kernel.lastComm.receive(
      wire({
        type: 'cells',
        records: [
          makeCellRecord({
            record_id: 1,
            cell_id: 'cell-1',
            execution_count: 1
          })
        ]
      })
    );
    await settle();
    expect(model.cells.length).toBe(3);
  });

  it('reports malformed history records and keeps the good ones', async () => {
    const kernel = new FakeKernel();
    const { model } = connect(kernel);
    await settle();
    await helloWithHistory(kernel, [
      wire(makeCellRecord({ record_id: 1 })),
      { record_id: -0.5 }
    ]);
    expect(model.cells.length).toBe(1);
    expect(model.notes.find(n => n.id === 'helper-problem')!.text).toContain(
      'history.records[1]'
    );
  });
});
