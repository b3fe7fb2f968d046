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

  /** The pids of the kernel's own processes in the latest sample (none from an older helper). */
  private _childPids(): ReadonlySet<number> {
    const tree = this.model?.latest?.processes;
    return new Set(tree ? tree.processes.map(p => p.pid) : []);
  }

  /** The latest sample's load of GPU `index`; undefined before a sample, or from an older helper. */
  private _loadOf(index: number): GpuLoad | null | undefined {
    return this.model?.latest?.gpus.find(gpu => gpu.index === index)?.load;
  }

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
