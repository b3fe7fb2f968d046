/**
 * The base of the sidebar's views, whose rendering is coalesced and lazy. A
 * change only asks for a render, and Lumino runs update requests once per
 * animation frame however many changes came in. A hidden view just
 * remembers that it is stale and renders when it is shown again, so a busy
 * kernel sampling at 20 Hz costs nothing while the sidebar is collapsed.
 * Every view also holds the user's settings, so the sidebar hands new ones
 * to all views alike.
 */
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { DEFAULT_SETTINGS, VramSettings } from '../settings/settings';

/**
 * The base class of the sidebar views, which render only while visible and only
 * when something they show changed.
 */
export abstract class LazyView extends Widget {
  constructor(settings: VramSettings = DEFAULT_SETTINGS) {
    super();
    this._settings = settings;
  }

  /**
   * The user's settings, such as units and thresholds; replacing them
   * re-renders.
   */
  get settings(): VramSettings {
    return this._settings;
  }

  set settings(settings: VramSettings) {
    this._settings = settings;
    this.requestRender();
  }

  /**
   * Marks the view stale and schedules a render, which is coalesced with
   * others.
   */
  requestRender(): void {
    this._stale = true;
    this.update();
  }

  /**
   * Renders at once, whatever the visibility. Tests and benchmarks use it;
   * the app renders through requestRender.
   */
  renderNow(): void {
    this._stale = false;
    this.render();
  }

  /**
   * Draws the current state into the node. Text from the kernel must go in
   * as text only, never as HTML.
   */
  protected abstract render(): void;

  protected onUpdateRequest(_msg: Message): void {
    if (this._stale && this.isVisible) {
      this.renderNow();
    }
    // A hidden view stays stale until onAfterShow renders it.
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

  private _stale = true;
  private _settings: VramSettings;
}
