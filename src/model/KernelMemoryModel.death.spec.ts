/**
 * Tests how KernelMemoryModel records a death, with the last figures, the
 * running cell and the evidence from the restarted kernel.
 */
import { KernelMemoryModel } from './KernelMemoryModel';
import { explainKernelDeath } from './kernelDeath';
import { HostMemory } from '../protocol/sample';
import { GiB, makeCpuSample, makeHello, MiB, wire } from '../testing/fixtures';
import { CONTAINER_HOST, machine } from '../testing/kernelDeathFixtures';

describe('KernelMemoryModel: a death', () => {
  function live(): KernelMemoryModel {
    const model = new KernelMemoryModel({ historyCapacity: 100 });
    model.ingest(wire(makeHello()));
    model.ingest(
      wire(
        makeCpuSample({
          seq: 1,
          time: 1000,
          host: { ...CONTAINER_HOST, rss_bytes: GiB }
        })
      )
    );
    model.ingest(
      wire(makeCpuSample({ seq: 2, time: 1001, host: CONTAINER_HOST }))
    );
    return model;
  }

  it('keeps the last figures and the running cell, and marks the history', () => {
    const model = live();
    const changes: string[] = [];
    model.changed.connect((_, c) => changes.push(c));
    // Found dead 5 s after its last sample came.
    model.noteKernelDeath(
      'autorestarting',
      { cellId: 'c', executionCount: 3, confirmed: true },
      Date.now() / 1000 + 5
    );
    expect(changes).toContain('death');
    const death = model.death!;
    expect(death.lastSample!.seq).toBe(2);
    expect(death.runningCell).toEqual({
      cellId: 'c',
      executionCount: 3,
      confirmed: true
    });
    expect(death.figuresAge).not.toBeNull();
    expect(model.history.marks).toHaveLength(1);
    expect(model.history.marks[0].kind).toBe('died');
    expect(model.history.marks[0].time).toBeGreaterThanOrEqual(1006);
    // The connection forgets the kernel: the last samples stay, their last
    // figures held until the death, then a gap.
    model.startKernelSession();
    expect(model.latest).toBeNull();
    const win = model.history.window(-Infinity);
    expect(Array.from(win.times)).toEqual([
      1000,
      1001,
      model.history.marks[0].time,
      model.history.marks[0].time
    ]);
    expect(Array.from(win.series.get('host.rss')!)).toEqual([
      GiB,
      CONTAINER_HOST.rss_bytes,
      CONTAINER_HOST.rss_bytes,
      NaN
    ]);
  });

  it("takes the restarted kernel's OOM kill count as evidence, once", () => {
    const model = live();
    model.noteKernelDeath('autorestarting', null);
    model.startKernelSession();
    model.ingest(wire(makeHello({ pid: 99 })));
    const after = (count: number, limit = 24 * GiB): HostMemory => ({
      ...CONTAINER_HOST,
      rss_bytes: 80 * MiB,
      container: {
        ...CONTAINER_HOST.container!,
        limit_bytes: limit,
        oom_kill_count: count
      }
    });
    model.ingest(wire(makeCpuSample({ seq: 1, time: 1010, host: after(1) })));
    expect(model.death!.oomKillsAfter).toBe(1);
    expect(explainKernelDeath(model.death!).verdict).toBe('oom-killed');
    model.ingest(wire(makeCpuSample({ seq: 2, time: 1011, host: after(5) })));
    expect(model.death!.oomKillsAfter).toBe(1); // the first sample only
  });

  it('ignores a count from another cgroup (another limit)', () => {
    const model = live();
    model.noteKernelDeath('autorestarting', null);
    model.startKernelSession();
    model.ingest(
      wire(
        makeCpuSample({
          seq: 1,
          time: 1010,
          host: {
            ...CONTAINER_HOST,
            container: {
              ...CONTAINER_HOST.container!,
              limit_bytes: GiB,
              oom_kill_count: 9
            }
          }
        })
      )
    );
    expect(model.death!.oomKillsAfter).toBeNull();
  });

  describe("the machine's OOM kill count of the restarted kernel's first sample", () => {
    /** A kernel on a 32 GiB machine (no container) whose /proc/vmstat says 41, dead near its RAM. */
    function died(hostname = 'node-1'): KernelMemoryModel {
      const model = new KernelMemoryModel({ historyCapacity: 100 });
      model.ingest(wire(makeHello({ hostname })));
      const host = {
        ...machine(30 * GiB, 32 * GiB, 512 * MiB),
        oom_kill_count: 41
      };
      model.ingest(wire(makeCpuSample({ seq: 1, time: 1000, host })));
      model.noteKernelDeath('autorestarting', null);
      model.startKernelSession();
      return model;
    }
    const first = (count: number | null, total = 32 * GiB): unknown =>
      wire(
        makeCpuSample({
          seq: 1,
          time: 1010,
          host: { ...machine(80 * MiB, total, 31 * GiB), oom_kill_count: count }
        })
      );

    it('keeps it from the same machine (same RAM, same hostname), the first sample only', () => {
      const model = died();
      model.ingest(wire(makeHello({ pid: 99, hostname: 'node-1' })));
      const changes: string[] = [];
      model.changed.connect((_, c) => changes.push(c));
      model.ingest(first(42));
      expect(changes).toContain('death');
      expect(model.death!.machineOomKillsAfter).toBe(42);
      expect(model.death!.oomKillsAfter).toBeNull();
      expect(explainKernelDeath(model.death!).summary).toContain(
        "as the machine's /proc/vmstat oom_kill count rose."
      );
      model.ingest(first(50));
      expect(model.death!.machineOomKillsAfter).toBe(42);
    });

    it('keeps a count that did not rise: the killer did not act', () => {
      const model = died();
      model.ingest(wire(makeHello({ pid: 99 })));
      model.ingest(first(41));
      expect(model.death!.machineOomKillsAfter).toBe(41);
      expect(explainKernelDeath(model.death!).verdict).toBe('unknown');
    });

    it('keeps it where the hostname is not known yet (a sample heard before the hello)', () => {
      const model = died();
      model.ingest(first(42)); // no hello on this page's comm yet
      expect(model.death!.machineOomKillsAfter).toBe(42);
    });

    it('ignores it from another machine: other RAM, or another hostname', () => {
      const otherRam = died();
      otherRam.ingest(wire(makeHello({ pid: 99 })));
      otherRam.ingest(first(42, 64 * GiB));
      expect(otherRam.death!.machineOomKillsAfter).toBeNull();
      expect(explainKernelDeath(otherRam.death!).summary).toContain(
        ': most likely the out-of-memory killer.'
      );
      const otherHost = died('node-1');
      otherHost.ingest(wire(makeHello({ pid: 99, hostname: 'node-2' })));
      otherHost.ingest(first(42));
      expect(otherHost.death!.machineOomKillsAfter).toBeNull();
    });

    it('ignores a lower count (the machine rebooted, or it is another) and an unknown one', () => {
      const lower = died();
      lower.ingest(wire(makeHello({ pid: 99 })));
      const changes: string[] = [];
      lower.changed.connect((_, c) => changes.push(c));
      lower.ingest(first(3));
      expect(lower.death!.machineOomKillsAfter).toBeNull();
      expect(changes).not.toContain('death'); // no evidence: nothing to render again
      const unknown = died();
      unknown.ingest(wire(makeHello({ pid: 99 })));
      unknown.ingest(first(null));
      expect(unknown.death!.machineOomKillsAfter).toBeNull();
    });

    it("keeps both counts where the container's is known too", () => {
      const model = new KernelMemoryModel({ historyCapacity: 100 });
      model.ingest(wire(makeHello()));
      model.ingest(
        wire(
          makeCpuSample({
            seq: 1,
            time: 1000,
            host: { ...CONTAINER_HOST, oom_kill_count: 41 }
          })
        )
      );
      model.noteKernelDeath('autorestarting', null);
      model.startKernelSession();
      model.ingest(wire(makeHello({ pid: 99 })));
      model.ingest(
        wire(
          makeCpuSample({
            seq: 1,
            time: 1010,
            host: { ...CONTAINER_HOST, oom_kill_count: 42 }
          })
        )
      );
      expect(model.death!.oomKillsAfter).toBe(0);
      expect(model.death!.machineOomKillsAfter).toBe(42);
      expect(explainKernelDeath(model.death!).verdict).toBe('unknown'); // the container's count says no
    });
  });

  it('a user restart clears the death; its mark stays on the timeline with the figures before it', () => {
    const model = live();
    model.noteKernelDeath('autorestarting', null);
    model.clearKernelDeath();
    expect(model.death).toBeNull();
    model.startKernelSession();
    expect(model.history.marks.map(m => m.kind)).toEqual(['died']);
    // The rows are the two samples, possibly the held figures repeated, and
    // the gap.
    expect(model.history.length).toBeGreaterThanOrEqual(3);
    expect(model.history.window(-Infinity).times[0]).toBe(1000);
    expect(Number.isNaN(model.history.latest('host.rss'))).toBe(true);
  });
});
