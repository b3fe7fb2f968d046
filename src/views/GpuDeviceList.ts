/**
 * The GPU cards of the current kernel, one per visible device, keyed by
 * CUDA ordinal so that a card (and its DOM) survives from sample to sample.
 */
import { deviceFigures, GpuFigures, gpuFigures } from '../model/gpuFigures';
import { ModelChange } from '../tokens';
import { GpuDeviceCard } from './GpuDeviceCard';
import { ModelView } from './ModelView';

const RELEVANT: ReadonlySet<ModelChange> = new Set<ModelChange>([
  'sample',
  'hello',
  'history'
]);

export class GpuDeviceList extends ModelView {
  constructor(settings: ConstructorParameters<typeof ModelView>[0]) {
    super(settings);
    this.addClass('jp-vram-GpuDeviceList');
  }

  protected readonly relevantChanges = RELEVANT;

  protected render(): void {
    const figures = this._currentFigures();
    const seen = new Set<number>();
    let previous: HTMLElement | null = null;
    for (const f of figures) {
      seen.add(f.index);
      let card = this._cards.get(f.index);
      if (!card) {
        card = new GpuDeviceCard(f.index);
        this._cards.set(f.index, card);
      }
      // Keep DOM order = device order without re-inserting unchanged nodes.
      const expectedPosition: ChildNode | null = previous
        ? previous.nextSibling
        : this.node.firstChild;
      if (expectedPosition !== card.node) {
        this.node.insertBefore(card.node, expectedPosition);
      }
      card.render(f, this.settings);
      previous = card.node;
    }
    for (const [index, card] of this._cards) {
      if (!seen.has(index)) {
        card.node.remove();
        this._cards.delete(index);
      }
    }
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
