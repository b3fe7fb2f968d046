/**
 * Tests for figures at the edges of what the panel shows: shares just under
 * the whole, a small use beside a large total, and counts of one.
 */
import { formatBytesOf, formatPercent } from '../../text/format';
import { gpuFigures } from '../../model/gpuFigures';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { statusText } from '../allocations/AllocationSitesView';
import { GpuDeviceCard } from './GpuDeviceCard';
import { RESTARTED } from '../../testing/allocationSitesFixtures';
import { GiB, makeGpu, MiB } from '../../testing/fixtures';

describe('a share just under the whole', () => {
  it('does not read as full', () => {
    expect(formatPercent(79.7 * GiB, 80 * GiB)).toBe('>99%'); // The share is 99.6 %.
    expect(formatPercent(99.99, 100)).toBe('>99%');
    expect(formatPercent(99.4, 100)).toBe('99%');
    expect(formatPercent(100, 100)).toBe('100%');
  });
});

describe('a small use of a large total', () => {
  it('does not read as nothing', () => {
    expect(formatBytesOf(2 * MiB, 80 * GiB)).toBe('<0.01/80 GiB');
    expect(formatBytesOf(4e6, 80e9, 'decimal')).toBe('<0.01/80 GB');
    expect(formatBytesOf(0, 80 * GiB)).toBe('0/80 GiB');
    expect(formatBytesOf(10 * MiB, 80 * GiB)).toBe('0.01/80 GiB');
  });
});

describe("the GPU card's allocator counters", () => {
  function countersOf(numOoms: number, numAllocRetries: number): string {
    const card = new GpuDeviceCard(0);
    const gpu = makeGpu();
    card.render(
      gpuFigures({
        ...gpu,
        torch: {
          ...gpu.torch!,
          num_ooms: numOoms,
          num_alloc_retries: numAllocRetries
        }
      }),
      DEFAULT_SETTINGS
    );
    return card.node.querySelector('[data-vram-role="gpu-counters"]')!
      .textContent!;
  }

  it('say one as one', () => {
    expect(countersOf(1, 1)).toBe(
      '1 out-of-memory error; 1 allocation retry (the allocator flushed its cache to survive)'
    );
  });

  it('say several as several', () => {
    expect(countersOf(3, 2)).toBe(
      '3 out-of-memory errors; 2 allocation retries (the allocator flushed its cache to survive)'
    );
  });
});

describe('the delete action, as the actions bar names it', () => {
  async function labelFor(names: string[], hidden: string[]): Promise<string> {
    const { KernelMemoryModel } = await import('../../model/KernelMemoryModel');
    const { MemoryActions } = await import('../cleanup/MemoryActions');
    // The model is not live, so the action fails at once, still with its label.
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    const connection = {
      freeMemory: jest.fn(),
      inspect: jest.fn(),
      deleteHolders: jest.fn()
    };
    const actions = new MemoryActions({ connection: connection as any, model });
    const plan = {
      listingId: 'l1',
      entries: names.map(name => ({ name })),
      hidden: hidden.map(holder => ({ holder })),
      expected: { bytes: 0, byDevice: {}, atMost: false, reasons: [] },
      warnings: []
    };
    const outcome = await actions.deleteHolders(plan as any);
    actions.dispose();
    return outcome.label;
  }

  it('counts its holders in words', async () => {
    expect(await labelFor(['x'], [])).toBe('Delete 1 holder');
    expect(await labelFor(['x'], ['last_traceback'])).toBe('Delete 2 holders');
  });
});

describe("the Lines tab's recording status", () => {
  it('says one frame as one, and writes the events as the restart beside it does', () => {
    const state = {
      ...RESTARTED,
      host: {
        ...RESTARTED.host,
        frames: 1,
        restart_reason: 'stopped_elsewhere'
      }
    };
    const text = statusText(state, true, false, DEFAULT_SETTINGS);
    expect(text).toContain('host: tracemalloc, 1 frame, 1 MiB of traces');
    expect(text).toContain('started it again with 1 frame at');
    expect(text).toContain(
      "GPU: PyTorch's allocator history, last 200,000 events"
    );
    expect(text).not.toMatch(/\b1 frames\b|200000/);
    const restarted = statusText(
      { ...state, host: { ...state.host, restart_reason: 'frames' } },
      true,
      false,
      DEFAULT_SETTINGS
    );
    expect(restarted).toContain('Host recording restarted with 1 frame at');
  });
});
