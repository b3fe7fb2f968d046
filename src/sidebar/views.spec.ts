import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { DEFAULT_SETTINGS } from '../settings/settings';
import {
  addEveryFeature,
  FullSidebar,
  loadFullSidebar
} from '../testing/sidebarFixtures';
import { SIDEBAR_ID, SidebarHost } from './SidebarHost';
import {
  statusSummary,
  VramStatusItem
} from '../features/overview/VramStatusItem';
import {
  EVIL,
  FakeMonitor,
  GiB,
  makeCpuSample,
  makeGpu,
  makeHello,
  makeSample,
  MiB,
  wire
} from '../testing/fixtures';

function q(root: HTMLElement, selector: string): HTMLElement {
  const node = root.querySelector(selector) as HTMLElement | null;
  if (!node) {
    throw new Error(`no ${selector}`);
  }
  return node;
}

describe('SidebarHost', () => {
  it('is the stable sidebar tab, and loads the memory panel only when first shown', async () => {
    const monitor = new FakeMonitor();
    const host = new SidebarHost();
    addEveryFeature(host, { monitor });
    expect(host.id).toBe(SIDEBAR_ID);
    expect(host.title.caption).toBe('GPU memory');
    // A command picks a tab before the panel exists.
    host.showTab('cells');
    host.hide();
    Widget.attach(host, document.body);
    MessageLoop.flush();
    // The host is attached but hidden, so nothing is loaded.
    expect(host.content).toBeNull();
    host.show();
    const content = await host.load();
    expect(host.content).toBe(content);
    expect(content.parent).toBe(host);
    expect(content.tab).toBe('cells');
    host.showTab('holders');
    expect(content.tab).toBe('holders');
    // There is one panel, however often it is shown.
    expect(await host.load()).toBe(content);
    host.dispose();
    expect(content.isDisposed).toBe(true);
  });
});

