import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { hostFigures } from '../model/hostFigures';
import { HostMemory } from '../sampleProtocol';
import { DEFAULT_SETTINGS } from '../settings';
import { HostMemoryCard } from '../views/HostMemoryCard';
import { statusSummary } from '../views/VramStatusItem';
import { GiB, makeCpuSample, makeSample, wire } from './fixtures';

const MACHINE: HostMemory = {
  rss_bytes: 3 * GiB,
  total_bytes: 256 * GiB,
  available_bytes: 200 * GiB,
  container: null
};

function inContainer(usage: number | null, limit = 4 * GiB, inactiveFile: number | null = 0): HostMemory {
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
    expect(hostFigures({ ...inContainer(GiB), available_bytes: GiB / 4 }).available).toBe(GiB / 4);
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
    expect(hostFigures(small(inContainer(3.5 * GiB, 4 * GiB, 3.4 * GiB))).used).toBe(GiB / 2);
    // An older helper sends no inactive_file: the usage as it is.
    expect(hostFigures(small(inContainer(3.5 * GiB, 4 * GiB, null))).used).toBe(3.5 * GiB);
  });

  it('keeps unknown as null', () => {
    const f = hostFigures(inContainer(null));
    expect(f.used).toBeNull();
    expect(f.others).toBeNull();
    // Not the machine's 200 GiB free: what is left under the limit is unknown.
    expect(f.available).toBeNull();
    expect(f.usedPercent).toBeCloseTo(75); // the kernel's own share, at least
    expect(hostFigures(null)).toMatchObject({ limit: null, rss: null, usedPercent: null });
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
    expect(role(view, 'host-container-limit').dataset.vramBytes).toBe(String(4 * GiB));
    expect(role(view, 'host-container-limit').parentElement!.hidden).toBe(false);
    expect(view.node.querySelector('.jp-vram-Card-subtitle')!.textContent).toBe(
      'kernel 75% of container limit'
    );
    expect(role(view, 'host-available').dataset.vramBytes).toBe(String(Math.round(0.2 * GiB)));
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
    const far = statusSummary(model(inContainer(GiB, 64 * GiB)), DEFAULT_SETTINGS);
    expect(far.warning).toBe(false);
    const gpu = new KernelMemoryModel({ historyCapacity: 10 });
    gpu.ingest(wire(makeSample({ host: inContainer(3.9 * GiB) })));
    expect(statusSummary(gpu, DEFAULT_SETTINGS).warning).toBe(true);
  });
});
