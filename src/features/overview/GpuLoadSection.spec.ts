/**
 * Tests for the GPU card's load rows (GpuLoadSection), in which each
 * unavailable figure says why it is unavailable.
 */
import { GpuDeviceCard } from './GpuDeviceCard';
import { GpuLoadSection } from './GpuLoadSection';
import { gpuFigures } from '../../model/gpuFigures';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { EVIL, makeGpu } from '../../testing/fixtures';
import { makeGpuLoad } from '../../testing/loadFixtures';

function value(section: { node: HTMLElement }, figure: string): HTMLElement {
  return section.node.querySelector<HTMLElement>(
    `[data-vram-role="gpu-load-${figure}"]`
  )!;
}

describe('GpuLoadSection', () => {
  it('shows every figure of a busy card', () => {
    const section = new GpuLoadSection();
    section.render(makeGpuLoad());
    expect(section.node.hidden).toBe(false);
    expect(value(section, 'sm').textContent).toBe('97%');
    expect(value(section, 'sm').dataset.vramValue).toBe('97');
    expect(value(section, 'bandwidth').textContent).toBe('61%');
    expect(value(section, 'power').textContent).toBe('612 W of 700 W (87%)');
    expect(value(section, 'temperature').textContent).toBe('71 \u00b0C');
    expect(value(section, 'clocks').textContent).toBe(
      'SM 1755 MHz · memory 2619 MHz'
    );
    expect(value(section, 'throttle').textContent).toBe('power cap');
    expect(value(section, 'throttle').classList).toContain('jp-vram-warning');
    expect(value(section, 'share').textContent).toBe(
      'SM 96%; other processes 3%'
    );
    expect(value(section, 'share').parentElement!.title).toMatch(
      /pid 4242 \(this kernel\): SM 96%, memory 60%\npid 5151: SM 3%/
    );
  });

  it('says why a figure is unavailable and leaves the others be', () => {
    const section = new GpuLoadSection();
    section.render(
      makeGpuLoad({
        sm_percent: null,
        temperature_c: null,
        unavailable: {
          sm_percent: 'no_permission',
          temperature_c: 'gpu_lost',
          pcie_tx_kb_per_s: 'not_read_yet',
          pcie_rx_kb_per_s: 'not_read_yet'
        }
      })
    );
    expect(value(section, 'sm').textContent).toBe(
      'unavailable: no permission to read it'
    );
    expect(value(section, 'sm').dataset.vramUnavailable).toBe('no_permission');
    expect(value(section, 'sm').dataset.vramValue).toBeUndefined();
    expect(value(section, 'temperature').textContent).toBe(
      'unavailable: the GPU is lost'
    );
    expect(value(section, 'pcie').textContent).toBe(
      'unavailable: not read yet'
    );
    expect(value(section, 'pcie').parentElement!.hidden).toBe(false);
    expect(value(section, 'bandwidth').textContent).toBe('61%');
  });

  it('leaves out the PCIe row where the card has no such figures', () => {
    const section = new GpuLoadSection();
    section.render(
      makeGpuLoad({
        unavailable: {
          pcie_tx_kb_per_s: 'not_supported',
          pcie_rx_kb_per_s: 'not_supported'
        }
      })
    );
    expect(value(section, 'pcie').parentElement!.hidden).toBe(true);
    section.render(
      makeGpuLoad({ pcie_tx_kb_per_s: 1000, pcie_rx_kb_per_s: 2000 })
    );
    expect(value(section, 'pcie').textContent).toBe(
      'TX 1.00 MB/s · RX 2.00 MB/s'
    );
  });

  it("marks a MIG instance's figures that are the parent card's", () => {
    const section = new GpuLoadSection();
    section.render(
      makeGpuLoad({
        scope: 'mig_instance',
        parent_figures: ['power_watts', 'temperature_c']
      })
    );
    const scope = section.node.querySelector<HTMLElement>(
      '[data-vram-role="gpu-load-scope"]'
    )!;
    expect(scope.hidden).toBe(false);
    expect(scope.textContent).toMatch(/MIG instance/);
    expect(value(section, 'power').textContent).toBe(
      '612 W of 700 W (87%) (whole GPU)'
    );
    expect(value(section, 'power').dataset.vramParent).toBe('true');
    expect(value(section, 'sm').textContent).toBe('97%');
  });

  it("gives the share of the kernel's own processes apart from the others'", () => {
    const section = new GpuLoadSection();
    const rank = (pid: number, sm: number) => ({
      pid,
      sm_percent: sm,
      memory_percent: 10,
      encoder_percent: 0,
      decoder_percent: 0,
      this_process: false
    });
    const load = makeGpuLoad({
      processes: [
        { ...rank(4242, 20), this_process: true },
        rank(7001, 35),
        rank(7002, 30),
        rank(5151, 3)
      ]
    });
    // 7001 and 7002 are in the kernel's process tree, as two ranks that it
    // spawned; 5151 is not.
    section.render(load, new Set([7001, 7002, 9999]));
    expect(value(section, 'share').textContent).toBe(
      'SM 20%; its processes 65%; other processes 3%'
    );
    const title = value(section, 'share').parentElement!.title;
    expect(title).toMatch(/pid 7001 \(this kernel's process\): SM 35%/);
    expect(title).toMatch(/pid 5151: SM 3%/);
    // Without the tree, as with an older helper, they count among the others.
    section.render(load);
    expect(value(section, 'share').textContent).toBe(
      'SM 20%; other processes 68%'
    );
  });

  it("says when the kernel's share cannot be told, and when the GPU was idle", () => {
    const section = new GpuLoadSection();
    section.render(
      makeGpuLoad({
        processes: [
          {
            pid: 1,
            sm_percent: 40,
            memory_percent: 1,
            encoder_percent: 0,
            decoder_percent: 0,
            this_process: false
          }
        ]
      })
    );
    expect(value(section, 'share').textContent).toBe(
      'not among the listed processes; all processes 40%'
    );
    expect(value(section, 'share').dataset.vramValue).toBeUndefined();
    // NVML lists a child of the kernel but not the kernel: the child's share apart.
    section.render(
      makeGpuLoad({
        processes: [1, 2].map(pid => ({
          pid,
          sm_percent: 20 * pid,
          memory_percent: 1,
          encoder_percent: 0,
          decoder_percent: 0,
          this_process: false
        }))
      }),
      new Set([2])
    );
    expect(value(section, 'share').textContent).toBe(
      'not among the listed processes; its processes 40%; other processes 20%'
    );
    section.render(makeGpuLoad({ processes: [] }));
    expect(value(section, 'share').textContent).toBe(
      'idle (no process ran a kernel)'
    );
  });

  it('hides for an older helper and says so for a device NVML does not know', () => {
    const section = new GpuLoadSection();
    section.render(undefined);
    expect(section.node.hidden).toBe(true);
    section.render(null);
    expect(section.node.hidden).toBe(false);
    expect(section.node.textContent).toMatch(/NVML does not know this device/);
    expect(value(section, 'sm').parentElement!.hidden).toBe(true);
  });

  it('keeps text from the kernel as text', () => {
    const section = new GpuLoadSection();
    section.render(
      makeGpuLoad({
        throttle_reasons: [EVIL],
        sm_percent: null,
        unavailable: { sm_percent: EVIL }
      })
    );
    expect(section.node.querySelector('img, script, b')).toBeNull();
    expect(value(section, 'throttle').textContent).toBe(EVIL);
  });

  it('is part of the GPU card, which renders it on every sample', () => {
    const card = new GpuDeviceCard(0);
    const gpu = makeGpu({ load: makeGpuLoad() });
    card.render(gpuFigures(gpu), DEFAULT_SETTINGS, gpu.load);
    expect(value(card, 'sm').textContent).toBe('97%');
    card.render(
      gpuFigures(gpu),
      DEFAULT_SETTINGS,
      makeGpuLoad({ sm_percent: 12 })
    );
    expect(value(card, 'sm').textContent).toBe('12%');
  });
});
