/**
 * One cluster in the Cluster section: its engine, version and name, how
 * it was found, its dashboard's address (as text), its status where the
 * last reading did not answer (with the age of the figures shown), its
 * totals, what its engine cannot show here, the buttons of its actions,
 * and one row per worker, keyed by the worker's id and updated in place.
 *
 * Everything from the kernel goes in as text.
 */
import type { ClusterActionName, ClusterState } from '../../protocol/cluster';
import type { ByteUnits } from '../../text/format';
import { trans } from '../../text/translation';
import {
  button,
  element,
  setData,
  setHidden,
  setText,
  syncKeyedChildren
} from '../../ui/dom';
import type { ClusterTracker } from './ClusterTracker';
import { ClusterWorkerRow } from './ClusterWorkerRow';
import {
  actionLabel,
  actionSentence,
  clusterHeading,
  foundByText,
  statusSentence,
  totalsText
} from './clusterText';

/** The order of the action buttons: the reading first, the restart last. */
const ACTION_ORDER: readonly ClusterActionName[] = [
  'read_allocators',
  'gc',
  'empty_cache',
  'restart'
];

/** One cluster's block, updated in place. */
export class ClusterBlock {
  /** `act`: a button asked for `action` on the cluster shown. */
  constructor(act: (cluster: ClusterState, action: ClusterActionName) => void) {
    const node = (this.node = element('section', 'jp-vram-ClusterBlock', {
      role: 'cluster-block'
    }));
    this._heading = element('h4', 'jp-vram-ClusterBlock-heading', {
      role: 'cluster-heading'
    });
    this._found = element('div', 'jp-vram-ClusterBlock-found');
    this._dashboard = element('div', 'jp-vram-ClusterBlock-dashboard', {
      role: 'cluster-dashboard'
    });
    this._status = element(
      'div',
      'jp-vram-ClusterBlock-status jp-vram-warning',
      {
        role: 'cluster-status'
      }
    );
    this._totals = element('div', 'jp-vram-ClusterBlock-totals', {
      role: 'cluster-totals'
    });
    this._unseen = element('ul', 'jp-vram-ClusterBlock-unseen', {
      role: 'cluster-unseen'
    });
    this._actions = element('div', 'jp-vram-ClusterBlock-actions');
    for (const action of ACTION_ORDER) {
      const b = button(
        'jp-vram-Button jp-vram-ClusterBlock-action',
        {
          role: `cluster-action-${action}`,
          text:
            actionLabel(action) +
            (action === 'read_allocators' ? '' : '\u2026'),
          title: actionSentence(action)
        },
        () => this._cluster && act(this._cluster, action)
      );
      this._buttons.set(action, b);
      this._actions.append(b);
    }
    this._workers = element('ul', 'jp-vram-ClusterBlock-workers', {
      role: 'cluster-workers'
    });
    node.append(
      this._heading,
      this._found,
      this._dashboard,
      this._status,
      this._totals,
      this._unseen,
      this._actions,
      this._workers
    );
  }

  readonly node: HTMLElement;

  /** Shows `c`; `now` is the kernel-clock time of the message, for ages. */
  show(
    c: ClusterState,
    tracker: ClusterTracker,
    now: number | null,
    units: ByteUnits
  ): void {
    this._cluster = c;
    setData(this.node, 'vramCluster', c.name);
    setData(this.node, 'vramEngine', c.engine);
    setData(this.node, 'vramStatus', c.status);
    setText(this._heading, clusterHeading(c));
    setText(this._found, foundByText(c));
    setText(
      this._dashboard,
      c.dashboard ? trans.__('Dashboard: %1', c.dashboard) : ''
    );
    setHidden(this._dashboard, !c.dashboard);
    const status = statusSentence(c, now);
    setText(this._status, status ?? '');
    setHidden(this._status, status === null);
    this.node.classList.toggle('jp-vram-ClusterBlock-old', status !== null);
    setText(this._totals, totalsText(c, units));
    this._showUnseen(c.unseen);
    const busy = tracker.isActing;
    for (const [action, b] of this._buttons) {
      setHidden(b, !c.actions.includes(action));
      b.disabled = busy || !tracker.canAct;
    }
    syncKeyedChildren(
      this._workers,
      this._rows,
      c.workers,
      w => w.id,
      () => new ClusterWorkerRow(),
      (row, w) => row.show(w, tracker.allocatorOf(w.id), units)
    );
  }

  /** The engine's blind spots, one item each; rebuilt only when they change. */
  private _showUnseen(unseen: readonly string[]): void {
    const joined = unseen.join('\n');
    if (joined === this._unseenShown) {
      return;
    }
    this._unseenShown = joined;
    this._unseen.replaceChildren(
      ...unseen.map(text =>
        element('li', 'jp-vram-ClusterBlock-unseenItem', { text })
      )
    );
    setHidden(this._unseen, !unseen.length);
  }

  private _cluster: ClusterState | null = null;
  private _heading: HTMLElement;
  private _found: HTMLElement;
  private _dashboard: HTMLElement;
  private _status: HTMLElement;
  private _totals: HTMLElement;
  private _unseen: HTMLElement;
  private _unseenShown: string | null = null;
  private _actions: HTMLElement;
  private _buttons = new Map<ClusterActionName, HTMLButtonElement>();
  private _workers: HTMLElement;
  private _rows = new Map<string, ClusterWorkerRow>();
}
