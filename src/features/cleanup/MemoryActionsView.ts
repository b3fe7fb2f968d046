/**
 * Base of the views that show one kernel's `MemoryActions` (the action bar,
 * the Holders tab): binding to the model and re-rendering (lazily, see
 * LazyView) on its changes.
 */
import { MemoryActions } from './MemoryActions';
import { LazyView } from '../../ui/LazyView';
import { follow } from '../../ui/follow';

/** The base class of the views that show one kernel's MemoryActions. */
export abstract class MemoryActionsView extends LazyView {
  get actions(): MemoryActions | null {
    return this._actions;
  }

  set actions(actions: MemoryActions | null) {
    if (actions === this._actions) {
      return;
    }
    this._actions = follow(this._actions, actions, this.requestRender, this);
    this.requestRender();
  }

  dispose(): void {
    this._actions?.changed.disconnect(this.requestRender, this);
    this._actions = null;
    super.dispose();
  }

  private _actions: MemoryActions | null = null;
}
