/**
 * The base of the views that show one kernel's `MemoryActions`, which are
 * the action bar and the Holders tab. It binds a view to its MemoryActions
 * and renders the view again, lazily as LazyView does, when they change.
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
