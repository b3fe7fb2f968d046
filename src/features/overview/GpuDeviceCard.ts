/**
 * The card of one GPU: a stacked bar of who holds the device (PyTorch's
 * allocated memory, PyTorch's cache, the rest of this process, other
 * processes, and what is free), the figures, the "Kernel + N processes" row
 * and the GPU's load (GpuLoadSection.ts).
 *
 * It is a plain DOM component that GpuDeviceList owns. Its memory figures
 * are written again only when they or the settings changed, so that a
 * sample in which only the load moved costs no more than the load's rows.
 */
import {
  formatBytes,
  formatBytesOf,
  formatCount,
  formatPercent
} from '../../text/format';
import { GpuFigures } from '../../model/gpuFigures';
import { VramSettings } from '../../settings/settings';
import {
  element,
  figureRow,
  setBytes,
  setHidden,
  setSegment,
  setText
} from '../../ui/dom';
import { trans } from '../../text/translation';
import type { GpuLoad } from '../../protocol/load';
import { GpuLoadSection } from './GpuLoadSection';
import { TreeFigureRow } from './processTreeRows';

/**
 * The card of one GPU, with a stacked bar of who holds the device and its
 * figures.
 */
export class GpuDeviceCard {
  constructor(index: number) {
    const node = (this.node = element(
      'div',
      'jp-vram-Card jp-vram-GpuDeviceCard',
      {
        role: 'gpu-card'
      }
    ));
    node.dataset.vramDevice = String(index);

    const header = element('div', 'jp-vram-Card-header');
    this._title = element('span', 'jp-vram-Card-title', { role: 'gpu-name' });
    this._summary = element('span', 'jp-vram-Card-subtitle');
    header.append(this._title, this._summary);

    const bar = element('div', 'jp-vram-Bar');
    bar.title = trans.__(
      'PyTorch allocated, PyTorch cache, rest of this process (CUDA context, libraries), other processes, free'
    );
    this._segments = {
      allocated: element('div', 'jp-vram-Bar-segment jp-vram-Bar-allocated'),
      cached: element('div', 'jp-vram-Bar-segment jp-vram-Bar-cached'),
      context: element('div', 'jp-vram-Bar-segment jp-vram-Bar-context'),
      others: element('div', 'jp-vram-Bar-segment jp-vram-Bar-others')
    };
    bar.append(
      this._segments.allocated,
      this._segments.cached,
      this._segments.context,
      this._segments.others
    );

    const f = element('div', 'jp-vram-Figures');
    this._values = {
      allocated: figureRow(
        f,
        trans.__('Allocated'),
        'gpu-allocated',
        trans.__('PyTorch: held by live tensors')
      ),
      reserved: figureRow(
        f,
        trans.__('Reserved'),
        'gpu-reserved',
        trans.__('PyTorch caching allocator: allocated + cached')
      ),
      free: figureRow(
        f,
        trans.__('Free'),
        'gpu-free',
        trans.__('Free on the device (NVML)')
      ),
      total: figureRow(f, trans.__('Total'), 'gpu-total'),
      peak: figureRow(
        f,
        trans.__('Peak allocated'),
        'gpu-peak',
        trans.__('PyTorch: highest allocated since the last reset')
      ),
      fragmentation: figureRow(
        f,
        trans.__('Fragmentation'),
        'gpu-fragmentation',
        trans.__('Reserved but unusable (inactive split blocks)')
      ),
      deviceUsed: figureRow(
        f,
        trans.__('Used on device'),
        'gpu-device-used',
        trans.__('NVML: all processes')
      ),
      processUsed: figureRow(
        f,
        trans.__('This process'),
        'gpu-process-used',
        trans.__('NVML: this kernel process, including the CUDA context')
      ),
      otherProcesses: figureRow(
        f,
        trans.__('Other processes'),
        'gpu-other-processes',
        trans.__('NVML used minus this process')
      ),
      tensorflowCurrent: figureRow(
        f,
        trans.__('TensorFlow current'),
        'gpu-tf-current'
      ),
      tensorflowPeak: figureRow(f, trans.__('TensorFlow peak'), 'gpu-tf-peak')
    };
    this._counters = element('div', 'jp-vram-Counters', {
      role: 'gpu-counters'
    });
    node.append(header, bar, f, this._load.node, this._counters);
    this.processes = new TreeFigureRow(
      this._values.processUsed.parentElement!,
      'gpu-tree'
    );
  }

  readonly node: HTMLElement;

