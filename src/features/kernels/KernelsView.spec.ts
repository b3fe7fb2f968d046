/**
 * Tests for KernelsView, the Kernels tab's view over every monitored session,
 * with one row per kernel.
 */
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { CommandIDs } from '../../ui/commandIds';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { KernelsView } from './KernelsView';
import {
  EVIL,
  GiB,
  makeGpu,
  makeHello,
  makeNvmlProcessSample,
  makeSample,
  MiB,
  wire
} from '../../testing/fixtures';
import { FakeSource } from '../../testing/kernelsTabFixtures';

function setupView() {
  const source = new FakeSource();
  const executed: [string, unknown][] = [];
  const view = new KernelsView({
    source,
    settings: DEFAULT_SETTINGS,
    execute: (command, args) => void executed.push([command, args])
  });
  Widget.attach(view, document.body);
  const render = () => MessageLoop.flush();
  const q = (selector: string) =>
    view.node.querySelector(selector) as HTMLElement | null;
  const all = (selector: string) =>
    Array.from(view.node.querySelectorAll(selector)) as HTMLElement[];
  return { source, view, executed, render, q, all };
}

describe('KernelsView', () => {
  it('says so when no kernel is monitored', () => {
    const t = setupView();
    t.render();
    expect(t.q('[data-vram-role="kernels-table"]')!.hidden).toBe(true);
    expect(t.q('[data-vram-role="kernels-empty"]')!.hidden).toBe(false);
    expect(
      t.q('[data-vram-role="gpu-processes-note"]')!.dataset.vramVisibility
    ).toBe('no-kernels');
    t.view.dispose();
  });

  it('renders one row per kernel with its figures', () => {
    const t = setupView();
    const a = t.source.add('kernel-aaaaaaaa-1111', 'work/a.ipynb');
    a.ingest(wire(makeHello()));
    a.ingest(
      wire(
        makeNvmlProcessSample([
          { pid: 4242, used_bytes: 2 * GiB, this_process: true }
        ])
      )
    );
    t.source.add(null, 'b.ipynb');
    t.render();

    const rows = t.all('[data-vram-role="kernel-row"]');
    expect(rows).toHaveLength(2);
    const row = t.q(
      '[data-vram-role="kernel-row"][data-vram-kernel-id="kernel-aaaaaaaa-1111"]'
    )!;
    expect(
      row.querySelector('[data-vram-role="kernel-notebook"]')!.textContent
    ).toBe('work/a.ipynb');
    expect(
      row.querySelector('[data-vram-role="kernel-name"]')!.textContent
    ).toBe('Python 3 (ipykernel) \u00b7 kernel-a');
    const state = row.querySelector(
      '[data-vram-role="kernel-state"]'
    ) as HTMLElement;
    expect(state.textContent).toBe('Live \u00b7 pid 4242');
    expect(state.dataset.vramState).toBe('live');
    const rss = row.querySelector(
      '[data-vram-role="kernel-host-rss"]'
    ) as HTMLElement;
    expect(rss.dataset.vramBytes).toBe(String(512 * MiB));
    expect(rss.textContent).toBe('512 MiB');
    const gpu = row.querySelector(
      '[data-vram-role="kernel-gpu-use"]'
    ) as HTMLElement;
    expect(gpu.dataset.vramGpu).toBe('0');
    expect(gpu.dataset.vramSource).toBe('nvml');
    expect(gpu.dataset.vramBytes).toBe(String(2 * GiB));
    expect(gpu.textContent).toBe('0: 2 GiB');

    // The notebook without a kernel has no kernel id and no shutdown button.
    expect(rows[1].dataset.vramKernelId).toBeUndefined();
    expect(
      rows[1].querySelector('[data-vram-role="kernel-state"]')!.textContent
    ).toBe('Not started');
    // "No kernel" is said once, in the kernel column, not in every column.
    expect(rows[1].textContent!.match(/No kernel/g)).toHaveLength(1);
    expect(
      (
        rows[1].querySelector(
          '[data-vram-role="kernel-shutdown"]'
        ) as HTMLButtonElement
      ).disabled
    ).toBe(true);
    t.view.dispose();
  });

  it('marks the figures of a kernel that died or was cut off as its last ones', () => {
    const t = setupView();
    const a = t.source.add('kernel-a', 'a.ipynb');
    a.ingest(wire(makeHello()));
    a.ingest(wire(makeSample()));
    t.render();
    const cells = () =>
      ['kernel-host-rss', 'kernel-gpu-use'].map(role =>
        t.q(`[data-vram-role="${role}"]`)!.closest('td')!
      );
    expect(cells().map(c => c.classList.contains('jp-mod-last'))).toEqual([
      false,
      false
    ]);
    a.setState('disconnected', 'The kernel is dead.');
    t.render();
    expect(
      cells().map(c => [c.classList.contains('jp-mod-last'), c.title])
    ).toEqual([
      [true, 'Last figures: The kernel is dead.'],
      [true, 'Last figures: The kernel is dead.']
    ]);
    t.view.dispose();
  });

  it('runs the shutdown command with the kernel id, keeping the button across samples', () => {
    const t = setupView();
    const a = t.source.add('kernel-a', 'a.ipynb');
    t.source.add('kernel-b', 'b.ipynb');
    a.ingest(wire(makeHello()));
    t.render();
    const button = t.q(
      '[data-vram-kernel-id="kernel-b"] [data-vram-role="kernel-shutdown"]'
    ) as HTMLButtonElement;
    expect(button.disabled).toBe(false);
    expect(button.getAttribute('aria-label')).toBe(
      'Shut down the kernel of b.ipynb'
    );
    a.ingest(wire(makeSample({ seq: 2 })));
    t.render();
    // The row is updated in place, so a click that started before the sample
    // still lands on the same button.
    expect(
      t.q('[data-vram-kernel-id="kernel-b"] [data-vram-role="kernel-shutdown"]')
    ).toBe(button);
    button.click();
    expect(t.executed).toEqual([
      [CommandIDs.shutdownKernel, { kernelId: 'kernel-b' }]
    ]);
    t.view.dispose();
  });

  it('updates the GPU figures in place from sample to sample', () => {
    const t = setupView();
    const a = t.source.add('kernel-a', 'a.ipynb');
    a.ingest(wire(makeHello()));
    t.render();
    const none = () =>
      t
        .all('[data-vram-role="kernel-row"] .jp-vram-Kernels-detail')
        .find(n => n.textContent === '\u2014' || n.textContent === 'no GPU')!;
    // There is no sample yet, so the figure is a dash.
    expect(none().textContent).toBe('\u2014');
    expect(none().hidden).toBe(false);
    a.ingest(wire(makeNvmlProcessSample(null)));
    t.render();
    const use = t.q('[data-vram-role="kernel-gpu-use"]')!;
    expect(use.dataset.vramBytes).toBe(String(2 * GiB));
    expect(none().hidden).toBe(true);
    a.ingest(
      wire(
        makeSample({
          seq: 2,
          gpus: [
            makeGpu({
              nvml: {
                used_bytes: GiB,
                total_bytes: 80 * GiB,
                process_used_bytes: 3 * GiB
              }
            })
          ]
        })
      )
    );
    t.render();
    expect(t.q('[data-vram-role="kernel-gpu-use"]')).toBe(use);
    expect(use.textContent).toBe('0: 3 GiB');
    expect(use.dataset.vramBytes).toBe(String(3 * GiB));
    a.ingest(wire(makeSample({ seq: 3, gpus: [] })));
    t.render();
    expect(t.all('[data-vram-role="kernel-gpu-use"]')).toHaveLength(0);
    expect(none().textContent).toBe('no GPU');
    expect(none().hidden).toBe(false);
    t.view.dispose();
  });

  it('says "no GPU" only where that is known, and shows a TensorFlow kernel\'s GPU use', () => {
    const t = setupView();
    const noNvml = makeHello({
      nvml: {
        available: false,
        driver_version: null,
        error: 'pynvml is not installed'
      },
      devices: [],
      torch: { version: '2.5.1', cuda_build: '12.4', cuda_initialized: false }
    });
    const a = t.source.add('kernel-a', 'a.ipynb');
    a.ingest(wire(noNvml));
    a.ingest(
      wire(
        makeSample({
          gpus: [],
          torch: { imported: true, cuda_initialized: false }
        })
      )
    );
    t.render();
    const none = t
      .all('[data-vram-role="kernel-row"] .jp-vram-Kernels-detail')
      .find(n => n.textContent === '\u2014' || n.textContent === 'no GPU')!;
    // On a GPU machine without pynvml, before CUDA starts, no GPU is listed,
    // but none is known to be absent either, so the cell shows a dash.
    expect(none.textContent).toBe('\u2014');
    expect(none.title).toContain('No GPU seen yet');
    // For a TensorFlow kernel whose process NVML cannot attribute, the row
    // shows TensorFlow's own figure, as the sidebar does.
    const b = t.source.add('kernel-b', 'b.ipynb');
    b.ingest(wire(makeHello()));
    b.ingest(
      wire(
        makeSample({
          gpus: [
            makeGpu({
              torch: null,
              nvml: {
                used_bytes: 10 * GiB,
                total_bytes: 80 * GiB,
                process_used_bytes: null
              },
              tensorflow: { current_bytes: 3 * GiB, peak_bytes: 4 * GiB }
            } as any)
          ]
        })
      )
    );
    t.render();
    const use = t
      .all('[data-vram-role="kernel-gpu-use"]')
      .find(n => n.dataset.vramSource === 'tensorflow')!;
    expect(use.dataset.vramBytes).toBe(String(3 * GiB));
    expect(use.title).toContain("TensorFlow's memory in use");
    t.view.dispose();
  });

  it('never says no GPU is visible while a kernel shows one', () => {
    // One kernel has NVML and sees no device, while another, without pynvml,
    // uses GPU 0 through PyTorch.
    const t = setupView();
    const a = t.source.add('kernel-a', 'a.ipynb');
    a.ingest(wire(makeHello({ devices: [] })));
    a.ingest(wire(makeSample({ gpus: [] })));
    const b = t.source.add('kernel-b', 'b.ipynb');
    b.ingest(
      wire(
        makeHello({
          nvml: {
            available: false,
            driver_version: null,
            error: 'pynvml is not installed'
          }
        })
      )
    );
    b.ingest(wire(makeSample({ gpus: [makeGpu({ nvml: null })] })));
    t.render();
    const note = t.q('[data-vram-role="gpu-processes-note"]')!;
    expect(note.dataset.vramVisibility).not.toBe('no-gpus');
    expect(note.textContent).not.toContain('No GPU is visible');
    t.view.dispose();
  });

  it('renders paths and NVML errors as text', () => {
    const t = setupView();
    const a = t.source.add('kernel-a', EVIL);
    a.ingest(
      wire(
        makeHello({
          nvml: { available: false, driver_version: null, error: EVIL }
        })
      )
    );
    a.ingest(wire(makeSample()));
    t.render();
    expect(t.view.node.querySelector('img')).toBeNull();
    expect(t.q('[data-vram-role="kernel-notebook"]')!.textContent).toBe(EVIL);
    const note = t.q('[data-vram-role="gpu-processes-note"]')!;
    expect(note.dataset.vramVisibility).toBe('nvml-unavailable');
    expect(note.textContent).toContain(
      `NVML is not available to these kernels (${EVIL})`
    );
    expect(t.q('[data-vram-role="gpu-processes-table"]')!.hidden).toBe(true);
    t.view.dispose();
  });

  it('lists other GPU processes, not the monitored kernels', () => {
    const t = setupView();
    const a = t.source.add('kernel-a', 'a.ipynb');
    const b = t.source.add('kernel-b', 'b.ipynb');
    a.ingest(wire(makeHello()));
    b.ingest(wire(makeHello({ pid: 5555 })));
    a.ingest(
      wire(
        makeNvmlProcessSample([
          { pid: 4242, used_bytes: 2 * GiB, this_process: true },
          { pid: 5555, used_bytes: GiB, this_process: false },
          { pid: 31337, used_bytes: 3 * GiB, this_process: false }
        ])
      )
    );
    t.render();
    const rows = t.all('[data-vram-role="gpu-process"]');
    expect(
      rows.map(r => [r.dataset.vramPid, r.dataset.vramGpu, r.dataset.vramBytes])
    ).toEqual([['31337', '0', String(3 * GiB)]]);
    expect(Array.from(rows[0].children, c => c.textContent)).toEqual([
      '31337',
      '0',
      '3 GiB'
    ]);
    expect(t.q('[data-vram-role="gpu-processes-table"]')!.hidden).toBe(false);
    expect(
      t.q('[data-vram-role="gpu-processes-note"]')!.dataset.vramVisibility
    ).toBe('listed');
    t.view.dispose();
  });

  it('follows sessions that come and go, and renders only when visible', () => {
    const t = setupView();
    t.render();
    t.view.hide();
    const a = t.source.add('kernel-a', 'a.ipynb');
    t.render();
    // The hidden view does not render, so its rows stay stale until shown.
    expect(t.all('[data-vram-role="kernel-row"]')).toHaveLength(0);
    t.view.show();
    t.render();
    expect(t.all('[data-vram-role="kernel-row"]')).toHaveLength(1);
    a.ingest(wire(makeHello({ pid: 99 })));
    t.render();
    expect(t.q('[data-vram-role="kernel-state"]')!.textContent).toBe(
      'Live \u00b7 pid 99'
    );
    t.source.entries = [];
    t.source.sessionsChanged.emit();
    t.render();
    expect(t.all('[data-vram-role="kernel-row"]')).toHaveLength(0);
    t.view.dispose();
  });
});
