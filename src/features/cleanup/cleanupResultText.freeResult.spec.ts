/**
 * Tests describeFreeResult, which says a free-memory result in sentences, per
 * device, in either kind of unit.
 */
import { describeFreeResult } from './cleanupResultText';
import { makeFreeResult, snapshot } from '../../testing/cleanupFixtures';
import { GiB, MiB } from '../../testing/fixtures';

describe('describeFreeResult', () => {
  it('gc only, no GPU: objects collected and RAM change', () => {
    const d = describeFreeResult(
      makeFreeResult({
        actions_run: ['gc'],
        gc_collected: 1234,
        empty_cache: null,
        before: snapshot(1000 * MiB),
        after: snapshot(880 * MiB)
      })
    );
    expect(d.lines).toEqual(['gc collected 1,234 objects; RAM \u2212120 MiB']);
    expect(d.freedBytes).toBe(120 * MiB);
  });

  it("says a gc that raised, with the kernel's error", () => {
    const d = describeFreeResult(
      makeFreeResult({
        actions_run: [],
        gc_collected: null,
        empty_cache: null,
        failures: [
          {
            step: 'gc',
            target: null,
            error: 'RuntimeError: a finaliser exploded'
          }
        ],
        before: snapshot(MiB),
        after: snapshot(MiB)
      })
    );
    expect(d.lines).toEqual([
      'gc failed',
      'gc failed: RuntimeError: a finaliser exploded'
    ]);
  });

  it('says one object, and RAM unchanged', () => {
    const d = describeFreeResult(
      makeFreeResult({
        actions_run: ['gc'],
        gc_collected: 1,
        empty_cache: null,
        before: snapshot(MiB),
        after: snapshot(MiB)
      })
    );
    expect(d.lines).toEqual(['gc collected 1 object; RAM unchanged']);
    expect(d.freedBytes).toBe(0);
  });

  it('empty_cache freed reserved memory but allocated is still referenced', () => {
    const d = describeFreeResult(
      makeFreeResult({
        actions_run: ['empty_cache'],
        gc_collected: null,
        empty_cache: 'done',
        before: snapshot(GiB, [[0, GiB, 4.2 * GiB, 5 * GiB]]),
        after: snapshot(GiB, [[0, GiB, GiB, 1.8 * GiB]])
      })
    );
    expect(d.lines).toEqual([
      'Freed 3.2 GiB reserved on GPU 0; allocated unchanged: something still references it (NVML used \u22123.2 GiB)'
    ]);
    expect(d.freedBytes).toBe(3.2 * GiB);
  });

  it('gc + empty_cache: freed allocated and reserved, per device', () => {
    const d = describeFreeResult(
      makeFreeResult({
        gc_collected: 10,
        before: snapshot(GiB, [
          [0, 2 * GiB, 3 * GiB, null],
          [1, 0, 0, null]
        ]),
        after: snapshot(GiB, [
          [0, GiB, GiB, null],
          [1, 0, 0, null]
        ])
      })
    );
    expect(d.lines).toEqual([
      'gc collected 10 objects; RAM unchanged',
      'Freed 2 GiB reserved on GPU 0; allocated \u22121 GiB',
      'Nothing freed on GPU 1'
    ]);
    expect(d.freedBytes).toBe(2 * GiB);
  });

  it('gc freed allocated memory that the cache still reserves', () => {
    const d = describeFreeResult(
      makeFreeResult({
        actions_run: ['gc'],
        empty_cache: null,
        gc_collected: 3,
        before: snapshot(null, [[0, 2 * GiB, 3 * GiB, null]]),
        after: snapshot(null, [[0, GiB, 3 * GiB, null]])
      })
    );
    expect(d.lines).toEqual([
      'gc collected 3 objects',
      "Freed 1 GiB allocated on GPU 0; still reserved by PyTorch's cache (empty_cache returns it)"
    ]);
    expect(d.freedBytes).toBe(GiB);
  });

  it('nothing freed while memory is still allocated', () => {
    const d = describeFreeResult(
      makeFreeResult({
        actions_run: ['empty_cache'],
        gc_collected: null,
        before: snapshot(GiB, [[0, GiB, GiB, null]]),
        after: snapshot(GiB, [[0, GiB, GiB, null]])
      })
    );
    expect(d.lines).toEqual([
      'Nothing freed on GPU 0; 1 GiB still allocated: something still references it'
    ]);
    expect(d.freedBytes).toBe(0);
  });

  it('empty_cache skipped: CUDA not initialised, said as a fact, not a step to take', () => {
    const d = describeFreeResult(
      makeFreeResult({
        actions_run: [],
        gc_collected: null,
        empty_cache: 'skipped_cuda_not_initialized',
        before: snapshot(GiB),
        after: snapshot(GiB)
      })
    );
    expect(d.lines).toEqual([
      'empty_cache skipped: this kernel has not used CUDA yet, so nothing is cached'
    ]);
  });

  it('empty_cache skipped on a kernel known to see no GPU: says that, not CUDA', () => {
    for (const outcome of [
      'skipped_cuda_not_initialized',
      'skipped_torch_not_imported'
    ]) {
      const d = describeFreeResult(
        makeFreeResult({
          actions_run: ['gc'],
          gc_collected: 2,
          empty_cache: outcome,
          before: snapshot(GiB),
          after: snapshot(GiB)
        }),
        'binary',
        { noGpu: true }
      );
      expect(d.lines).toEqual([
        'gc collected 2 objects; empty_cache skipped: no GPU is visible to this kernel; RAM unchanged'
      ]);
    }
  });

  it('empty_cache skipped: torch not imported (with gc)', () => {
    const d = describeFreeResult(
      makeFreeResult({
        actions_run: ['gc'],
        gc_collected: 0,
        empty_cache: 'skipped_torch_not_imported',
        before: snapshot(GiB),
        after: snapshot(GiB - MiB)
      })
    );
    expect(d.lines).toEqual([
      'gc collected 0 objects; empty_cache skipped: PyTorch not imported in this kernel; RAM \u22121 MiB'
    ]);
  });

  it('keeps an unknown empty_cache outcome as text', () => {
    const d = describeFreeResult(
      makeFreeResult({
        actions_run: [],
        gc_collected: null,
        empty_cache: 'something new',
        before: snapshot(null),
        after: snapshot(null)
      })
    );
    expect(d.lines).toEqual(['empty_cache: something new']);
    expect(d.freedBytes).toBeNull();
  });

  it('says so when no figure changed and none is known', () => {
    const d = describeFreeResult(
      makeFreeResult({
        actions_run: ['empty_cache'],
        gc_collected: null,
        empty_cache: 'done',
        before: snapshot(null, [[0, null, null, null]]),
        after: snapshot(null, [[0, null, null, null]])
      })
    );
    expect(d.lines).toEqual(['empty_cache done; no memory figure changed']);
    expect(d.freedBytes).toBeNull();
  });

  it('reports growth honestly and NVML-only devices', () => {
    const d = describeFreeResult(
      makeFreeResult({
        actions_run: ['empty_cache'],
        gc_collected: null,
        before: snapshot(null, [
          [0, GiB, GiB, null],
          [1, null, null, GiB]
        ]),
        after: snapshot(null, [
          [0, 2 * GiB, 2 * GiB, null],
          [1, null, null, 512 * MiB]
        ])
      })
    );
    expect(d.lines).toEqual([
      'GPU 0: allocated +1 GiB, reserved +1 GiB',
      'GPU 1: NVML used \u2212512 MiB'
    ]);
    expect(d.freedBytes).toBe(0);
  });

  it('uses decimal units when asked', () => {
    const d = describeFreeResult(
      makeFreeResult({
        actions_run: ['gc'],
        gc_collected: 2,
        empty_cache: null,
        before: snapshot(2_000_000),
        after: snapshot(1_000_000)
      }),
      'decimal'
    );
    expect(d.lines[0]).toBe('gc collected 2 objects; RAM \u22121 MB');
  });
});