  /**
   * The "Kernel + N processes" row of this device, which GpuDeviceList fills
   * from the sample's process tree.
   */
  readonly processes: TreeFigureRow;

  /**
   * Shows `figures` and the GPU's `load`, which is undefined when the helper
   * sends none. `children` holds the pids of the kernel's own processes,
   * whose share of the GPU's activity is given apart from the others'. The
   * memory figures are left alone when they and the settings are unchanged.
   */
  render(
    figures: GpuFigures,
    settings: VramSettings,
    load?: GpuLoad | null,
    children?: ReadonlySet<number>
  ): void {
    this._load.render(load, children);
    if (
      this._last &&
      this._lastSettings === settings &&
      sameFigures(this._last, figures)
    ) {
      return;
    }
    this._last = figures;
    this._lastSettings = settings;
    const units = settings.units;

    setText(
      this._title,
      figures.name
        ? trans.__('GPU %1: %2', figures.index, figures.name)
        : trans.__('GPU %1', figures.index)
    );
    const used = figures.deviceUsed ?? figures.kernelUsed;
    setText(
      this._summary,
      used !== null && figures.total !== null
        ? `${formatBytesOf(used, figures.total, units)} (${formatPercent(used, figures.total)})`
        : formatBytes(figures.total, units)
    );
    const warn =
      figures.usedPercent !== null &&
      figures.usedPercent >= settings.warningThresholdPercent;
    this.node.classList.toggle('jp-vram-warning', warn);

    setSegment(this._segments.allocated, figures.allocated, figures.total);
    setSegment(this._segments.cached, figures.cached, figures.total);
    setSegment(
      this._segments.context,
      figures.contextAndLibraries,
      figures.total
    );
    setSegment(this._segments.others, figures.otherProcesses, figures.total);

    const v = this._values;
    setBytes(v.allocated, figures.allocated, units);
    setBytes(v.reserved, figures.reserved, units);
    setBytes(v.free, figures.free, units);
    setBytes(v.total, figures.total, units);
    setBytes(v.peak, figures.peak, units);
    this._optional(v.fragmentation, figures.fragmentation, units);
    this._optional(v.deviceUsed, figures.deviceUsed, units);
    this._optional(v.processUsed, figures.processUsed, units);
    this._optional(v.otherProcesses, figures.otherProcesses, units);
    this._optional(v.tensorflowCurrent, figures.tensorflowCurrent, units);
    this._optional(v.tensorflowPeak, figures.tensorflowPeak, units);

    const counters: string[] = [];
    if (figures.numOoms) {
      counters.push(
        trans._n(
          '%2 out-of-memory error',
          '%2 out-of-memory errors',
          figures.numOoms,
          formatCount(figures.numOoms)
        )
      );
    }
    if (figures.numAllocRetries) {
      counters.push(
        trans._n(
          '%2 allocation retry (the allocator flushed its cache to survive)',
          '%2 allocation retries (the allocator flushed its cache to survive)',
          figures.numAllocRetries,
          formatCount(figures.numAllocRetries)
        )
      );
    }
    setText(this._counters, counters.join('; '));
    setHidden(this._counters, counters.length === 0);
  }

  /**
   * Writes a figure that only some kernels have, and hides its row when the
   * figure is unknown, because the row's source (such as NVML or TensorFlow)
   * is then absent and the row would say nothing.
   */
  private _optional(
    node: HTMLElement,
    bytes: number | null,
    units: VramSettings['units']
  ): void {
    setBytes(node, bytes, units);
    setHidden(node.parentElement!, bytes === null);
  }

  private _title: HTMLElement;
  private _summary: HTMLElement;
  private _segments: Record<
    'allocated' | 'cached' | 'context' | 'others',
    HTMLElement
  >;
  private _values: Record<
    | 'allocated'
    | 'reserved'
    | 'free'
    | 'total'
    | 'peak'
    | 'fragmentation'
    | 'deviceUsed'
    | 'processUsed'
    | 'otherProcesses'
    | 'tensorflowCurrent'
    | 'tensorflowPeak',
    HTMLElement
  >;
  private _counters: HTMLElement;
  private _load = new GpuLoadSection();
  private _last: GpuFigures | null = null;
  private _lastSettings: VramSettings | null = null;
}

/** Whether two sets of a device's figures are equal, figure by figure. */
function sameFigures(a: GpuFigures, b: GpuFigures): boolean {
  for (const key of Object.keys(a) as (keyof GpuFigures)[]) {
    if (a[key] !== b[key]) {
      return false;
    }
  }
  return true;
}
