/**
 * Tests the text of MemoryActions' last outcome: what it says of the kernel,
 * that it uses the units set at the moment, and that it says when it came.
 */
import { makeFreeResult, snapshot } from '../../testing/cleanupFixtures';
import {
  GiB,
  makeCpuSample,
  makeHello,
  makeSample,
  wire
} from '../../testing/fixtures';

describe('MemoryActions: what empty_cache skipped says of the kernel', () => {
  async function freeOn(hello: unknown, sample: unknown): Promise<string> {
    const { KernelMemoryModel } = await import('../../model/KernelMemoryModel');
    const { MemoryActions } = await import('./MemoryActions');
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
    const connection = {
      freeMemory: jest.fn(async () => result),
      inspect: jest.fn(),
      deleteHolders: jest.fn()
    };
    const actions = new MemoryActions({ connection: connection as any, model });
    await actions.free(['gc', 'empty_cache']);
    const text = actions.lastOutcome!.lines[0];
    actions.dispose();
    return text;
  }
  const idleTorch = { imported: true, cuda_initialized: false };

  it('no GPU where the model knows none is visible (NVML lists none)', async () => {
    const text = await freeOn(
      makeHello({ devices: [] }),
      makeCpuSample({ torch: idleTorch })
    );
    expect(text).toContain(
      'empty_cache skipped: no GPU is visible to this kernel'
    );
    expect(text).not.toContain('CUDA');
  });

  it('nothing cached yet where a GPU is there, or may be (no NVML to tell)', async () => {
    const gpu = await freeOn(makeHello(), makeSample({ torch: idleTorch }));
    expect(gpu).toContain(
      'empty_cache skipped: this kernel has not used CUDA yet, so nothing is cached'
    );
    const unknown = await freeOn(
      makeHello({
        nvml: {
          available: false,
          driver_version: null,
          error: 'cannot import pynvml'
        },
        devices: []
      }),
      makeCpuSample({ torch: idleTorch })
    );
    expect(unknown).toContain(
      'this kernel has not used CUDA yet, so nothing is cached'
    );
  });
});

describe('MemoryActions.redescribe', () => {
  it('says the last result again in the units set now, and leaves a failure as it was', async () => {
    const { KernelMemoryModel } = await import('../../model/KernelMemoryModel');
    const { MemoryActions } = await import('./MemoryActions');
    const { makeFreeResult } = await import('../../testing/cleanupFixtures');
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.setState('live');
    let units: 'binary' | 'decimal' = 'binary';
    const connection = {
      freeMemory: jest.fn(async () => makeFreeResult()),
      inspect: jest.fn(),
      deleteHolders: jest.fn()
    };
    const actions = new MemoryActions({
      connection: connection as any,
      model,
      units: () => units
    });
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
    const { KernelMemoryModel } = await import('../../model/KernelMemoryModel');
    const { MemoryActions } = await import('./MemoryActions');
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.setState('live');
    let answer: (result: unknown) => void = () => undefined;
    const connection = {
      freeMemory: jest.fn(() => new Promise(resolve => (answer = resolve))),
      inspect: jest.fn(),
      deleteHolders: jest.fn()
    };
    let units: 'binary' | 'decimal' = 'binary';
    const actions = new MemoryActions({
      connection: connection as any,
      model,
      units: () => units
    });
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