describe('MemorySidebar', () => {
  let monitor: FakeMonitor;
  let sidebar: FullSidebar;
  let model: KernelMemoryModel;

  beforeEach(async () => {
    monitor = new FakeMonitor();
    sidebar = await loadFullSidebar({ monitor });
    model = new KernelMemoryModel({ historyCapacity: 100 });
  });

  afterEach(() => {
    sidebar.dispose();
  });

  it('says to open a notebook', () => {
    MessageLoop.flush();
    const state = q(sidebar.node, '[data-vram-role="state"]');
    expect(state.dataset.vramState).toBe('no-notebook');
    expect(state.textContent).toContain('Open a notebook');
    expect(
      sidebar.node.querySelector('[data-vram-role="timeline"]')
    ).not.toBeNull();
  });

  it('renders state, GPU and host figures with exact byte attributes', () => {
    monitor.setCurrent(model);
    model.ingest(wire(makeHello()));
    model.ingest(wire(makeSample()));
    MessageLoop.flush();
    const root = sidebar.node;
    expect(q(root, '[data-vram-role="state"]').dataset.vramState).toBe('live');
    const rss = q(root, '[data-vram-role="host-rss"]');
    expect(rss.dataset.vramBytes).toBe(String(512 * MiB));
    expect(rss.textContent).toBe('512 MiB');
    expect(q(root, '[data-vram-role="host-total"]').dataset.vramBytes).toBe(
      String(64 * GiB)
    );
    expect(q(root, '[data-vram-role="host-available"]').textContent).toBe(
      '40 GiB'
    );

    const card = q(root, '[data-vram-role="gpu-card"][data-vram-device="0"]');
    expect(q(card, '[data-vram-role="gpu-allocated"]').dataset.vramBytes).toBe(
      String(1 * GiB)
    );
    expect(q(card, '[data-vram-role="gpu-reserved"]').textContent).toBe(
      '2 GiB'
    );
    expect(q(card, '[data-vram-role="gpu-free"]').dataset.vramBytes).toBe(
      String(70 * GiB)
    );
    expect(q(card, '[data-vram-role="gpu-total"]').dataset.vramBytes).toBe(
      String(80 * GiB)
    );
    expect(q(card, '[data-vram-role="gpu-peak"]').dataset.vramBytes).toBe(
      String(3 * GiB)
    );
    expect(q(card, '[data-vram-role="gpu-other-processes"]').textContent).toBe(
      '7.5 GiB'
    );
    expect(q(card, '[data-vram-role="gpu-name"]').textContent).toBe(
      'GPU 0: NVIDIA H100 80GB HBM3'
    );
  });

  it('leaves data-vram-bytes off unknown figures', () => {
    monitor.setCurrent(model);
    model.ingest(
      wire(makeSample({ gpus: [makeGpu({ torch: null, nvml: null })] }))
    );
    MessageLoop.flush();
    const card = q(sidebar.node, '[data-vram-role="gpu-card"]');
    const allocated = q(card, '[data-vram-role="gpu-allocated"]');
    expect(allocated.hasAttribute('data-vram-bytes')).toBe(false);
    expect(allocated.textContent).toBe('\u2014');
    expect(
      q(card, '[data-vram-role="gpu-free"]').hasAttribute('data-vram-bytes')
    ).toBe(false);
    expect(
      q(card, '[data-vram-role="gpu-total"]').hasAttribute('data-vram-bytes')
    ).toBe(true);
  });

  it('renders kernel text as text, never as HTML', () => {
    monitor.setCurrent(model);
    model.ingest(
      wire(
        makeHello({
          hostname: EVIL,
          nvml: { available: false, driver_version: null, error: EVIL }
        })
      )
    );
    model.ingest(
      wire(makeSample({ gpus: [makeGpu({ name: EVIL, nvml: null })] }))
    );
    model.ingest({
      type: 'error',
      request_id: null,
      code: 'internal',
      message: EVIL
    });
    MessageLoop.flush();
    const root = sidebar.node;
    expect(root.querySelector('img')).toBeNull();
    expect(q(root, '[data-vram-role="gpu-name"]').textContent).toBe(
      `GPU 0: ${EVIL}`
    );
    expect(q(root, '[data-vram-role="state"]').textContent).toContain(EVIL);
    const notes = Array.from(
      root.querySelectorAll('[data-vram-role="note"]')
    ).map(n => n.textContent);
    expect(notes.filter(t => t!.includes(EVIL))).toHaveLength(2);
  });

  it('shows the language of a non-Python kernel as text', () => {
    monitor.setCurrent(model);
    model.setState('non-python', `This notebook's kernel runs ${EVIL}`);
    MessageLoop.flush();
    const state = q(sidebar.node, '[data-vram-role="state"]');
    expect(state.dataset.vramState).toBe('non-python');
    expect(state.textContent).toContain(EVIL);
    expect(sidebar.node.querySelector('img')).toBeNull();
  });

  it('shows visibility notes with their ids and no GPU card without GPUs', () => {
    monitor.setCurrent(model);
    model.ingest(wire(makeHello({ torch: null, devices: [] })));
    model.ingest(wire(makeCpuSample()));
    MessageLoop.flush();
    const ids = Array.from(
      sidebar.node.querySelectorAll<HTMLElement>('[data-vram-role="note"]')
    ).map(n => n.dataset.vramNote);
    expect(ids).toEqual(['no-gpu', 'torch-not-imported']);
    expect(
      sidebar.node.querySelector('[data-vram-role="gpu-card"]')
    ).toBeNull();
  });

  it('shows the busy marker only while the kernel is busy', () => {
    monitor.setCurrent(model);
    model.ingest(wire(makeHello()));
    MessageLoop.flush();
    const busy = q(sidebar.node, '[data-vram-role="kernel-busy"]');
    expect(busy.hidden).toBe(true);
    model.setKernelBusy(true);
    MessageLoop.flush();
    expect(busy.hidden).toBe(false);
    expect(busy.textContent).toContain('still live');
    model.setKernelBusy(false);
    MessageLoop.flush();
    expect(busy.hidden).toBe(true);
  });

  it('says what keeps the kernel busy before the helper is live: the helper starting, or a running cell', () => {
    monitor.setCurrent(model);
    model.setState(
      'bootstrapping',
      'Starting the memory helper in the kernel\u2026'
    );
    // After a restart no cell runs; the kernel runs the helper that this
    // page sent it.
    model.setKernelBusy(true, 'helper');
    MessageLoop.flush();
    const busy = q(sidebar.node, '[data-vram-role="kernel-busy"]');
    expect(busy.hidden).toBe(false);
    expect(busy.textContent).toBe(
      'Kernel busy starting the memory helper \u2014 requests wait until it is running.'
    );
    expect(busy.textContent).not.toContain('cell');
    // A cell queued behind it runs next.
    model.setKernelBusy(true, 'cell');
    MessageLoop.flush();
    expect(busy.textContent).toBe(
      'Kernel busy \u2014 requests wait until the running cell finishes.'
    );
  });

  it('renders nothing while hidden and catches up when shown', () => {
    monitor.setCurrent(model);
    MessageLoop.flush();
    sidebar.hide();
    model.ingest(wire(makeSample()));
    MessageLoop.flush();
    const rss = q(sidebar.node, '[data-vram-role="host-rss"]');
    expect(rss.hasAttribute('data-vram-bytes')).toBe(false);
    sidebar.show();
    MessageLoop.flush();
    expect(rss.dataset.vramBytes).toBe(String(512 * MiB));
  });

  it('adds and removes GPU cards as devices come and go', () => {
    monitor.setCurrent(model);
    model.ingest(
      wire(makeSample({ gpus: [makeGpu(), makeGpu({ index: 1 })] }))
    );
    MessageLoop.flush();
    const cards = () =>
      Array.from(
        sidebar.node.querySelectorAll<HTMLElement>(
          '[data-vram-role="gpu-card"]'
        )
      ).map(c => c.dataset.vramDevice);
    expect(cards()).toEqual(['0', '1']);
    model.ingest(wire(makeSample({ seq: 2, gpus: [makeGpu({ index: 1 })] })));
    MessageLoop.flush();
    expect(cards()).toEqual(['1']);
  });

  it('follows settings: units and warning threshold', () => {
    monitor.setCurrent(model);
    model.ingest(wire(makeSample()));
    MessageLoop.flush();
    monitor.setSettings({
      ...DEFAULT_SETTINGS,
      units: 'decimal',
      warningThresholdPercent: 10
    });
    MessageLoop.flush();
    expect(q(sidebar.node, '[data-vram-role="host-rss"]').textContent).toBe(
      '537 MB'
    );
    expect(
      q(sidebar.node, '[data-vram-role="gpu-card"]').classList.contains(
        'jp-vram-warning'
      )
    ).toBe(true);
  });

  it('keeps the timeline to its window', () => {
    model = new KernelMemoryModel({ historyCapacity: 800 });
    monitor.setCurrent(model);
    for (let t = 0; t < 1000; t++) {
      model.ingest(wire(makeSample({ seq: t, time: t })));
    }
    MessageLoop.flush();
    // The default window shows 5 minutes of 1 Hz samples, whatever the
    // history holds.
    expect(sidebar.timeline.pointCount).toBe(301);
    expect(sidebar.timeline.shownRange).toEqual([699, 999]);
    expect(model.history.length).toBe(800);
  });

  it('spans the history when it is shorter than the window, 30 s at least', () => {
    model = new KernelMemoryModel({ historyCapacity: 800 });
    monitor.setCurrent(model);
    for (const t of [1000, 1010]) {
      model.ingest(wire(makeSample({ seq: t, time: t })));
    }
    MessageLoop.flush();
    expect(sidebar.timeline.shownRange).toEqual([980, 1010]);
    model.ingest(wire(makeSample({ seq: 2, time: 1100 })));
    MessageLoop.flush();
    expect(sidebar.timeline.shownRange).toEqual([1000, 1100]);
  });
});

