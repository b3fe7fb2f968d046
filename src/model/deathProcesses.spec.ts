/**
 * The explanation of a kernel's death names what its own processes held
 * and, where the out-of-memory killer acted, which of them it most likely
 * took: the ones holding more than the kernel first, or its largest ones
 * when the count rose by more than one.
 */
import { explainKernelDeath, KernelDeathFacts } from './kernelDeath';
import { CONTAINER_HOST } from '../testing/kernelDeathFixtures';
import { GiB, makeCpuSample } from '../testing/fixtures';
import { makeProcessTree, makeTreeProcess } from '../testing/processFixtures';
import type { TreeProcess } from '../protocol/processes';

function worker(pid: number, rssGiB: number): TreeProcess {
  const bytes = rssGiB * GiB;
  return makeTreeProcess({
    pid,
    start_time: pid,
    gpus: [],
    host: {
      measure: 'uss',
      host_bytes: bytes,
      uss_bytes: bytes,
      pss_bytes: bytes,
      rss_bytes: bytes,
      swap_bytes: 0,
      rollup_at: 999
    }
  });
}

function facts(
  processes: TreeProcess[],
  overrides: Partial<KernelDeathFacts> = {}
): KernelDeathFacts {
  return {
    status: 'autorestarting',
    time: 2000,
    lastSample: makeCpuSample({
      host: CONTAINER_HOST,
      time: 1000,
      processes: makeProcessTree(processes, 1000)
    }),
    figuresAge: 0.3,
    runningCell: null,
    oomKillsAfter: null,
    machineOomKillsAfter: null,
    ...overrides
  };
}

describe("a kernel's death and its processes", () => {
  it('names a worker that held more than the kernel as the killer’s first pick', () => {
    const e = explainKernelDeath(
      facts([worker(5001, 30), worker(5002, 1)], { oomKillsAfter: 2 })
    );
    expect(e.verdict).toBe('oom-killed');
    expect(e.details).toContain(
      'The out-of-memory killer takes the process with the most memory first: DataLoader worker pid 5001 (30 GiB) held more than the kernel (RSS 22.8 GiB), so the killer most likely took it first.'
    );
    expect(
      e.details.some(d => d.startsWith('Its 2 processes held 31 GiB'))
    ).toBe(true);
  });

  it('names the largest processes when the count rose by more than one and none was larger', () => {
    const e = explainKernelDeath(
      facts([worker(5001, 1), worker(5002, 2), worker(5003, 0.5)], {
        oomKillsAfter: 3
      })
    );
    expect(e.details).toContain(
      'The count rose by 3, so the killer took more than the kernel: most likely its largest processes too, DataLoader worker pid 5002 (2 GiB), DataLoader worker pid 5001 (1 GiB).'
    );
  });

  it('blames no process where the killer is cleared, and says nothing without processes', () => {
    const cleared = explainKernelDeath(
      facts([worker(5001, 30)], { oomKillsAfter: 0 })
    );
    expect(cleared.verdict).toBe('unknown');
    expect(cleared.details.join(' ')).not.toContain('killer takes');
    expect(cleared.details.some(d => d.startsWith('Its 1 process held'))).toBe(
      true
    );
    const none = explainKernelDeath(facts([], { oomKillsAfter: 1 }));
    expect(none.details.join(' ')).not.toContain('process held');
  });
});
