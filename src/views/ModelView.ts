/**
 * Base of the views that show a KernelMemoryModel: binding to the model and
 * the settings, and re-rendering (lazily, see LazyView) on the model changes
 * the view shows.
 */

import { VramSettings } from '../settings';
import { IKernelMemoryModel, ModelChange } from '../tokens';
import { LazyView } from './LazyView';
import { follow } from './follow';

export abstract class ModelView extends LazyView {
  constructor(settings: VramSettings) {
    super(settings);
  }

  get model(): IKernelMemoryModel | null {
    return this._model;
  }

  set model(model: IKernelMemoryModel | null) {
    if (model === this._model) {
      return;
    }
    this._model = follow(this._model, model, this._onModelChanged, this);
    this.onModelReplaced();
    this.requestRender();
  }

  dispose(): void {
    this._model?.changed.disconnect(this._onModelChanged, this);
    this._model = null;
    super.dispose();
  }

  /** Which model changes this view shows; others are ignored. */
  protected abstract readonly relevantChanges: ReadonlySet<ModelChange>;

  /** Called for each relevant change, before the render it asks for (e.g. to drop what it derived). */
  protected onModelChange(change: ModelChange): void {
    void change; // nothing by default
  }

  /** Called when another model is shown (e.g. to drop cached state). */
  protected onModelReplaced(): void {
    // nothing by default
  }

  private _onModelChanged(_: IKernelMemoryModel, change: ModelChange): void {
    if (this.relevantChanges.has(change)) {
      this.onModelChange(change);
      this.requestRender();
    }
  }

  private _model: IKernelMemoryModel | null = null;
}
