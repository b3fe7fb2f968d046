/**
 * The GPU cards of the current kernel, one per visible device, keyed by
 * CUDA ordinal so that a card (and its DOM) survives from sample to sample.
 */
import { deviceFigures, GpuFigures, gpuFigures } from '../../model/gpuFigures';
import { ModelChange } from '../../model/IKernelMemoryModel';
import { syncKeyedChildren } from '../../ui/dom';
import { GpuDeviceCard } from './GpuDeviceCard';
import { gpuTreeFigures } from './processTreeRows';
import { ModelView } from '../../ui/ModelView';
import type { GpuLoad } from '../../protocol/load';

const RELEVANT: ReadonlySet<ModelChange> = new Set<ModelChange>([
  'sample',
  'hello',
  'history'
]);

/** The list of GPU cards of the current kernel, one per visible device. */
export class GpuDeviceList extends ModelView {
  constructor(settings: ConstructorParameters<typeof ModelView>[0]) {
    super(settings);
    this.addClass('jp-vram-GpuDeviceList');
  }

  protected readonly relevantChanges = RELEVANT;

  protected render(): void {
    const children = this._childPids();
    syncKeyedChildren(
      this.node,
      this._cards,
      this._currentFigures(),
      f => f.index,
      f => new GpuDeviceCard(f.index),
      (card, f) => {
        card.render(f, this.settings, this._loadOf(f.index), children);
        card.processes.show(
          gpuTreeFigures(this.model?.latest?.processes, f.index),
          this.settings.units
        );
      }
    );
  }

  /**
   * The pids of the processes that the kernel started, from the latest
   * sample's process tree. The set is empty with an older helper, which
   * sends no tree.
   */
  private _childPids(): ReadonlySet<number> {
    const tree = this.model?.latest?.processes;
    return new Set(tree ? tree.processes.map(p => p.pid) : []);
  }

  /**
   * The latest sample's load of GPU `index`. It is undefined before the
   * first sample and with an older helper, which sends no load, and null
   * when NVML does not know the device.
   */
  private _loadOf(index: number): GpuLoad | null | undefined {
    return this.model?.latest?.gpus.find(gpu => gpu.index === index)?.load;
  }

  /**
   * The figures of each device from the latest sample. Before the first
   * sample, the cards show what the hello message said of each device, so
   * that they appear as soon as the helper answers.
   */
  private _currentFigures(): GpuFigures[] {
    const model = this.model;
    if (!model) {
      return [];
    }
    const devices = model.hello?.devices ?? [];
    if (model.latest) {
      return model.latest.gpus.map(gpu =>
        gpuFigures(
          gpu,
          devices.find(d => d.index === gpu.index)
        )
      );
    }
    return devices.map(deviceFigures);
  }

  private _cards = new Map<number, GpuDeviceCard>();
}
