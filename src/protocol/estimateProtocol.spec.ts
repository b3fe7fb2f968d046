/** The readers of "Will it fit?": the estimate_memory result and the progress messages. */
import { makeEstimateResult, makeRefusal } from '../testing/estimateFixtures';
import { parseEstimateMemoryResult, readEstimateProgress } from './estimate';

describe('parseEstimateMemoryResult', () => {
  it('reads every key of a result and of a refusal', () => {
    for (const result of [
      makeEstimateResult(),
      makeRefusal(),
      makeEstimateResult({ card: null })
    ]) {
      expect(
        parseEstimateMemoryResult(JSON.parse(JSON.stringify(result)))
      ).toEqual({
        value: result
      });
    }
  });

  it('names the first field that is wrong', () => {
    const result = makeEstimateResult();
    const bad = JSON.parse(JSON.stringify(result));
    bad.rows[1].breakdown.gradients = -1;
    expect(parseEstimateMemoryResult(bad)).toEqual({
      error: expect.stringContaining(
        'estimate_memory.rows[1].breakdown.gradients'
      )
    });
    expect(parseEstimateMemoryResult({ ...result, notes: [3] })).toEqual({
      error: expect.stringContaining('estimate_memory.notes[0]')
    });
    expect(parseEstimateMemoryResult(null)).toHaveProperty('error');
  });
});

describe('readEstimateProgress', () => {
  it('reads a progress message, and nothing else', () => {
    const message = {
      type: 'estimate_progress',
      request_id: 'r',
      stage: 's',
      done: 0,
      total: 3
    };
    expect(readEstimateProgress(message)).toEqual(message);
    expect(readEstimateProgress({ ...message, total: 0 })).toBeNull();
    expect(readEstimateProgress({ type: 'sample' })).toBeNull();
    const partial = makeEstimateResult();
    expect(readEstimateProgress({ ...message, partial })).toEqual({
      ...message,
      partial
    });
    // Figures that cannot be read make the whole message unread.
    expect(
      readEstimateProgress({ ...message, partial: { status: 3 } })
    ).toBeNull();
    expect(readEstimateProgress('estimate_progress')).toBeNull();
  });
});
