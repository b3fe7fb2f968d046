/** EngineReleases: when the list is asked for, what a release keeps, and failures as sentences. */
import { liveModel } from '../../testing/cellViewsFixtures';
import { makeSample, wire } from '../../testing/fixtures';
import {
  makeProcessTree,
  makeReleasable,
  makeReleaseResult,
  makeTreeProcess
} from '../../testing/processFixtures';
import type { ReleaseEngineResult } from '../../protocol/release';
import { LIST_DELAY_MS } from './EngineReleases';
import { ProcessTracker } from './ProcessTracker';

const T0 = 1732200000;
const pool = makeReleasable();
const workers = pool.processes.map(p =>
  makeTreeProcess({ pid: p.pid, start_time: p.start_time, role: p.role })
);

function setup() {
  const model = liveModel();
  model.setState('live');
  const listing: ReleaseEngineResult = {
    mode: 'list',
    releasables: [pool],
    released: null,
    elapsed_ms: 3
  };
  const releaseEngine = jest.fn(
    async (request: { mode: string }): Promise<ReleaseEngineResult> =>
      request.mode === 'list' ? listing : makeReleaseResult(pool)
  );
  const connection = { stopProcess: jest.fn(), releaseEngine };
  const tracker = new ProcessTracker({
    connection,
    engines: connection,
    model
  });
  let seq = 1;
  const tree = (processes: ReturnType<typeof makeTreeProcess>[]) =>
    model.ingest(
      wire(
        makeSample({
          seq: seq++,
          time: T0 + seq,
          processes: makeProcessTree(processes, T0 + seq)
        })
      )
    );
  const settle = async () => {
    jest.advanceTimersByTime(LIST_DELAY_MS + 1);
    await Promise.resolve();
    await Promise.resolve();
  };
  return {
    model,
    tracker,
    engines: tracker.engines,
    releaseEngine,
    tree,
    settle
  };
}

describe('EngineReleases', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('never asks a kernel without processes', async () => {
    const { tree, settle, releaseEngine, engines } = setup();
    tree([]);
    await settle();
    tree([]);
    await settle();
    expect(releaseEngine).not.toHaveBeenCalled();
    expect(engines.releasables).toEqual([]);
  });

  it('lists once when the processes change, and not again for the same processes', async () => {
    const { tree, settle, releaseEngine, engines } = setup();
    tree(workers);
    tree(workers);
    await settle();
    expect(releaseEngine).toHaveBeenCalledTimes(1);
    expect(releaseEngine).toHaveBeenCalledWith({ mode: 'list' });
    expect(engines.releasables).toEqual([pool]);
    tree(workers);
    await settle();
    expect(releaseEngine).toHaveBeenCalledTimes(1);
  });

  it('waits for the cell to end before asking, and forgets the list once no process is left', async () => {
    const { model, tree, settle, releaseEngine, engines } = setup();
    model.setKernelBusy(true);
    tree(workers);
    await settle();
    expect(releaseEngine).not.toHaveBeenCalled();
    model.setKernelBusy(false);
    await settle();
    expect(releaseEngine).toHaveBeenCalledTimes(1);
    tree([]);
    await settle();
    expect(releaseEngine).toHaveBeenCalledTimes(1);
    expect(engines.releasables).toEqual([]);
  });

  it('releases by kind and name, keeps the outcome and the list that came with it', async () => {
    const { tree, settle, releaseEngine, engines } = setup();
    tree(workers);
    await settle();
    const changes: string[] = [];
    engines.changed.connect((_, change) => changes.push(change));
    const state = await engines.release(pool, 12);
    expect(releaseEngine).toHaveBeenLastCalledWith({
      mode: 'release',
      kind: 'mp_pool',
      name: 'pool',
      timeout_s: 12
    });
    expect(state.status).toBe('done');
    expect(engines.lastRelease).toBe(state);
    expect(engines.releasables).toEqual([]);
    expect(changes).toEqual(['release', 'releasables', 'release']);
  });

  it('turns a failed list or release into a sentence, and never rejects', async () => {
    const { tree, settle, releaseEngine, engines } = setup();
    releaseEngine.mockRejectedValue(new Error('The kernel did not answer.'));
    tree(workers);
    await settle();
    expect(engines.listError).toBe('The kernel did not answer.');
    const state = await engines.release(pool);
    expect(state).toEqual({
      status: 'failed',
      releasable: pool,
      error: 'The kernel did not answer.'
    });
  });

  it('cannot release without a connection that can', async () => {
    const model = liveModel();
    const tracker = new ProcessTracker({ connection: null, model });
    expect(tracker.engines.canRelease).toBe(false);
    const state = await tracker.engines.release(pool);
    expect(state.status).toBe('failed');
  });
});
