/**
 * Base of the sidebar's views: rendering is coalesced and lazy. A change
 * only asks for a render (Lumino runs update requests once per animation
 * frame, however many changes came in), and a hidden view just remembers it
 * is stale and renders when shown again. A busy kernel sampling at 20 Hz
 * costs nothing while the sidebar is collapsed. Every view also holds the
 * user's settings, so the sidebar hands new ones to all views alike.
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

  /** The user's settings (units, thresholds); replacing them re-renders. */
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

  /**
   * Render now, whatever the visibility (tests and benchmarks; the app
   * renders through requestRender).
   */
  renderNow(): void {
    this._stale = false;
    this.render();
  }

  /** Draw the current state into the node (text from the kernel as text only). */
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
