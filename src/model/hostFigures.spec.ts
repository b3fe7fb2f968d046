import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { KernelMemoryModel } from './KernelMemoryModel';
import { hostFigures } from './hostFigures';
import { swapFigures, swapRoomLeft } from './swapFigures';
import { HostMemory } from '../protocol/sample';
import { DEFAULT_SETTINGS } from '../settings/settings';
import {
  HostMemoryCard,
  limitTitle
} from '../features/overview/HostMemoryCard';
import { statusSummary } from '../features/overview/VramStatusItem';
import { GiB, makeCpuSample, makeSample, wire } from '../testing/fixtures';

const MACHINE: HostMemory = {
  rss_bytes: 3 * GiB,
  total_bytes: 256 * GiB,
  available_bytes: 200 * GiB,
  container: null
};

function inContainer(
  usage: number | null,
  limit = 4 * GiB,
  inactiveFile: number | null = 0
): HostMemory {
  return {
    ...MACHINE,
    container: {
      limit_bytes: limit,
      usage_bytes: usage,
      inactive_file_bytes: inactiveFile,
      oom_kill_count: 2,
      cgroup_version: 2
    }
  };
}

describe('hostFigures', () => {
  it("is the machine's RAM without a container limit", () => {
    const f = hostFigures(MACHINE);
    expect(f).toMatchObject({
      container: false,
      limit: 256 * GiB,
      available: 200 * GiB,
      used: 56 * GiB,
      others: 53 * GiB,
      oomKills: null
    });
    expect(f.usedPercent).toBeCloseTo(21.875);
  });

  it("is the container's limit when one is set", () => {
    const f = hostFigures(inContainer(3.5 * GiB));
    expect(f).toMatchObject({
      container: true,
      limit: 4 * GiB,
      available: 0.5 * GiB,
      used: 3.5 * GiB,
      others: 0.5 * GiB,
      oomKills: 2,
      machineTotal: 256 * GiB
    });
    expect(f.usedPercent).toBeCloseTo(87.5);
  });

  it('never shows more available than the machine has, nor a negative figure', () => {
    expect(
      hostFigures({ ...inContainer(GiB), available_bytes: GiB / 4 }).available
    ).toBe(GiB / 4);
    expect(hostFigures(inContainer(5 * GiB)).available).toBe(0);
  });

  it("counts the container's working set: the page cache it can reclaim is not in use", () => {
    // A dataset read: usage 3.5 GiB, of which 2.5 GiB inactive file cache; RSS 0.5 GiB.
    const small = (host: HostMemory) => ({ ...host, rss_bytes: GiB / 2 });
    const f = hostFigures(small(inContainer(3.5 * GiB, 4 * GiB, 2.5 * GiB)));
    expect(f.used).toBe(GiB);
    expect(f.available).toBe(3 * GiB);
    expect(f.usedPercent).toBeCloseTo(25);
    // Never below the kernel's own RSS, charged to the same cgroup.
    expect(
      hostFigures(small(inContainer(3.5 * GiB, 4 * GiB, 3.4 * GiB))).used
    ).toBe(GiB / 2);
    // An older helper sends no inactive_file: the usage as it is.
    expect(hostFigures(small(inContainer(3.5 * GiB, 4 * GiB, null))).used).toBe(
      3.5 * GiB
    );
  });

  it('keeps unknown as null', () => {
    const f = hostFigures(inContainer(null));
    expect(f.used).toBeNull();
    expect(f.others).toBeNull();
    // Not the machine's 200 GiB free: what is left under the limit is unknown.
    expect(f.available).toBeNull();
    expect(f.usedPercent).toBeCloseTo(75); // the kernel's own share, at least
    expect(hostFigures(null)).toMatchObject({
      limit: null,
      rss: null,
      usedPercent: null
    });
  });
});

