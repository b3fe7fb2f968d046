/**
 * Shows a JupyterLab notification when a monitored kernel dies without the
 * user asking, with the gist of `explainKernelDeath` and a button to the
 * panel. The notification follows the facts: it is updated when the
 * restarted kernel brings evidence, such as its container's OOM kill count,
 * and dismissed when the user restarts or changes the kernel or closes its
 * notebook. Notebooks that share a kernel share its notification.
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

/** What the notifier needs of JupyterLab's Notification (fakes in tests). */
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
          this._onChanged(model, 'death'); // died before this notifier was made (its code loads late)
        }
      }
    }
    for (const model of Array.from(this._shown.keys())) {
      if (!models.has(model)) {
        // Its notebook closed: the notification, which stays until dismissed,
        // would go on speaking of a kernel no panel shows any more.
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
        this._onChanged(model, 'death'); // the death as it is then
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

  /** Update notification `id` to tell the death of its notebooks that knows the most. */
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
   * The notification another notebook shows of this death: notebooks that
   * share one kernel each see it die, and one notification says it.
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

  /** Of the deaths notification `id` says, the one that knows the running cell (the notebook that ran it). */
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
   * This notebook no longer shows its notification: dismissed unless another
   * shows it too, which then tells it (the cell it named may have been this
   * notebook's).
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
    const text = kernelDeathText(() => undefined); // loaded: it told this death
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
 * Two notebooks on one kernel see its death within this many seconds of each
 * other (each from its own kernel connection's status message).
 */
const SAME_DEATH_SECONDS = 5;

function notificationType(verdict: DeathVerdict): 'warning' | 'error' {
  return verdict === 'unknown' ? 'warning' : 'error';
}

/** The same death, maybe with more evidence. */
function sameDeath(a: KernelDeathFacts, b: KernelDeathFacts): boolean {
  return a.time === b.time && a.status === b.status;
}
