/**
 * The base of the views that show a KernelMemoryModel. It binds the view to
 * the model and the settings, and re-renders (lazily, see LazyView) on the
 * model changes that the view shows.
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

  /**
   * Called for each relevant change, before the render it asks for, so that
   * a view can, for example, drop what it derived.
   */
  protected onModelChange(change: ModelChange): void {
    // The base class does nothing here.
    void change;
  }

  /**
   * How long, in milliseconds, the render that a new sample asks for may
   * wait. A view on which one sample cannot show, such as a chart whose
   * pixel spans minutes, can then render the samples of that time together.
   * 0 means at the next frame, as for every other change.
   */
  protected sampleRenderDelayMs(): number {
    return 0;
  }

  /** Called when another model is shown, for example to drop cached state. */
  protected onModelReplaced(): void {
    // The base class does nothing here.
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
