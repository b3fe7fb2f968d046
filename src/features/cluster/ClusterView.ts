/**
 * The Cluster section of the Memory tab: the Dask or Ray clusters the
 * active notebook's kernel drives, one block each with a row per worker,
 * the last action asked from this page with what came back from each
 * worker, and the workers' events. It shows only while the kernel reports
 * a cluster, or once one went away (it then says so, and keeps the events
 * for as long as the page lives); a kernel that never reported one (no
 * cluster, cluster watching off, a non-Python kernel, an older helper)
 * shows nothing.
 *
 * Each update touches only what changed: clusters, workers and events are
 * keyed, and their nodes are updated in place, so 64 workers render within
 * a frame. Everything from the kernel goes in as text.
 */
import type { ClusterActionName, ClusterState } from '../../protocol/cluster';
import { trans } from '../../text/translation';
import {
  element,
  setData,
  setHidden,
  setText,
  syncKeyedChildren
} from '../../ui/dom';
import { LazyView } from '../../ui/LazyView';
import type { VramSettings } from '../../settings/settings';
import { ClusterBlock } from './ClusterBlock';
import { ClusterEvents } from './ClusterEvents';
import type { ClusterActionState, ClusterTracker } from './ClusterTracker';
import {
  actionLabel,
  actionResultSentence,
  actionWorkerText
} from './clusterText';

/** The Cluster section. */
export class ClusterView extends LazyView {
  constructor(options: ClusterView.IOptions) {
    super(options.settings);
    this._act = options.act;
    this.addClass('jp-vram-ClusterView');
    this.node.dataset.vramRole = 'cluster-view';
    const heading = element('h3', 'jp-vram-ClusterView-heading', {
      text: trans.__('Cluster')
    });
    this._blocks = element('div', 'jp-vram-ClusterView-blocks');
    this._gone = element('div', 'jp-vram-ClusterView-gone', {
      role: 'cluster-gone'
    });
    this._action = element('div', 'jp-vram-ClusterView-action', {
      role: 'cluster-action-result'
    });
    this._actionHead = element('div', 'jp-vram-ClusterView-actionHead');
    this._actionWorkers = element('ul', 'jp-vram-ClusterView-actionWorkers');
    this._action.append(this._actionHead, this._actionWorkers);
    this._action.setAttribute('aria-live', 'polite');
    this._notes = element('div', 'jp-vram-ClusterView-notes', {
      role: 'cluster-notes'
    });
    this.node.append(
      heading,
      this._gone,
      this._blocks,
      this._action,
      this._events.node,
      this._notes
    );
    this.node.hidden = true;
  }

  /** The clusters of the kernel shown; null without one. */
  get tracker(): ClusterTracker | null {
    return this._tracker;
  }

  set tracker(tracker: ClusterTracker | null) {
    if (tracker === this._tracker) {
      return;
    }
    this._tracker?.changed.disconnect(this.requestRender, this);
    this._tracker = tracker;
    tracker?.changed.connect(this.requestRender, this);
    this.requestRender();
  }

  dispose(): void {
    this.tracker = null;
    super.dispose();
  }

  /**
   * Hidden views are not rendered (LazyView), so the section's visibility
   * is worked out on every change, and the rest only while it shows.
   */
  requestRender(): void {
    const t = this._tracker;
    const shown =
      !!t && (t.clusters.length > 0 || t.everSeen || t.events.length > 0);
    setHidden(this.node, !shown);
    super.requestRender();
  }

  protected render(): void {
    const t = this._tracker;
    if (!t || this.node.hidden) {
      return;
    }
    const units = this.settings.units;
    const now = t.time;
    const gone = t.wentAway;
    setText(
      this._gone,
      gone.length ? trans.__('The cluster went away: %1.', gone.join(', ')) : ''
    );
    setHidden(this._gone, !gone.length);
    syncKeyedChildren(
      this._blocks,
      this._kept,
      t.clusters,
      c => c.name,
      () => new ClusterBlock((c, a) => this._act(c, a)),
      (block, c) => block.show(c, t, now, units)
    );
    this._showAction(t.lastAction, units);
    this._events.show(t.events, now, units);
    const notes = t.notes.length
      ? trans.__(
          'Part of the last cluster reading could not be read: %1',
          t.notes.join(' ')
        )
      : '';
    setText(this._notes, notes);
    setHidden(this._notes, !notes);
  }

  /** The last action and, once answered, a line per worker. */
  private _showAction(
    state: ClusterActionState | null,
    units: VramSettings['units']
  ): void {
    setHidden(this._action, state === null);
    if (state === this._actionShown) {
      return;
    }
    this._actionShown = state;
    if (!state) {
      return;
    }
    setData(this._action, 'vramActionStatus', state.status);
    setData(this._action, 'vramAction', state.action);
    if (state.status === 'running') {
      setText(
        this._actionHead,
        trans.__('%1\u2026', actionLabel(state.action))
      );
      this._actionWorkers.replaceChildren();
    } else if (state.status === 'failed') {
      setText(
        this._actionHead,
        trans.__('%1 failed: %2', actionLabel(state.action), state.error)
      );
      this._actionWorkers.replaceChildren();
    } else {
      setText(this._actionHead, actionResultSentence(state.result));
      // Answered once per action, so the list is made once.
      this._actionWorkers.replaceChildren(
        ...state.result.workers.map(w =>
          element('li', 'jp-vram-ClusterView-actionWorker', {
            role: 'cluster-action-worker',
            text: actionWorkerText(w, units)
          })
        )
      );
    }
  }

  private _act: (cluster: ClusterState, action: ClusterActionName) => void;
  private _tracker: ClusterTracker | null = null;
  private _blocks: HTMLElement;
  private _kept = new Map<string, ClusterBlock>();
  private _gone: HTMLElement;
  private _action: HTMLElement;
  private _actionHead: HTMLElement;
  private _actionWorkers: HTMLElement;
  private _actionShown: ClusterActionState | null = null;
  private _events = new ClusterEvents();
  private _notes: HTMLElement;
}

/** The types of the ClusterView class. */
export namespace ClusterView {
  /** What the section is made with. */
  export interface IOptions {
    settings?: VramSettings;
    /** Runs an action's command for a cluster (the command asks first). */
    act: (cluster: ClusterState, action: ClusterActionName) => void;
  }
}
