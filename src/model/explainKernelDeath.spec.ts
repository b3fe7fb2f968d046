/**
 * Tests that explainKernelDeath says why a kernel died from its last figures
 * and the OOM kill counts, and never guesses.
 */
import { KernelMemoryModel } from './KernelMemoryModel';
import {
  explainKernelDeath,
  KernelDeathFacts,
  machineOomKillsSince,
  NOTIFICATION_CHARS,
  oomKillsSince
} from './kernelDeath';
import { HostMemory, SampleMessage } from '../protocol/sample';
import { GiB, makeCpuSample, makeHello, MiB, wire } from '../testing/fixtures';
import { CONTAINER_HOST, machine } from '../testing/kernelDeathFixtures';

function sample(host: HostMemory, time = 1000): SampleMessage {
  return makeCpuSample({ host, time });
}

function facts(overrides: Partial<KernelDeathFacts> = {}): KernelDeathFacts {
  return {
    status: 'autorestarting',
    time: 2000,
    lastSample: sample(CONTAINER_HOST),
    figuresAge: 0.3,
    runningCell: { cellId: 'cell-a', executionCount: 7, confirmed: true },
    oomKillsAfter: null,
    machineOomKillsAfter: null,
    ...overrides
  };
}

describe('explainKernelDeath', () => {
  it('near a container limit: most likely the out-of-memory killer, in figures', () => {
    const e = explainKernelDeath(facts());
    expect(e.verdict).toBe('near-limit');
    expect(e.summary).toBe(
      'The kernel died and was restarted while its RAM was 22.8 GiB, with 717 MiB more ' +
        'available (container limit 24 GiB): most likely the out-of-memory killer.'
    );
    expect(e.cellText).toBe('Cell [7] was running.');
    expect(e.details[0]).toBe(
      'Last figures: kernel RSS 22.8 GiB, in use 23.3 GiB of 24 GiB (container limit), available 717 MiB.'
    );
    expect(e.short).toBe(
      'The kernel (running [7]) died at RAM 22.8 GiB (717 MiB more available): most likely the out-of-memory killer.'
    );
  });

  it("says it as fact when the container's oom_kill count rose", () => {
    const f = facts({ oomKillsAfter: 1 });
    expect(oomKillsSince(f)).toBe(1);
    const e = explainKernelDeath(f);
    expect(e.verdict).toBe('oom-killed');
    expect(e.summary).toContain(
      ': the out-of-memory killer killed it (memory.events oom_kill).'
    );
    expect(e.details).toContain(
      "The container's memory.events oom_kill count rose from 0 to 1."
    );
    const v1: HostMemory = {
      ...CONTAINER_HOST,
      container: { ...CONTAINER_HOST.container!, cgroup_version: 1 }
    };
    expect(
      explainKernelDeath(facts({ lastSample: sample(v1), oomKillsAfter: 3 }))
        .summary
    ).toContain('(memory.oom_control oom_kill)');
  });

  it('does not blame the killer when the count says it did not act', () => {
    const e = explainKernelDeath(facts({ oomKillsAfter: 0 }));
    expect(e.verdict).toBe('unknown');
    expect(e.summary).toContain(
      "memory was near the limit, but the container's memory.events oom_kill count did not rise, so the cause is unknown."
    );
  });

  it('far from the limit: the cause is unknown, never guessed', () => {
    const low = machine(1.2 * GiB, 32 * GiB, 22.3 * GiB);
    const e = explainKernelDeath(
      facts({ lastSample: sample(low), status: 'autorestarting' })
    );
    expect(e.verdict).toBe('unknown');
    expect(e.summary).toBe(
      'The kernel died and was restarted while its RAM was 1.2 GiB, with 22.3 GiB more available (machine RAM 32 GiB): ' +
        'memory was not near the limit, so the cause is unknown.'
    );
    expect(e.short).toBe(
      'The kernel (running [7]) died at RAM 1.2 GiB (22.3 GiB more available); the cause is unknown.'
    );
  });

  it('a kernel gone without a restart is never said to be most likely OOM-killed', () => {
    // Shut down from another page, culled by the server: JupyterLab says `dead` alone,
    // and no restarted kernel will tell whether the killer acted.
    const full = machine(3.7 * GiB, 4 * GiB, 0.3 * GiB);
    const e = explainKernelDeath(
      facts({ lastSample: sample(full), status: 'dead' })
    );
    expect(e.verdict).toBe('unknown');
    expect(e.summary).toContain(
      'a kernel stops this way when it is shut down or culled elsewhere, or dies where the server does not ' +
        'restart it; its memory was near the limit, but the cause is unknown.'
    );
    expect(e.short).toContain('the cause is unknown');
  });

  it("near the machine's RAM without a container", () => {
    const full = machine(30 * GiB, 32 * GiB, 512 * MiB);
    const e = explainKernelDeath(facts({ lastSample: sample(full) }));
    expect(e.verdict).toBe('near-limit');
    expect(e.summary).toContain(
      '(machine RAM 32 GiB): most likely the out-of-memory killer.'
    );
  });

  it('without figures: unknown, unless the count rose', () => {
    const e = explainKernelDeath(
      facts({ lastSample: null, figuresAge: null, runningCell: null })
    );
    expect(e.verdict).toBe('unknown');
    expect(e.summary).toBe(
      'The kernel died and was restarted. No memory figures arrived before it died, so the cause is unknown.'
    );
    expect(e.cellText).toBe('');
  });

  it('says when the figures are old, and names a cell without a count by its id', () => {
    const e = explainKernelDeath(
      facts({
        figuresAge: 42,
        runningCell: {
          cellId: '0123456789abcdef',
          executionCount: null,
          confirmed: true
        }
      })
    );
    expect(e.summary).toContain('(figures from 42 s before)');
    expect(e.cellText).toBe('The cell marked "kernel died" was running.');
    expect(e.short).toMatch(/^The kernel \(running cell 01234567\) died/);
  });

  it('says a cell the kernel never confirmed starting was most likely running', () => {
    const e = explainKernelDeath(
      facts({
        runningCell: {
          cellId: '0123456789abcdef',
          executionCount: null,
          confirmed: false
        }
      })
    );
    expect(e.cellText).toBe(
      'The cell marked "kernel died" was most likely running: the kernel died before it said it had started it.'
    );
    expect(e.short).toMatch(
      /^The kernel \(probably running cell 01234567\) died/
    );
  });

  it('near a container limit with swap still free: most likely the killer, with the room said', () => {
    // memory.swap.max 4 GiB, 1 GiB of it in use; the machine has 16 GiB of swap.
    const swapping: HostMemory = {
      ...CONTAINER_HOST,
      container: {
        ...CONTAINER_HOST.container!,
        swap_limit_bytes: 4 * GiB,
        swap_usage_bytes: GiB
      },
      swapped_bytes: 0.9 * GiB,
      swap_total_bytes: 16 * GiB,
      swap_free_bytes: 12 * GiB
    };
    const e = explainKernelDeath(facts({ lastSample: sample(swapping) }));
    // Room in swap a second before is no proof: a zram swap is RAM itself.
    expect(e.verdict).toBe('near-limit');
    expect(e.summary).toBe(
      'The kernel died and was restarted while its RAM was 22.8 GiB, with 717 MiB more available ' +
        '(container limit 24 GiB): most likely the out-of-memory killer, though swap still had 3 GiB ' +
        'free at the last sample.'
    );
    expect(e.details).toContain(
      'The kernel had 922 MiB in swap besides its RSS.'
    );
    expect(e.details).toContain(
      "Swap: 1 GiB in use of 4 GiB (the container's swap limit), 3 GiB free."
    );
    // The count still says it as fact, either way.
    expect(
      explainKernelDeath(
        facts({ lastSample: sample(swapping), oomKillsAfter: 1 })
      ).verdict
    ).toBe('oom-killed');
    expect(
      explainKernelDeath(
        facts({ lastSample: sample(swapping), oomKillsAfter: 0 })
      ).verdict
    ).toBe('unknown');
  });

  it('near a container limit with its swap full, or none allowed: most likely the killer', () => {
    const full: HostMemory = {
      ...CONTAINER_HOST,
      container: {
        ...CONTAINER_HOST.container!,
        swap_limit_bytes: 4 * GiB,
        swap_usage_bytes: 3.9 * GiB
      },
      swapped_bytes: 3.9 * GiB,
      swap_total_bytes: 16 * GiB,
      swap_free_bytes: 12 * GiB
    };
    const e = explainKernelDeath(facts({ lastSample: sample(full) }));
    expect(e.verdict).toBe('near-limit');
    expect(e.summary).toContain(
      ': most likely the out-of-memory killer (its swap was nearly full too).'
    );
    const noSwap: HostMemory = {
      ...full,
      container: {
        ...full.container!,
        swap_limit_bytes: 0,
        swap_usage_bytes: 0
      },
      swapped_bytes: 0
    };
    const n = explainKernelDeath(facts({ lastSample: sample(noSwap) }));
    expect(n.verdict).toBe('near-limit');
    expect(n.summary).toContain(': most likely the out-of-memory killer.');
    expect(n.details).toContain(
      'The kernel could not swap: its memory limit was where it would be killed.'
    );
    expect(n.details.join(' ')).not.toContain('in swap besides');
  });

  it("near the machine's RAM with the machine's swap still free: most likely the killer, with the room said", () => {
    const full: HostMemory = {
      ...machine(30 * GiB, 32 * GiB, 512 * MiB),
      swapped_bytes: 2 * GiB,
      swap_total_bytes: 8 * GiB,
      swap_free_bytes: 6 * GiB
    };
    const e = explainKernelDeath(facts({ lastSample: sample(full) }));
    expect(e.verdict).toBe('near-limit');
    expect(e.summary).toContain(
      'most likely the out-of-memory killer, though swap still had 6 GiB free at the last sample.'
    );
    expect(e.details).toContain(
      "Swap: 2 GiB in use of 8 GiB (the machine's swap), 6 GiB free."
    );
    // A machine without swap gets the same verdict.
    const noSwap = {
      ...full,
      swapped_bytes: 0,
      swap_total_bytes: 0,
      swap_free_bytes: 0
    };
    expect(
      explainKernelDeath(facts({ lastSample: sample(noSwap) })).verdict
    ).toBe('near-limit');
  });

  it('a last sample from an older helper, without swap figures, is explained as before', () => {
    // CONTAINER_HOST has no swap fields; through the parser they read as null.
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeHello()));
    model.ingest(wire(sample(CONTAINER_HOST)));
    expect(model.latest!.host.swap_total_bytes).toBeNull();
    const e = explainKernelDeath(facts({ lastSample: model.latest }));
    expect(e.verdict).toBe('near-limit');
    expect(e.details.join(' ')).not.toMatch(/swap/i);
  });

  describe("the machine's OOM kill count (/proc/vmstat), without a container's", () => {
    /** A machine without a container whose /proc/vmstat said `count` at the last sample. */
    const counted = (host: HostMemory, count: number | null): SampleMessage =>
      sample({ ...host, oom_kill_count: count });
    const roomy = machine(1.2 * GiB, 32 * GiB, 22.3 * GiB);
    const full = machine(30 * GiB, 32 * GiB, 512 * MiB);

    it('rose, far from the limit: most likely the killer, with the count and the limit said', () => {
      const f = facts({
        lastSample: counted(roomy, 41),
        machineOomKillsAfter: 42
      });
      expect(machineOomKillsSince(f)).toBe(1);
      const e = explainKernelDeath(f);
      expect(e.verdict).toBe('near-limit');
      expect(e.summary).toBe(
        'The kernel died and was restarted while its RAM was 1.2 GiB, with 22.3 GiB more available (machine RAM 32 GiB): ' +
          "most likely the out-of-memory killer, as the machine's /proc/vmstat oom_kill count rose, " +
          'though memory was not near the limit at the last sample.'
      );
      expect(e.details).toEqual([
        "The machine's /proc/vmstat oom_kill count rose from 41 to 42 between the last figures and the restarted kernel's first.",
        'That count takes in every process the out-of-memory killer kills on the machine, so it may have killed another one.',
        'Last figures: kernel RSS 1.2 GiB, in use 9.7 GiB of 32 GiB, available 22.3 GiB.'
      ]);
      expect(e.short).toBe(
        'The kernel (running [7]) died at RAM 1.2 GiB (22.3 GiB more available): most likely the out-of-memory killer.'
      );
    });

    it('rose, near the limit: most likely the killer, the count said instead of the room in swap', () => {
      const swapping: HostMemory = {
        ...full,
        swapped_bytes: 2 * GiB,
        swap_total_bytes: 8 * GiB,
        swap_free_bytes: 6 * GiB
      };
      const e = explainKernelDeath(
        facts({ lastSample: counted(swapping, 41), machineOomKillsAfter: 43 })
      );
      expect(e.verdict).toBe('near-limit');
      expect(e.summary).toBe(
        'The kernel died and was restarted while its RAM was 30 GiB, with 512 MiB more available (machine RAM 32 GiB): ' +
          "most likely the out-of-memory killer, as the machine's /proc/vmstat oom_kill count rose."
      );
      expect(e.details).toContain(
        "The machine's /proc/vmstat oom_kill count rose from 41 to 43 between the last figures and the restarted kernel's first."
      );
      expect(e.details).toContain(
        "Swap: 2 GiB in use of 8 GiB (the machine's swap), 6 GiB free."
      );
    });

    it('did not rise, near the limit: the killer did not kill it, and the cause is unknown', () => {
      const e = explainKernelDeath(
        facts({ lastSample: counted(full, 41), machineOomKillsAfter: 41 })
      );
      expect(e.verdict).toBe('unknown');
      expect(e.summary).toBe(
        'The kernel died and was restarted while its RAM was 30 GiB, with 512 MiB more available (machine RAM 32 GiB): ' +
          "memory was near the limit, but the machine's /proc/vmstat oom_kill count did not rise, " +
          'so the out-of-memory killer did not kill it and the cause is unknown.'
      );
      expect(e.details[0]).toBe(
        "The machine's /proc/vmstat oom_kill count stayed at 41 from the last figures to the restarted kernel's first."
      );
      expect(e.short).toBe(
        'The kernel (running [7]) died at RAM 30 GiB (512 MiB more available); the cause is unknown.'
      );
    });

    it('did not rise, far from the limit: the same, said with the limit', () => {
      const e = explainKernelDeath(
        facts({ lastSample: counted(roomy, 0), machineOomKillsAfter: 0 })
      );
      expect(e.verdict).toBe('unknown');
      expect(e.summary).toContain(
        "(machine RAM 32 GiB): memory was not near the limit, and the machine's /proc/vmstat oom_kill count did not rise, " +
          'so the out-of-memory killer did not kill it and the cause is unknown.'
      );
      expect(e.details[0]).toBe(
        "The machine's /proc/vmstat oom_kill count stayed at 0 from the last figures to the restarted kernel's first."
      );
    });

    it('unknown on either side, or lower after: explained as before, without the count', () => {
      const cases: KernelDeathFacts[] = [
        facts({ lastSample: counted(full, 41), machineOomKillsAfter: null }), // no count from the restarted kernel
        facts({ lastSample: counted(full, null), machineOomKillsAfter: 42 }), // none in the last sample
        facts({ lastSample: sample(full), machineOomKillsAfter: 42 }), // an older helper's last sample
        // A lower count after the death is impossible on one machine.
        facts({ lastSample: counted(full, 41), machineOomKillsAfter: 3 })
      ];
      for (const f of cases) {
        expect(machineOomKillsSince(f)).toBeNull();
        const e = explainKernelDeath(f);
        expect(e.verdict).toBe('near-limit');
        expect(e.summary).toContain(
          '(machine RAM 32 GiB): most likely the out-of-memory killer.'
        );
        expect(e.details.join(' ')).not.toContain('vmstat');
      }
      const far = explainKernelDeath(
        facts({ lastSample: counted(roomy, 41), machineOomKillsAfter: null })
      );
      expect(far.summary).toContain(
        ': memory was not near the limit, so the cause is unknown.'
      );
    });

    it("the container's own count, where known, decides first: it counts the kernel's cgroup alone", () => {
      const both = (count: number): SampleMessage =>
        sample({ ...CONTAINER_HOST, oom_kill_count: count });
      // The killer took another process on the machine, not one in this container.
      const notHere = explainKernelDeath(
        facts({
          lastSample: both(41),
          oomKillsAfter: 0,
          machineOomKillsAfter: 42
        })
      );
      expect(notHere.verdict).toBe('unknown');
      expect(notHere.summary).toContain(
        "memory was near the limit, but the container's memory.events oom_kill count did not rise, so the cause is unknown."
      );
      expect(notHere.details.join(' ')).not.toContain('vmstat');
      const here = explainKernelDeath(
        facts({
          lastSample: both(41),
          oomKillsAfter: 1,
          machineOomKillsAfter: 41
        })
      );
      expect(here.verdict).toBe('oom-killed');
      expect(here.details.join(' ')).not.toContain('vmstat');
      // For a container whose count is unknown (cgroup v1 before Linux
      // 4.13), the machine's count is used.
      const uncounted: HostMemory = {
        ...CONTAINER_HOST,
        container: { ...CONTAINER_HOST.container!, oom_kill_count: null },
        oom_kill_count: 41
      };
      const machineSays = explainKernelDeath(
        facts({ lastSample: sample(uncounted), machineOomKillsAfter: 41 })
      );
      expect(machineSays.verdict).toBe('unknown');
      expect(machineSays.summary).toContain(
        "(container limit 24 GiB): memory was near the limit, but the machine's /proc/vmstat oom_kill count did not rise"
      );
    });
  });

  it('keeps the notification text within what JupyterLab shows', () => {
    const counted = sample({
      ...machine(30 * GiB, 32 * GiB, 512 * MiB),
      oom_kill_count: 41
    });
    for (const f of [
      facts(),
      facts({ oomKillsAfter: 2 }),
      facts({ lastSample: null }),
      facts({ lastSample: counted, machineOomKillsAfter: 42 }),
      facts({ lastSample: counted, machineOomKillsAfter: 41 })
    ]) {
      expect(explainKernelDeath(f, 'decimal').short.length).toBeLessThanOrEqual(
        NOTIFICATION_CHARS
      );
    }
  });
});
