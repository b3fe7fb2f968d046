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
    syncKeyedChildren(
      this.node,
      this._cards,
      this._currentFigures(),
      f => f.index,
      f => new GpuDeviceCard(f.index),
      (card, f) => {
        card.render(f, this.settings);
        card.processes.show(
          gpuTreeFigures(this.model?.latest?.processes, f.index),
          this.settings.units
        );
      }
    );
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
