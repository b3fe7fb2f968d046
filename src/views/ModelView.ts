/**
 * Base of the views that show a KernelMemoryModel.
 *
 * Rendering is coalesced and lazy: a model change only asks for an update
 * (Lumino runs update requests once per animation frame, however many
 * changes came in), and a hidden view just remembers it is stale and renders
 * when shown again. A busy kernel sampling at 20 Hz costs nothing while the
 * sidebar is collapsed.
 */
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { VramSettings } from '../settings';
import { IKernelMemoryModel, ModelChange } from '../tokens';

export abstract class ModelView extends Widget {
  constructor(settings: VramSettings) {
    super();
    this._settings = settings;
  }

  get model(): IKernelMemoryModel | null {
    return this._model;
  }

  set model(model: IKernelMemoryModel | null) {
    if (model === this._model) {
      return;
    }
    this._model?.changed.disconnect(this._onModelChanged, this);
    this._model = model;
    model?.changed.connect(this._onModelChanged, this);
    this.onModelReplaced();
    this.requestRender();
  }

  get settings(): VramSettings {
    return this._settings;
  }

  set settings(settings: VramSettings) {
    this._settings = settings;
    this.requestRender();
  }

  /** Mark the view stale and schedule a render (coalesced). */
  requestRender(): void {
    this._stale = true;
    this.update();
  }

  dispose(): void {
    this._model?.changed.disconnect(this._onModelChanged, this);
    this._model = null;
    super.dispose();
  }

  /** Which model changes this view shows; others are ignored. */
  protected abstract readonly relevantChanges: ReadonlySet<ModelChange>;

  /** Draw the current model (may be null) into the node. */
  protected abstract render(): void;

  /** Called when another model is shown (e.g. to drop cached state). */
  protected onModelReplaced(): void {
    // nothing by default
  }

  protected onUpdateRequest(_msg: Message): void {
    if (!this._stale) {
      return;
    }
    if (!this.isVisible) {
      return; // stays stale; onAfterShow renders it
    }
    this._stale = false;
    this.render();
  }

  protected onAfterAttach(_msg: Message): void {
    if (this._stale) {
      this.update();
    }
  }

  protected onAfterShow(_msg: Message): void {
    if (this._stale) {
      this.update();
    }
  }

  private _onModelChanged(_: IKernelMemoryModel, change: ModelChange): void {
    if (this.relevantChanges.has(change)) {
      this.requestRender();
    }
  }

  private _model: IKernelMemoryModel | null = null;
  private _settings: VramSettings;
  private _stale = true;
}
