/** ProcessTracker: a kernel's processes, when each was first seen, and stops. */
import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { makeCellRecord } from '../../testing/cellFixtures';
import { liveModel } from '../../testing/cellViewsFixtures';
import { makeHello, makeSample, wire } from '../../testing/fixtures';
import {
  makeProcessTree,
  makeStopResult,
  makeTreeProcess
} from '../../testing/processFixtures';
import { ProcessTracker } from './ProcessTracker';

const T0 = 1732200000;

function setup() {
  const model = liveModel();
  model.setState('live');
  const connection = {
    stopProcess: jest.fn(async (request: { pid: number; start_time: number }) =>
      makeStopResult(makeTreeProcess({ pid: request.pid }))
    )
  };
  const tracker = new ProcessTracker({ connection, model });
  const tree = (
    processes: ReturnType<typeof makeTreeProcess>[],
    readAt: number
  ) =>
    model.ingest(
      wire(
        makeSample({
          time: readAt,
          processes: makeProcessTree(processes, readAt)
        })
      )
    );
  return { model, connection, tracker, tree };
}

describe('ProcessTracker', () => {
  it('is unknown before a sample, and unsupported where samples carry no tree', () => {
    const { model, tracker } = setup();
    expect(tracker.supported).toBeNull();
    model.ingest(wire(makeSample()));
    expect(tracker.supported).toBe(false);
    expect(tracker.processes).toEqual([]);
  });

  it('keeps when each process was first seen, and whether it was there before', () => {
    const { tracker, tree, model } = setup();
    const a = makeTreeProcess({ pid: 10 });
    const b = makeTreeProcess({ pid: 11 });
    tree([a], T0);
    expect(tracker.processes[0].seen).toEqual({
      at: T0,
      busy: false,
      preexisting: true
    });
    model.setKernelBusy(true);
    tree([a, b], T0 + 5);
    expect(tracker.processes.map(p => p.key)).toEqual([
      `10:${a.start_time}`,
      `11:${b.start_time}`
    ]);
    expect(tracker.processes[0].seen.at).toBe(T0);
    expect(tracker.processes[1].seen).toEqual({
      at: T0 + 5,
      busy: true,
      preexisting: false
    });
    expect(tracker.origin(tracker.processes[1])).toEqual({
      record: null,
      during: true
    });
    // The cell ends: its record names it.
    model.setKernelBusy(false);
    const record = makeCellRecord({
      record_id: 1,
      execution_count: 7,
      started: T0 + 4,
      duration_s: 3
    });
    model.ingest(wire({ type: 'cells', records: [record] }));
    expect(tracker.origin(tracker.processes[1])?.record?.execution_count).toBe(
      7
    );
    expect(tracker.origin(tracker.processes[0])).toBeNull();
  });

  it('takes a reused pid for another process', () => {
    const { tracker, tree } = setup();
    tree([makeTreeProcess({ pid: 10, start_time: 1 })], T0);
    tree([makeTreeProcess({ pid: 10, start_time: 2 })], T0 + 1);
    expect(tracker.processes[0].seen).toMatchObject({
      at: T0 + 1,
      preexisting: false
    });
  });

  it('starts again with a new helper (a restart)', () => {
    const { tracker, tree, model } = setup();
    tree([], T0);
    tree([makeTreeProcess({ pid: 10 })], T0 + 1);
    expect(tracker.processes[0].seen.preexisting).toBe(false);
    model.ingest(wire(makeHello({ record_series: 'series-2' })));
    tree([makeTreeProcess({ pid: 10 })], T0 + 2);
    expect(tracker.processes[0].seen).toMatchObject({
      at: T0 + 2,
      preexisting: true
    });
  });

  it('sends stop_process with pid and start time, and drops the process once it ended', async () => {
    const { tracker, tree, connection } = setup();
    const p = makeTreeProcess({ pid: 10 });
    tree([p], T0);
    const changes: string[] = [];
    tracker.changed.connect((_, c) => changes.push(c));
    const stopping = tracker.stop(p, 2);
    expect(tracker.isStopping(tracker.processes[0].key)).toBe(true);
    expect(tracker.lastStop?.status).toBe('stopping');
    const state = await stopping;
    expect(connection.stopProcess).toHaveBeenCalledWith({
      pid: 10,
      start_time: p.start_time,
      timeout_s: 2
    });
    expect(state.status).toBe('done');
    expect(tracker.processes).toEqual([]);
    expect(tracker.lastStop).toBe(state);
    expect(changes).toContain('stop');
  });

  it('keeps a refused process listed, and turns a failure into a sentence', async () => {
    const { tracker, tree, connection } = setup();
    const p = makeTreeProcess({ pid: 10 });
    tree([p], T0);
    connection.stopProcess.mockResolvedValueOnce(
      makeStopResult(p, {
        outcome: 'refused',
        refusal: 'permission',
        signals: []
      })
    );
    await tracker.stop(p);
    expect(tracker.processes).toHaveLength(1);
    connection.stopProcess.mockRejectedValueOnce(
      new Error('The kernel is gone.')
    );
    const failed = await tracker.stop(p);
    expect(failed).toMatchObject({
      status: 'failed',
      error: 'The kernel is gone.'
    });
  });

  it('cannot stop without a connection that can', async () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    const tracker = new ProcessTracker({ connection: null, model });
    expect(tracker.canStop).toBe(false);
    const state = await tracker.stop(makeTreeProcess());
    expect(state.status).toBe('failed');
  });
});
