/**
 * Notices when a notebook's kernel dies without the user asking for it, and
 * tells the model, which keeps the last figures and the running cell so that
 * `explainKernelDeath` can explain the death.
 *
 * In @jupyterlab/services, a death and a restart that the user asked for
 * both begin with a `restarting` status. The user's restart comes from
 * `KernelConnection.restart()`, which `sessionContext.restartKernel()` and
 * the Restart command call; the server's comes from its restarter, which
 * found the kernel process gone. Only the server's restart is followed, in
 * the same tick (a microtask), by `autorestarting`. So at `restarting` the
 * model sets the last figures aside; `autorestarting` turns them into a
 * death, and a restart with no `autorestarting` by the next task was the
 * user's.
 *
 * A `dead` status means that the restarter gave up, or that the server no
 * longer has the kernel. A shutdown made through this notebook reports
 * `terminating` first and is not a death. A shutdown made elsewhere, for
 * example in the Running panel, cannot be told apart from a kernel that
 * vanished, so it is reported as a death of unknown cause, with the figures
 * the kernel had.
 *
 * The watch must see each status before the helper connection does, because
 * the connection forgets the old kernel's figures on a restart. The monitor
 * therefore creates the watch first, and Lumino calls slots in the order in
 * which they were connected.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { Kernel } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';

import { RunningCell } from '../model/kernelDeath';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { RunningCellTracker } from './RunningCellTracker';

/** The parts of a session context the watch uses. */
export type DeathWatchSessionContext = Pick<
  ISessionContext,
  'session' | 'kernelChanged' | 'statusChanged'
>;

/**
 * Watches one notebook's kernel and tells the model when it dies without the
 * user asking.
 */
export class KernelDeathWatch implements IDisposable {
  constructor(options: {
    sessionContext: DeathWatchSessionContext;
    model: KernelMemoryModel;
    /** Finds the one notebook cell whose source is `code`, sent by `client` (see RunningCellTracker). */
    cellIdOfCode?: (code: string, client: string | null) => string | null;
  }) {
    this._sessionContext = options.sessionContext;
    this._model = options.model;
    this._tracker = new RunningCellTracker(undefined, options.cellIdOfCode);
    const sc = this._sessionContext;
    sc.statusChanged.connect(this._onStatusChanged, this);
    sc.kernelChanged.connect(this._onKernelChanged, this);
    this._kernel = sc.session?.kernel ?? null;
    this._tracker.attach(this._kernel);
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** The running-cell tracker, exposed for tests. */
  get tracker(): RunningCellTracker {
    return this._tracker;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    const sc = this._sessionContext;
    sc.statusChanged.disconnect(this._onStatusChanged, this);
    sc.kernelChanged.disconnect(this._onKernelChanged, this);
    this._tracker.dispose();
  }

  private _onKernelChanged(
    _: unknown,
    change: { newValue: Kernel.IKernelConnection | null }
  ): void {
    if (change.newValue === this._kernel) {
      return; // A restart emits kernelChanged with the same connection; nothing changed.
    }
    const previous = this._kernel;
    this._kernel = change.newValue;
    this._tracker.attach(change.newValue);
    this._noted = false;
    if (previous) {
      this._model.noteKernelChange(); // This also clears a recorded death.
    } else {
      this._model.clearKernelDeath();
    }
  }

  private _onStatusChanged(_: unknown, status: Kernel.Status | string): void {
    switch (status) {
      case 'restarting':
        if (!this._restartPending) {
          this._restartPending = true;
          this._running = this._tracker.running;
          this._model.captureBeforeRestart();
          setTimeout(() => this._settleRestart(), 0);
        }
        this._tracker.reset();
        break;
      case 'autorestarting':
        if (this._restartPending || !this._noted) {
          const running = this._restartPending
            ? this._running
            : this._tracker.running;
          this._restartPending = false;
          this._note('autorestarting', running);
        }
        this._tracker.reset();
        break;
      case 'terminating':
        this._shuttingDown = true;
        break;
      case 'dead':
        if (!this._shuttingDown) {
          this._note('dead');
        }
        break;
      case 'idle':
      case 'busy':
        // The kernel, started or restarted, is answering, so a later death
        // is a new one.
        this._noted = false;
        this._shuttingDown = false;
        break;
      default:
        break;
    }
  }

  /** Runs a task after `restarting`; if no `autorestarting` came by then, the user asked for the restart. */
  private _settleRestart(): void {
    if (this._isDisposed || !this._restartPending) {
      return;
    }
    this._restartPending = false;
    this._running = null;
    this._noted = false;
    this._model.settleRestart();
  }

  private _note(
    status: 'autorestarting' | 'dead',
    running = this._tracker.running
  ): void {
    if (this._noted) {
      // This is `dead` after a failed automatic restart, or the restarted
      // process dying before it answered, so it is the same death. What the
      // later `restarting` captured is empty, because the figures went with
      // the first death, and it must not stand in for the figures of the
      // next process's end.
      this._model.dropRestartCapture();
      return;
    }
    this._noted = true;
    this._model.noteKernelDeath(status, running);
  }

  private _sessionContext: DeathWatchSessionContext;
  private _model: KernelMemoryModel;
  private _kernel: Kernel.IKernelConnection | null;
  private _tracker: RunningCellTracker;
  private _restartPending = false;
  private _running: RunningCell | null = null;
  private _shuttingDown = false;
  private _noted = false;
  private _isDisposed = false;
}
