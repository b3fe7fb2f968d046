/**
 * A JupyterLab notification when a monitored kernel dies without the user
 * asking: the gist of `explainKernelDeath`, with a button to the panel. The
 * notification follows the facts: updated when the restarted kernel brings
 * evidence (its container's OOM kill count), dismissed when the user
 * restarts or changes the kernel, or closes its notebook.
 */
import { IDisposable } from '@lumino/disposable';

import type { KernelDeathFacts } from './model/kernelDeath';
import { kernelDeathText } from './model/lazyKernelDeath';
import { MemoryMonitor } from './model/MemoryMonitor';
import { IKernelMemoryModel, ModelChange } from './tokens';

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
  update(args: { id: string; message: string; type: 'warning' | 'error' }): boolean;
  dismiss(id: string): void;
}

export class DeathNotifier implements IDisposable {
  constructor(options: {
    monitor: Pick<MemoryMonitor, 'sessions' | 'sessionsChanged' | 'settings'>;
    showDetails: () => void;
    /** JupyterLab's Notification (index.ts), a fake in tests. */
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
      }
    }
    for (const model of Array.from(this._shown.keys())) {
      if (!models.has(model)) {
        // Its notebook closed: the notification, which stays until dismissed,
        // would go on speaking of a kernel no panel shows any more.
        const shown = this._shown.get(model);
        if (shown) {
          this._notifications.dismiss(shown.id);
        }
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
      if (shown) {
        this._notifications.dismiss(shown.id);
      }
      this._shown.set(model, null);
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
    const explanation = text.explainKernelDeath(death, this._monitor.settings.units);
    const type = explanation.verdict === 'unknown' ? 'warning' : 'error';
    if (shown && sameDeath(shown.facts, death)) {
      this._notifications.update({
        id: shown.id,
        message: explanation.short,
        type
      });
      this._shown.set(model, { id: shown.id, facts: death });
      return;
    }
    if (shown) {
      // Another death of the same notebook's kernel: it replaces the one shown.
      this._notifications.dismiss(shown.id);
    }
    const id = this._notifications.emit(explanation.short, type, {
      autoClose: false,
      actions: [{ label: 'Details', callback: () => this._showDetails() }]
    });
    this._shown.set(model, { id, facts: death });
  }

  private _monitor: Pick<MemoryMonitor, 'sessions' | 'sessionsChanged' | 'settings'>;
  private _showDetails: () => void;
  private _notifications: INotifications;
  private _shown = new Map<
    IKernelMemoryModel,
    { id: string; facts: KernelDeathFacts } | null
  >();
  private _isDisposed = false;
}

/** The same death, maybe with more evidence. */
function sameDeath(a: KernelDeathFacts, b: KernelDeathFacts): boolean {
  return a.time === b.time && a.status === b.status;
}