describe('MemorySidebar: keyboard and assistive technology', () => {
  const key = (node: HTMLElement, k: string) =>
    node.dispatchEvent(
      new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true })
    );

  it('moves between tabs with the arrow keys, Home and End, focus following', async () => {
    const sidebar = await loadFullSidebar({ monitor: new FakeMonitor() });
    const tab = (name: string) =>
      q(sidebar.node, `[data-vram-role="${name}-tab"]`);
    tab('memory').focus();
    key(tab('memory'), 'ArrowRight');
    expect(sidebar.tab).toBe('cells');
    expect(document.activeElement).toBe(tab('cells'));
    expect(tab('cells').tabIndex).toBe(0);
    expect(tab('memory').tabIndex).toBe(-1);
    key(tab('cells'), 'End');
    expect(sidebar.tab).toBe('kernels');
    // The arrow key wraps round to the first tab.
    key(tab('kernels'), 'ArrowRight');
    expect(sidebar.tab).toBe('memory');
    key(tab('memory'), 'ArrowLeft');
    expect(sidebar.tab).toBe('kernels');
    key(tab('kernels'), 'Home');
    expect(sidebar.tab).toBe('memory');
    expect(document.activeElement).toBe(tab('memory'));
    sidebar.dispose();
  });

  it('links each tab to the panels it shows', async () => {
    const sidebar = await loadFullSidebar({ monitor: new FakeMonitor() });
    const cellsTab = q(sidebar.node, '[data-vram-role="cells-tab"]');
    expect(cellsTab.getAttribute('aria-controls')).toBe(sidebar.cells.id);
    expect(sidebar.cells.node.getAttribute('role')).toBe('tabpanel');
    expect(sidebar.cells.node.getAttribute('aria-labelledby')).toBe(
      cellsTab.id
    );
    const memoryTab = q(sidebar.node, '[data-vram-role="memory-tab"]');
    const controlled = memoryTab.getAttribute('aria-controls')!.split(' ');
    expect(controlled).toContain(sidebar.timeline.id);
    expect(controlled).toContain(sidebar.death.id);
    expect(sidebar.timeline.node.getAttribute('role')).toBe('tabpanel');
    // The death notice stays a live region.
    expect(sidebar.death.node.getAttribute('role')).toBe('status');
    sidebar.dispose();
  });

  it('announces a change of state politely', async () => {
    const sidebar = await loadFullSidebar({ monitor: new FakeMonitor() });
    const state = q(sidebar.node, '[data-vram-role="state"]');
    expect(state.getAttribute('role')).toBe('status');
    expect(state.getAttribute('aria-live')).toBe('polite');
    sidebar.dispose();
  });
});

