/**
 * Shows a JupyterLab notification when a monitored kernel dies without the
 * user asking for it. The notification gives the gist of
 * `explainKernelDeath` and has a button that opens the panel. It stays in
 * step with the facts: it is updated when the restarted kernel brings more
 * evidence, such as its container's OOM kill count, and it is dismissed
 * when the user restarts or changes the kernel or closes its notebook.
 * Notebooks that share a kernel share one notification for its death.
 */
import { IDisposable } from '@lumino/disposable';

import type { DeathVerdict, KernelDeathFacts } from '../../model/kernelDeath';
import { kernelDeathText } from '../../model/lazyKernelDeath';
import { MemoryMonitor } from '../../monitor/MemoryMonitor';
import {
  IKernelMemoryModel,
  ModelChange
} from '../../model/IKernelMemoryModel';
import { trans } from '../../text/translation';

/** The parts of JupyterLab's Notification that the notifier uses; tests pass fakes. */
export interface INotifications {
  emit(
    message: string,
    type: 'warning' | 'error',
    options: {
      autoClose: false;
      actions: { label: string; callback: () => void }[];
    }
  ): string;
  update(args: {
    id: string;
    message: string;
    type: 'warning' | 'error';
  }): boolean;
  dismiss(id: string): void;
}

/**
 * Shows a JupyterLab notification when a monitored kernel dies without the user
 * asking, and keeps it in step with what is learnt later.
 */
export class DeathNotifier implements IDisposable {
  constructor(options: {
    monitor: Pick<MemoryMonitor, 'sessions' | 'sessionsChanged' | 'settings'>;
    showDetails: () => void;
    /** JupyterLab's Notification, as the plugin hands it over, or a fake in tests. */
    notifications: INotifications;
  }) {
    this._monitor = options.monitor;
    this._showDetails = options.showDetails;
    this._notifications = options.notifications;
    this._monitor.sessionsChanged.connect(this._onSessions, this);
    this._onSessions();
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._monitor.sessionsChanged.disconnect(this._onSessions, this);
    for (const model of this._shown.keys()) {
      model.changed.disconnect(this._onChanged, this);
    }
    this._shown.clear();
  }

  private _onSessions(): void {
    const models = new Set<IKernelMemoryModel>(
      this._monitor.sessions().map(s => s.model)
    );
    for (const model of models) {
      if (!this._shown.has(model)) {
        this._shown.set(model, null);
        model.changed.connect(this._onChanged, this);
        if (model.death) {
          // The kernel died before this notifier was created, which can
          // happen because the notifier's code loads late.
          this._onChanged(model, 'death');
        }
      }
    }
    for (const model of Array.from(this._shown.keys())) {
      if (!models.has(model)) {
        // Its notebook closed. The notification stays until it is dismissed,
        // so it would otherwise go on speaking of a kernel that no panel
        // shows any more.
        this._release(model);
        model.changed.disconnect(this._onChanged, this);
        this._shown.delete(model);
      }
    }
  }

  private _onChanged(model: IKernelMemoryModel, change: ModelChange): void {
    if (change !== 'death' || !this._shown.has(model)) {
      return;
    }
    const shown = this._shown.get(model) ?? null;
    const death = model.death;
    if (!death) {
      this._release(model);
      return;
    }
    const text = kernelDeathText(() => {
      if (!this._isDisposed) {
        this._onChanged(model, 'death'); // Tell the death as it stands once the code has loaded.
      }
    });
    if (!text) {
      return;
    }
    let id: string | null = null;
    if (shown && sameDeath(shown.facts, death)) {
      id = shown.id;
    } else {
      // Another death of the same notebook's kernel replaces the one shown.
      this._release(model);
      id = this._notifiedByAnother(model, death);
    }
    if (id === null) {
      const explanation = text.explainKernelDeath(
        death,
        this._monitor.settings.units
      );
      id = this._notifications.emit(
        explanation.short,
        notificationType(explanation.verdict),
        {
          autoClose: false,
          actions: [
            { label: trans.__('Details'), callback: () => this._showDetails() }
          ]
        }
      );
      this._shown.set(model, { id, facts: death });
      return;
    }
    this._shown.set(model, { id, facts: death });
    this._retell(id, text);
  }

  /** Updates notification `id` to tell the death as seen by whichever of its notebooks knows the most. */
  private _retell(
    id: string,
    text: NonNullable<ReturnType<typeof kernelDeathText>>
  ): void {
    const explanation = text.explainKernelDeath(
      this._mostTelling(id),
      this._monitor.settings.units
    );
    this._notifications.update({
      id,
      message: explanation.short,
      type: notificationType(explanation.verdict)
    });
  }

  /**
   * Returns the notification that another notebook already shows for this
   * death, if any. Each notebook that shares a kernel sees that kernel die,
   * and a single notification should report it.
   */
  private _notifiedByAnother(
    model: IKernelMemoryModel,
    death: KernelDeathFacts
  ): string | null {
    const kernelId = this._kernelIdOf(model);
    if (kernelId === null) {
      return null;
    }
    for (const [other, shown] of this._shown) {
      if (
        other !== model &&
        shown &&
        shown.facts.status === death.status &&
        Math.abs(shown.facts.time - death.time) <= SAME_DEATH_SECONDS &&
        this._kernelIdOf(other) === kernelId
      ) {
        return shown.id;
      }
    }
    return null;
  }

  /**
   * Returns, of the deaths that notification `id` reports, the one that
   * knows the running cell, which is the death seen by the notebook that ran
   * the cell.
   */
  private _mostTelling(id: string): KernelDeathFacts {
    let telling: KernelDeathFacts | null = null;
    for (const shown of this._shown.values()) {
      if (
        shown?.id === id &&
        (!telling || (!telling.runningCell && shown.facts.runningCell))
      ) {
        telling = shown.facts;
      }
    }
    return telling!;
  }

  /**
   * Stops showing this notebook's notification. It is dismissed unless
   * another notebook shows it too; in that case it is told again from that
   * notebook's facts, because the cell it named may have been this
   * notebook's.
   */
  private _release(model: IKernelMemoryModel): void {
    const shown = this._shown.get(model);
    if (!shown) {
      return;
    }
    this._shown.set(model, null);
    if (![...this._shown.values()].some(other => other?.id === shown.id)) {
      this._notifications.dismiss(shown.id);
      return;
    }
    const text = kernelDeathText(() => undefined); // Already loaded, because it told this death.
    if (text) {
      this._retell(shown.id, text);
    }
  }

  private _kernelIdOf(model: IKernelMemoryModel): string | null {
    const entry = this._monitor.sessions().find(s => s.model === model);
    return entry?.sessionContext?.session?.kernel?.id ?? null;
  }

  private _monitor: Pick<
    MemoryMonitor,
    'sessions' | 'sessionsChanged' | 'settings'
  >;
  private _showDetails: () => void;
  private _notifications: INotifications;
  private _shown = new Map<
    IKernelMemoryModel,
    { id: string; facts: KernelDeathFacts } | null
  >();
  private _isDisposed = false;
}

/**
 * The most seconds between two notebooks' sightings of the same kernel
 * death. Each notebook learns of the death from its own kernel connection's
 * status message, so the times differ slightly.
 */
const SAME_DEATH_SECONDS = 5;

function notificationType(verdict: DeathVerdict): 'warning' | 'error' {
  return verdict === 'unknown' ? 'warning' : 'error';
}

/** Whether two sets of facts describe the same death, possibly with more evidence in one. */
function sameDeath(a: KernelDeathFacts, b: KernelDeathFacts): boolean {
  return a.time === b.time && a.status === b.status;
}
