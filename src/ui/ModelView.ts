/**
 * Base of the views that show a KernelMemoryModel: binding to the model and
 * the settings, and re-rendering (lazily, see LazyView) on the model changes
 * the view shows.
 */

import { VramSettings } from '../settings/settings';
import { IKernelMemoryModel, ModelChange } from '../model/IKernelMemoryModel';
import { LazyView } from './LazyView';
import { follow } from './follow';

/** The base class of the views that show one kernel's memory model. */
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
    if (this._sampleRender !== null) {
      clearTimeout(this._sampleRender);
      this._sampleRender = null;
    }
    super.dispose();
  }

  /** Which model changes this view shows; others are ignored. */
  protected abstract readonly relevantChanges: ReadonlySet<ModelChange>;

  /** Called for each relevant change, before the render it asks for (e.g. to drop what it derived). */
  protected onModelChange(change: ModelChange): void {
    void change; // nothing by default
  }

  /**
   * How long the render a new sample asks for may wait (ms): a view on which
   * one sample cannot show (a chart whose pixel spans minutes) renders the
   * samples of that time together. 0: at the next frame, as every other change.
   */
  protected sampleRenderDelayMs(): number {
    return 0;
  }

  /** Called when another model is shown (e.g. to drop cached state). */
  protected onModelReplaced(): void {
    // nothing by default
  }

  private _onModelChanged(_: IKernelMemoryModel, change: ModelChange): void {
    if (this.relevantChanges.has(change)) {
      this.onModelChange(change);
      const delay = change === 'sample' ? this.sampleRenderDelayMs() : 0;
      if (delay <= 0) {
        this.requestRender();
      } else if (this._sampleRender === null) {
        this._sampleRender = setTimeout(() => {
          this._sampleRender = null;
          this.requestRender();
        }, delay);
      }
    }
  }

  private _model: IKernelMemoryModel | null = null;
  private _sampleRender: ReturnType<typeof setTimeout> | null = null;
}
