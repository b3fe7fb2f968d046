/**
 * Base of the views that show one kernel's `MemoryActions` (the action bar,
 * the Holders tab): binding to the model and re-rendering on its changes,
 * coalesced through Lumino update requests and skipped while hidden (a
 * hidden view renders when it is shown again).
 */
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { MemoryActions } from '../model/MemoryActions';

export abstract class MemoryActionsView extends Widget {
  get actions(): MemoryActions | null {
    return this._actions;
  }

  set actions(actions: MemoryActions | null) {
    if (actions === this._actions) {
      return;
    }
    this._actions?.changed.disconnect(this._onChanged, this);
    this._actions = actions;
    actions?.changed.connect(this._onChanged, this);
    this._onChanged();
  }

  /** Render now (tests; the sidebar relies on update requests). */
  renderNow(): void {
    this._stale = false;
    this.render();
  }

  dispose(): void {
    this._actions?.changed.disconnect(this._onChanged, this);
    this._actions = null;
    super.dispose();
  }

  protected onUpdateRequest(_msg: Message): void {
    if (this._stale && this.isVisible) {
      this.renderNow();
    }
  }

  protected onAfterShow(_msg: Message): void {
    if (this._stale) {
      this.update();
    }
  }

  /** Rebuild the DOM from `actions` (text from the kernel via textContent only). */
  protected abstract render(): void;

  private _onChanged(): void {
    this._stale = true;
    this.update();
  }

  private _actions: MemoryActions | null = null;
  private _stale = true;
}