describe('Host RAM card and status bar in a container', () => {
  function model(host: HostMemory): KernelMemoryModel {
    const m = new KernelMemoryModel({ historyCapacity: 10 });
    m.ingest(wire(makeCpuSample({ host })));
    return m;
  }

  function card(host: HostMemory): HostMemoryCard {
    const view = new HostMemoryCard(DEFAULT_SETTINGS);
    Widget.attach(view, document.body);
    view.model = model(host);
    MessageLoop.flush();
    return view;
  }

  function role(view: Widget, name: string): HTMLElement {
    return view.node.querySelector(`[data-vram-role="${name}"]`) as HTMLElement;
  }

  it('shows the container limit and the kernel share of it, and warns near it', () => {
    const view = card(inContainer(3.8 * GiB));
    expect(role(view, 'host-container-limit').dataset.vramBytes).toBe(
      String(4 * GiB)
    );
    expect(role(view, 'host-container-limit').parentElement!.hidden).toBe(
      false
    );
    expect(view.node.querySelector('.jp-vram-Card-subtitle')!.textContent).toBe(
      'kernel 75% of container limit'
    );
    expect(role(view, 'host-available').dataset.vramBytes).toBe(
      String(Math.round(0.2 * GiB))
    );
    expect(role(view, 'host-total').dataset.vramBytes).toBe(String(256 * GiB));
    expect(view.node.classList.contains('jp-vram-warning')).toBe(true);
    view.dispose();
  });

  it('hides the limit row without a container, and does not warn about the machine', () => {
    const view = card({ ...MACHINE, available_bytes: GiB });
    expect(role(view, 'host-container-limit').parentElement!.hidden).toBe(true);
    expect(view.node.querySelector('.jp-vram-Card-subtitle')!.textContent).toBe(
      'kernel 1% of total'
    );
    expect(view.node.classList.contains('jp-vram-warning')).toBe(false);
    view.dispose();
  });

  it('status bar: RAM of the container limit, warning past the threshold', () => {
    const near = statusSummary(model(inContainer(3.8 * GiB)), DEFAULT_SETTINGS);
    expect(near.text).toBe('RAM 3/4 GiB');
    expect(near.warning).toBe(true);
    expect(near.title).toContain('Container: 3.8 GiB of its 4 GiB limit');
    const far = statusSummary(
      model(inContainer(GiB, 64 * GiB)),
      DEFAULT_SETTINGS
    );
    expect(far.warning).toBe(false);
    const gpu = new KernelMemoryModel({ historyCapacity: 10 });
    gpu.ingest(wire(makeSample({ host: inContainer(3.9 * GiB) })));
    expect(statusSummary(gpu, DEFAULT_SETTINGS).warning).toBe(true);
  });
});

/** The machine's swap: 8 GiB, 6 GiB free; the kernel has `swapped` of its own in it. */
function swapping(
  host: HostMemory,
  swapped: number | null = 1.2 * GiB
): HostMemory {
  return {
    ...host,
    swapped_bytes: swapped,
    swap_total_bytes: 8 * GiB,
    swap_free_bytes: 6 * GiB
  };
}

function withContainerSwap(
  host: HostMemory,
  limit: number | null,
  usage: number | null
): HostMemory {
  return {
    ...host,
    container: {
      ...host.container!,
      swap_limit_bytes: limit,
      swap_usage_bytes: usage
    }
  };
}

describe('swapFigures', () => {
  it("is the machine's swap without a cgroup swap limit", () => {
    expect(swapFigures(swapping(MACHINE))).toEqual({
      kernelSwapped: 1.2 * GiB,
      container: false,
      limit: 8 * GiB,
      used: 2 * GiB,
      free: 6 * GiB,
      usedPercent: 25
    });
    // A container whose cgroup sets no swap limit ("max"): the machine's swap is the bound.
    expect(
      swapFigures(withContainerSwap(swapping(inContainer(GiB)), null, GiB))
    ).toMatchObject({
      container: false,
      limit: 8 * GiB,
      free: 6 * GiB
    });
  });

  it("is the container's swap limit when one is set, never more than the machine has", () => {
    const host = withContainerSwap(
      swapping(inContainer(3 * GiB)),
      2 * GiB,
      0.5 * GiB
    );
    expect(swapFigures(host)).toMatchObject({
      container: true,
      limit: 2 * GiB,
      used: 0.5 * GiB,
      free: 1.5 * GiB
    });
    expect(swapFigures(host).usedPercent).toBeCloseTo(25);
    // A limit above the machine's swap: the machine's 8 GiB bound it; its free 6 GiB too.
    expect(
      swapFigures(
        withContainerSwap(swapping(inContainer(3 * GiB)), 64 * GiB, GiB)
      )
    ).toMatchObject({
      limit: 8 * GiB,
      free: 6 * GiB
    });
    // Swap limit 0 (memory.swap.max 0, memsw = the memory limit): the kernel cannot swap.
    expect(
      swapFigures(withContainerSwap(swapping(inContainer(3 * GiB)), 0, null))
    ).toMatchObject({
      container: true,
      limit: 0,
      free: 0
    });
  });

  it('keeps unknown as null: a sample of an older helper has no swap figures', () => {
    // MACHINE and inContainer() are hosts as older helpers send them: no swap fields at all.
    for (const host of [MACHINE, inContainer(GiB), null]) {
      expect(swapFigures(host)).toEqual({
        kernelSwapped: null,
        container: false,
        limit: null,
        used: null,
        free: null,
        usedPercent: null
      });
    }
    expect(
      swapFigures(withContainerSwap(swapping(inContainer(GiB)), 2 * GiB, null))
    ).toMatchObject({
      limit: 2 * GiB,
      used: null,
      free: null
    });
    // No swap on the machine is 0, not unknown.
    const none = {
      ...MACHINE,
      swapped_bytes: 0,
      swap_total_bytes: 0,
      swap_free_bytes: 0
    };
    expect(swapFigures(none)).toMatchObject({
      kernelSwapped: 0,
      limit: 0,
      used: 0,
      free: 0,
      usedPercent: null
    });
  });

  it('says whether swap has room left', () => {
    expect(swapRoomLeft(swapFigures(swapping(MACHINE)), 10)).toBe(true);
    const full = { ...swapping(MACHINE), swap_free_bytes: 0.5 * GiB };
    expect(swapRoomLeft(swapFigures(full), 10)).toBe(false);
    expect(swapRoomLeft(swapFigures(MACHINE), 10)).toBe(false); // unknown
    expect(
      swapRoomLeft(
        swapFigures(withContainerSwap(swapping(inContainer(GiB)), 0, 0)),
        10
      )
    ).toBe(false);
  });
});

