/** MemoryEstimate: one estimate at a time, its progress from the helper's messages, failures as sentences. */
import { Signal } from '@lumino/signaling';

import {
  EstimateMemoryResult,
  readEstimateProgress
} from '../../protocol/estimate';
import { makeEstimateResult } from '../../testing/estimateFixtures';
import { EstimateState, MemoryEstimate } from './MemoryEstimate';

const REQUEST = { model: 'net', batch: 'batch' };

function setup() {
  const otherMessage = new Signal<object, unknown>({});
  let answer!: (result: EstimateMemoryResult) => void;
  let fail!: (reason: Error) => void;
  const estimateMemory = jest.fn(
    () =>
      new Promise<EstimateMemoryResult>((resolve, reject) => {
        answer = resolve;
        fail = reject;
      })
  );
  const estimate = new MemoryEstimate({
    connection: { estimateMemory, otherMessage },
    readProgress: readEstimateProgress
  });
  const states: EstimateState['status'][] = [];
  estimate.changed.connect((_, s) => states.push(s.status));
  return {
    estimate,
    estimateMemory,
    otherMessage,
    states,
    answer: (r: EstimateMemoryResult) => answer(r),
    fail: (e: Error) => fail(e)
  };
}

describe('MemoryEstimate', () => {
  it('runs, shows the progress messages, and keeps the answer', async () => {
    const { estimate, otherMessage, answer, states } = setup();
    const done = estimate.run(REQUEST);
    expect(estimate.isRunning).toBe(true);
    otherMessage.emit({
      type: 'estimate_progress',
      request_id: 'r1',
      stage: 'tracing batch size 64',
      done: 2,
      total: 5
    });
    // Other messages and malformed progress leave the progress alone.
    otherMessage.emit({ type: 'allocation_recording' });
    otherMessage.emit({ type: 'estimate_progress', stage: 3 });
    const running = estimate.state;
    expect(running.status === 'running' && running.progress).toEqual({
      type: 'estimate_progress',
      request_id: 'r1',
      stage: 'tracing batch size 64',
      done: 2,
      total: 5
    });
    // The plain step's figures come before the remedies, and stay shown
    // while the later messages carry none.
    const partial = makeEstimateResult({ variants: [] });
    otherMessage.emit({
      type: 'estimate_progress',
      request_id: 'r1',
      stage: 'tracing the remedies',
      done: 3,
      total: 5,
      partial
    });
    otherMessage.emit({
      type: 'estimate_progress',
      request_id: 'r1',
      stage: 'tracing the amp_bf16 step at batch size 64',
      done: 4,
      total: 5
    });
    const later = estimate.state;
    expect(later.status === 'running' && later.progress?.partial).toEqual(
      partial
    );
    expect(later.status === 'running' && later.progress?.stage).toBe(
      'tracing the amp_bf16 step at batch size 64'
    );
    answer(makeEstimateResult());
    const state = await done;
    expect(state.status).toBe('done');
    expect(state.status === 'done' && state.result.largest_batch_size).toBe(
      7000
    );
    expect(states).toEqual([
      'running',
      'running',
      'running',
      'running',
      'done'
    ]);
    // Progress after the answer changes nothing.
    otherMessage.emit({
      type: 'estimate_progress',
      request_id: 'r1',
      stage: 'late',
      done: 5,
      total: 5
    });
    expect(estimate.state.status).toBe('done');
  });

  it('sends one request while one runs', async () => {
    const { estimate, estimateMemory, answer } = setup();
    const first = estimate.run(REQUEST);
    const second = estimate.run({ model: 'other', batch: 'x' });
    expect(estimateMemory).toHaveBeenCalledTimes(1);
    answer(makeEstimateResult());
    expect(await second).toBe(await first);
  });

  it('turns a failed request into a state with its message', async () => {
    const { estimate, fail } = setup();
    const done = estimate.run(REQUEST);
    fail(new Error('The kernel helper sent a malformed reply'));
    const state = await done;
    expect(state).toEqual({
      status: 'failed',
      request: REQUEST,
      error: 'The kernel helper sent a malformed reply'
    });
  });

  it('says so where the connection cannot estimate', async () => {
    const estimate = new MemoryEstimate({
      connection: null,
      readProgress: readEstimateProgress
    });
    expect(estimate.canEstimate).toBe(false);
    const state = await estimate.run(REQUEST);
    expect(state.status === 'failed' && state.error).toContain(
      'cannot estimate'
    );
  });

  it('stops listening when disposed', () => {
    const { estimate, otherMessage } = setup();
    void estimate.run(REQUEST);
    estimate.dispose();
    expect(() =>
      otherMessage.emit({
        type: 'estimate_progress',
        request_id: 'r',
        stage: 's',
        done: 1,
        total: 2
      })
    ).not.toThrow();
    expect(estimate.isDisposed).toBe(true);
  });
});