describe('VramStatusItem', () => {
  it('is a button for the keyboard: focusable, Enter or Space opens the panel', () => {
    const onClick = jest.fn();
    const item = new VramStatusItem({ monitor: new FakeMonitor(), onClick });
    Widget.attach(item, document.body);
    expect(item.node.getAttribute('role')).toBe('button');
    expect(item.node.tabIndex).toBe(0);
    item.node.dispatchEvent(
      new KeyboardEvent('keydown', { key: 'Enter', bubbles: true })
    );
    item.node.dispatchEvent(
      new KeyboardEvent('keydown', { key: ' ', bubbles: true })
    );
    item.node.click();
    expect(onClick).toHaveBeenCalledTimes(3);
    item.dispose();
  });

  it('shows the kernel GPU use against the total, with a warning class', () => {
    const monitor = new FakeMonitor();
    const item = new VramStatusItem({ monitor });
    Widget.attach(item, document.body);
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    monitor.setCurrent(model);
    model.ingest(wire(makeSample()));
    MessageLoop.flush();
    expect(item.node.dataset.vramRole).toBe('status-item');
    expect(item.node.textContent).toBe('GPU 2.5/80 GiB');
    expect(item.node.classList.contains('jp-vram-warning')).toBe(false);
    monitor.setSettings({ ...DEFAULT_SETTINGS, warningThresholdPercent: 10 });
    MessageLoop.flush();
    expect(item.node.classList.contains('jp-vram-warning')).toBe(true);
    item.dispose();
  });

  it('falls back to RAM without GPU figures', () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeCpuSample()));
    expect(statusSummary(model, DEFAULT_SETTINGS).text).toBe('RAM 512 MiB');
    const noTorch = new KernelMemoryModel({ historyCapacity: 10 });
    noTorch.ingest(
      wire(makeSample({ gpus: [makeGpu({ torch: null, nvml: null })] }))
    );
    expect(statusSummary(noTorch, DEFAULT_SETTINGS).text).toBe('RAM 512 MiB');
  });

  it('sums several GPUs', () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(
      wire(makeSample({ gpus: [makeGpu(), makeGpu({ index: 1 })] }))
    );
    expect(statusSummary(model, DEFAULT_SETTINGS).text).toBe(
      'GPU\u00d72 5/160 GiB'
    );
  });

  it('marks the figures of a kernel that is gone or cut off as its last ones', () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeSample()));
    expect(statusSummary(model, DEFAULT_SETTINGS).text).toBe('GPU 2.5/80 GiB');
    model.setState('disconnected', 'The kernel is dead.');
    const gone = statusSummary(model, DEFAULT_SETTINGS);
    expect(gone.text).toBe('last GPU 2.5/80 GiB');
    expect(gone.title.split('\n').slice(0, 2)).toEqual([
      'The kernel is dead.',
      'Last figures:'
    ]);
  });

  it('is empty without a notebook and a dash before samples', () => {
    expect(statusSummary(null, DEFAULT_SETTINGS).text).toBe('');
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    expect(statusSummary(model, DEFAULT_SETTINGS).text).toBe('GPU \u2014');
  });
});