describe('Host RAM card: swap', () => {
  function card(host: HostMemory): HostMemoryCard {
    const m = new KernelMemoryModel({ historyCapacity: 10 });
    m.ingest(wire(makeCpuSample({ host })));
    const view = new HostMemoryCard(DEFAULT_SETTINGS);
    Widget.attach(view, document.body);
    view.model = m;
    MessageLoop.flush();
    return view;
  }

  function role(view: Widget, name: string): HTMLElement {
    return view.node.querySelector(`[data-vram-role="${name}"]`) as HTMLElement;
  }

  function row(view: Widget, name: string): HTMLElement {
    return role(view, name).parentElement!;
  }

  it('says how much of the kernel is swapped out, and that cells touching it run slowly', () => {
    const view = card(swapping(MACHINE));
    expect(row(view, 'host-swapped').hidden).toBe(false);
    expect(row(view, 'host-swapped').textContent).toBe(
      'Swapped out1.2 GiB of this kernel'
    );
    expect(role(view, 'host-swapped').dataset.vramBytes).toBe(
      String(Math.round(1.2 * GiB))
    );
    expect(role(view, 'host-swap-note').hidden).toBe(false);
    expect(role(view, 'host-swap-note').textContent).toBe(
      'Cells that touch swapped-out memory run slowly: it is read back from swap first.'
    );
    expect(row(view, 'host-swap').hidden).toBe(false);
    expect(row(view, 'host-swap').textContent).toBe(
      'Swap2/8 GiB in use (machine)'
    );
    view.dispose();
  });

  it('says nothing of swapped-out memory when none is, nor of swap where there is none', () => {
    for (const host of [
      swapping(MACHINE, 0),
      { ...MACHINE, swapped_bytes: 0, swap_total_bytes: 0, swap_free_bytes: 0 },
      MACHINE // an older helper: unknown
    ]) {
      const view = card(host);
      expect(row(view, 'host-swapped').hidden).toBe(true);
      expect(role(view, 'host-swap-note').hidden).toBe(true);
      expect(row(view, 'host-swap').hidden).toBe(
        host.swap_total_bytes !== 8 * GiB
      );
      view.dispose();
    }
  });

  it("shows the container's swap against its swap limit", () => {
    const view = card(
      withContainerSwap(swapping(inContainer(3.9 * GiB)), 2 * GiB, 0.5 * GiB)
    );
    expect(row(view, 'host-swap').textContent).toBe(
      'Container swap0.5/2 GiB in use'
    );
    expect(role(view, 'host-swap').dataset.vramBytes).toBe(String(0.5 * GiB));
    view.dispose();
  });

  it('does not claim the kernel dies at the container limit where it can swap', () => {
    const limitRow = (host: HostMemory) => {
      const view = card(host);
      const title = row(view, 'host-container-limit').title;
      view.dispose();
      return title;
    };
    expect(
      limitRow(
        withContainerSwap(swapping(inContainer(3.9 * GiB)), 2 * GiB, 0.5 * GiB)
      )
    ).toBe(
      "The kernel's cgroup memory limit: past it, the kernel's memory goes to swap (1.5 GiB free), " +
        'and the kernel is killed once that is full too'
    );
    expect(
      limitRow(withContainerSwap(swapping(inContainer(3.9 * GiB)), 0, 0))
    ).toBe(
      "The kernel's cgroup memory limit: the kernel is killed there (it cannot swap)"
    );
    // An older helper: whether it could swap is unknown, and said so.
    expect(limitRow(inContainer(3.9 * GiB))).toBe(
      "The kernel's cgroup memory limit: the kernel is killed there, or, where it can swap, once its swap is full too"
    );
    expect(
      limitTitle(
        swapFigures(
          withContainerSwap(swapping(inContainer(GiB)), 2 * GiB, null)
        ),
        'binary'
      )
    ).toBe(
      "The kernel's cgroup memory limit: past it, the kernel's memory goes to swap, and the kernel is killed once that is full too"
    );
  });
});
