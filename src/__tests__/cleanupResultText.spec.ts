import {
  describeDeleteResult,
  describeFreeResult,
  formatSignedBytes,
  freedBytesBetween,
  stillAliveText
} from '../model/cleanupResultText';
import {
  makeDeleteResult,
  makeFreeResult,
  snapshot
} from './cleanupFixtures';
import { GiB, makeCpuSample, makeHello, makeSample, MiB, wire } from './fixtures';

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

  it('says a gc that raised, with the kernel\'s error', () => {
    const d = describeFreeResult(
      makeFreeResult({
        actions_run: [],
        gc_collected: null,
        empty_cache: null,
        failures: [{ step: 'gc', target: null, error: 'RuntimeError: a finaliser exploded' }],
        before: snapshot(MiB),
        after: snapshot(MiB)
      })
    );
    expect(d.lines).toEqual(['gc failed', 'gc failed: RuntimeError: a finaliser exploded']);
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
    for (const outcome of ['skipped_cuda_not_initialized', 'skipped_torch_not_imported']) {
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

describe('freedBytesBetween', () => {
  it('sums drops only: max(allocated, reserved) per GPU plus RSS', () => {
    expect(
      freedBytesBetween(
        snapshot(100, [
          [0, 50, 80, null],
          [1, 10, 10, null]
        ]),
        snapshot(120, [
          [0, 20, 30, null],
          [1, 20, 20, null]
        ])
      )
    ).toBe(50);
  });

  it('is null when nothing is known on both sides', () => {
    expect(freedBytesBetween(snapshot(null), snapshot(5))).toBeNull();
  });
});

describe('describeDeleteResult', () => {
  it('says what was deleted and how much came back', () => {
    const d = describeDeleteResult(makeDeleteResult());
    // No GPU figures: the RAM's drop is what was freed, said once.
    expect(d.lines).toEqual(['Deleted np_arr: 8 MiB freed']);
    // RAM that rose, or GPU figures beside it, is news: said.
    expect(describeDeleteResult(makeDeleteResult({ after: snapshot(GiB + MiB) })).lines).toEqual([
      'Deleted np_arr: nothing freed',
      'RAM +1 MiB'
    ]);
    const withGpu = describeDeleteResult(
      makeDeleteResult({ before: snapshot(GiB, [[0, GiB, GiB, null]]), after: snapshot(GiB - 8 * MiB, [[0, GiB, GiB, null]]) })
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
          { step: 'empty_cache', target: 'GPU 0', error: 'RuntimeError: CUDA error: device-side assert triggered' }
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
    const still_alive = Array.from({ length: 13 }, (_, i) => ({ name: `t${i}`, reason: 'still referenced by a list' }));
    const d = describeDeleteResult(makeDeleteResult({ deleted: still_alive.map(s => s.name), still_alive }));
    expect(d.lines.filter(line => line.includes('its memory did not come back'))).toHaveLength(10);
    expect(d.lines[d.lines.length - 1]).toBe('\u2026and 3 more names whose memory did not come back');
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

describe('small helpers', () => {
  it('formats signed bytes', () => {
    expect(formatSignedBytes(-MiB, 'binary')).toBe('\u22121 MiB');
    expect(formatSignedBytes(MiB, 'binary')).toBe('+1 MiB');
    expect(formatSignedBytes(0, 'binary')).toBe('0 B');
  });

  it('phrases survivors', () => {
    expect(stillAliveText('t', 'referenced by 2 objects')).toBe(
      't: referenced by 2 objects \u2014 its memory did not come back'
    );
  });
});

describe('MemoryActions: what empty_cache skipped says of the kernel', () => {
  async function freeOn(hello: unknown, sample: unknown): Promise<string> {
    const { KernelMemoryModel } = await import('../model/KernelMemoryModel');
    const { MemoryActions } = await import('../model/MemoryActions');
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(hello));
    model.ingest(wire(sample));
    model.setState('live');
    const result = makeFreeResult({
      actions_run: ['gc'],
      gc_collected: 0,
      empty_cache: 'skipped_cuda_not_initialized',
      before: snapshot(GiB),
      after: snapshot(GiB)
    });
    const connection = { freeMemory: jest.fn(async () => result), inspect: jest.fn(), deleteHolders: jest.fn() };
    const actions = new MemoryActions({ connection: connection as any, model });
    await actions.free(['gc', 'empty_cache']);
    const text = actions.lastOutcome!.lines[0];
    actions.dispose();
    return text;
  }
  const idleTorch = { imported: true, cuda_initialized: false };

  it('no GPU where the model knows none is visible (NVML lists none)', async () => {
    const text = await freeOn(makeHello({ devices: [] }), makeCpuSample({ torch: idleTorch }));
    expect(text).toContain('empty_cache skipped: no GPU is visible to this kernel');
    expect(text).not.toContain('CUDA');
  });

  it('nothing cached yet where a GPU is there, or may be (no NVML to tell)', async () => {
    const gpu = await freeOn(makeHello(), makeSample({ torch: idleTorch }));
    expect(gpu).toContain('empty_cache skipped: this kernel has not used CUDA yet, so nothing is cached');
    const unknown = await freeOn(
      makeHello({ nvml: { available: false, driver_version: null, error: 'cannot import pynvml' }, devices: [] }),
      makeCpuSample({ torch: idleTorch })
    );
    expect(unknown).toContain('this kernel has not used CUDA yet, so nothing is cached');
  });
});

describe('MemoryActions.redescribe', () => {
  it('says the last result again in the units set now, and leaves a failure as it was', async () => {
    const { KernelMemoryModel } = await import('../model/KernelMemoryModel');
    const { MemoryActions } = await import('../model/MemoryActions');
    const { makeFreeResult } = await import('./cleanupFixtures');
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.setState('live');
    let units: 'binary' | 'decimal' = 'binary';
    const connection = { freeMemory: jest.fn(async () => makeFreeResult()), inspect: jest.fn(), deleteHolders: jest.fn() };
    const actions = new MemoryActions({ connection: connection as any, model, units: () => units });
    await actions.free(['gc', 'empty_cache']);
    const binary = actions.lastOutcome!.lines.join('\n');
    expect(binary).toMatch(/MiB|GiB/);
    units = 'decimal';
    const changes: string[] = [];
    actions.changed.connect((_, change) => changes.push(change));
    await actions.redescribe();
    const decimal = actions.lastOutcome!.lines.join('\n');
    expect(decimal).toMatch(/MB|GB/);
    expect(decimal).not.toMatch(/MiB|GiB/);
    expect(actions.lastOutcome!.result).toEqual(makeFreeResult());
    expect(changes).toEqual(['outcome']);

    connection.freeMemory.mockRejectedValueOnce(new Error('kernel gone'));
    await actions.free(['gc']);
    const failed = actions.lastOutcome;
    await actions.redescribe();
    expect(actions.lastOutcome).toBe(failed);
    actions.dispose();
  });
});

describe('MemoryActions: when an outcome came', () => {
  async function liveActions() {
    const { KernelMemoryModel } = await import('../model/KernelMemoryModel');
    const { MemoryActions } = await import('../model/MemoryActions');
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.setState('live');
    let answer: (result: unknown) => void = () => undefined;
    const connection = {
      freeMemory: jest.fn(() => new Promise(resolve => (answer = resolve))),
      inspect: jest.fn(),
      deleteHolders: jest.fn()
    };
    let units: 'binary' | 'decimal' = 'binary';
    const actions = new MemoryActions({ connection: connection as any, model, units: () => units });
    return {
      model,
      actions,
      connection,
      answer: (result: unknown) => answer(result),
      setUnits: (u: 'binary' | 'decimal') => (units = u)
    };
  }

  afterEach(() => jest.restoreAllMocks());

  it('is the time the reply came, not when it was asked; said again in other units, it keeps it', async () => {
    const t = await liveActions();
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_700_000_000_000);
    const running = t.actions.free(['gc']);
    await Promise.resolve();
    now.mockReturnValue(1_700_000_042_500);
    t.answer(makeFreeResult({ actions_run: ['gc'], empty_cache: null }));
    const outcome = await running;
    expect(outcome.at).toBe(1_700_000_042.5);
    expect(t.actions.lastOutcome!.at).toBe(1_700_000_042.5);
    now.mockReturnValue(1_700_003_600_000);
    t.setUnits('decimal');
    await t.actions.redescribe();
    expect(t.actions.lastOutcome!.lines.join('\n')).not.toMatch(/MiB|GiB/);
    expect(t.actions.lastOutcome!.at).toBe(1_700_000_042.5);
    t.actions.dispose();
  });

  it('a failure, a cancel and a refusal carry the time they ended', async () => {
    const t = await liveActions();
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_700_000_000_000);
    t.connection.freeMemory.mockRejectedValueOnce(new Error('kernel gone'));
    expect((await t.actions.free(['gc'])).at).toBe(1_700_000_000);

    t.model.setKernelBusy(true);
    const queued = t.actions.free(['empty_cache']);
    now.mockReturnValue(1_700_000_010_000);
    t.actions.queue.cancel(t.actions.queue.pending[0].id);
    const cancelled = await queued;
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.at).toBe(1_700_000_010);

    now.mockReturnValue(1_700_000_020_000);
    t.model.setState('helper-failed', 'ImportError: boom');
    const refused = await t.actions.free(['gc']);
    expect(refused.status).toBe('failed');
    expect(refused.at).toBe(1_700_000_020);
    t.actions.dispose();
  });
});
