/**
 * Tests describeDeleteResult, which says in lines what a delete removed,
 * cleared, refused and left alive.
 */
import { describeDeleteResult } from './cleanupResultText';
import { makeDeleteResult, snapshot } from '../../testing/cleanupFixtures';
import { GiB, MiB } from '../../testing/fixtures';

describe('describeDeleteResult', () => {
  it('says what was deleted and how much came back', () => {
    const d = describeDeleteResult(makeDeleteResult());
    // Without GPU figures, the RAM's drop is what was freed, and it is said
    // only once.
    expect(d.lines).toEqual(['Deleted np_arr: 8 MiB freed']);
    // RAM that rose, or RAM beside GPU figures, tells the user something new,
    // so it is said.
    expect(
      describeDeleteResult(makeDeleteResult({ after: snapshot(GiB + MiB) }))
        .lines
    ).toEqual(['Deleted np_arr: nothing freed', 'RAM +1 MiB']);
    const withGpu = describeDeleteResult(
      makeDeleteResult({
        before: snapshot(GiB, [[0, GiB, GiB, null]]),
        after: snapshot(GiB - 8 * MiB, [[0, GiB, GiB, null]])
      })
    );
    expect(withGpu.lines[1]).toBe('RAM \u22128 MiB');
    expect(d.freedBytes).toBe(8 * MiB);
  });

  it('lists cleared holders, refusals and survivors with their reasons', () => {
    const d = describeDeleteResult(
      makeDeleteResult({
        deleted: ['a', 'x'],
        cleared: ['last_traceback', 'output_cache'],
        refused: [{ name: 'In', reason: 'IPython internal' }],
        still_alive: [{ name: 'x', reason: 'still referenced by a list' }],
        before: snapshot(GiB, [[0, 2 * GiB, 2 * GiB, null]]),
        after: snapshot(GiB, [[0, GiB, GiB, null]])
      })
    );
    expect(d.lines).toEqual([
      'Deleted a, x; cleared the last traceback, the output cache: 1 GiB freed',
      'RAM unchanged',
      'Freed 1 GiB reserved on GPU 0; allocated \u22121 GiB',
      'Not deleted: In \u2014 IPython internal',
      'x is still referenced by a list \u2014 its memory did not come back'
    ]);
    expect(d.freedBytes).toBe(GiB);
  });

  it('says what was deleted although a later step failed, and which step', () => {
    const d = describeDeleteResult(
      makeDeleteResult({
        deleted: ['big'],
        cleared: ['output_cache'],
        failures: [
          { step: 'clear', target: 'last_traceback', error: 'ValueError: odd' },
          {
            step: 'empty_cache',
            target: 'GPU 0',
            error: 'RuntimeError: CUDA error: device-side assert triggered'
          }
        ],
        after: snapshot(GiB)
      })
    );
    expect(d.lines).toEqual([
      'Deleted big; cleared the output cache; clearing the last traceback failed; empty_cache failed: nothing freed',
      'Not cleared: the last traceback \u2014 ValueError: odd',
      'empty_cache failed on GPU 0: RuntimeError: CUDA error: device-side assert triggered',
      'RAM unchanged'
    ]);
  });

  it('lists ten survivors and counts the rest', () => {
    const still_alive = Array.from({ length: 13 }, (_, i) => ({
      name: `t${i}`,
      reason: 'still referenced by a list'
    }));
    const d = describeDeleteResult(
      makeDeleteResult({ deleted: still_alive.map(s => s.name), still_alive })
    );
    expect(
      d.lines.filter(line => line.includes('its memory did not come back'))
    ).toHaveLength(10);
    expect(d.lines[d.lines.length - 1]).toBe(
      '\u2026and 3 more names whose memory did not come back'
    );
  });

  it('says nothing was deleted, nothing freed', () => {
    const d = describeDeleteResult(
      makeDeleteResult({
        deleted: [],
        refused: [{ name: 'y', reason: 'rebound since the listing' }],
        after: snapshot(GiB)
      })
    );
    expect(d.lines[0]).toBe('Nothing was deleted: nothing freed');
    expect(d.freedBytes).toBe(0);
  });

  it('capitalises a clear-only result and shortens long name lists', () => {
    const d = describeDeleteResult(
      makeDeleteResult({
        deleted: [],
        cleared: ['last_execution_result'],
        before: snapshot(null),
        after: snapshot(null)
      })
    );
    expect(d.lines[0]).toBe(
      'Cleared the last execution result: freed memory unknown'
    );
    const many = describeDeleteResult(
      makeDeleteResult({ deleted: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] })
    );
    expect(many.lines[0]).toBe('Deleted a, b, c, d, e and 2 more: 8 MiB freed');
  });
});
