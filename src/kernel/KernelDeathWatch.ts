/**
 * Notices when a notebook's kernel dies without the user asking, and tells
 * the model (which keeps the last figures and the running cell for
 * `explainKernelDeath`).
 *
 * How a death is told from a restart the user asked for, in
 * @jupyterlab/services:
 * - `restarting`: the frontend's own `KernelConnection.restart()` (what
 *   `sessionContext.restartKernel()` and the Restart command call) sets it
 *   before asking the server: a user restart, here or in another tab.
 * - `autorestarting`: the server's restarter found the kernel process gone
 *   and started a new one (its `restarting` iopub status becomes
 *   `autorestarting` in the frontend): a death.
 * - `dead`: the restarter gave up, or the server has no such kernel any
 *   more; but a user's shutdown also passes through `dead`, and then
 *   disposes the kernel connection right away. So `dead` counts only when
 *   the connection is still there a moment later.
 *
 * It must see a status before the helper connection does (which forgets the
 * old kernel's figures on a restart): the monitor creates it first, and
 * Lumino calls slots in the order they were connected.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { Kernel } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { RunningCellTracker } from './RunningCellTracker';

/** The parts of a session context the watch uses. */
export type DeathWatchSessionContext = Pick<
  ISessionContext,
  'session' | 'kernelChanged' | 'statusChanged'
>;

export class KernelDeathWatch implements IDisposable {
  constructor(options: {
    sessionContext: DeathWatchSessionContext;
    model: KernelMemoryModel;
  }) {
    this._sessionContext = options.sessionContext;
    this._model = options.model;
    const sc = this._sessionContext;
    sc.statusChanged.connect(this._onStatusChanged, this);
    sc.kernelChanged.connect(this._onKernelChanged, this);
    this._kernel = sc.session?.kernel ?? null;
    this._tracker.attach(this._kernel);
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** The running-cell tracker (for tests). */
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
      return; // a restart's kernelChanged: the same connection
    }
    this._kernel = change.newValue;
    this._tracker.attach(change.newValue);
    this._noted = false;
    this._model.clearKernelDeath();
  }

  private _onStatusChanged(_: unknown, status: Kernel.Status): void {
    switch (status) {
      case 'restarting':
        // Asked for: the last death is over and done with.
        this._userRestart = true;
        this._noted = false;
        this._tracker.reset();
        this._model.clearKernelDeath();
        break;
      case 'autorestarting':
        if (!this._userRestart) {
          this._note('autorestarting');
        }
        this._tracker.reset();
        break;
      case 'dead': {
        const kernel = this._sessionContext.session?.kernel ?? null;
        const running = this._tracker.running;
        // A shutdown disposes the connection right after `dead`.
        setTimeout(() => {
          if (!this._isDisposed && kernel && !kernel.isDisposed) {
            this._note('dead', running);
          }
        }, 0);
        break;
      }
      case 'idle':
      case 'busy':
        // The (re)started kernel answers: a later death is a new one.
        this._userRestart = false;
        this._noted = false;
        break;
      default:
        break;
    }
  }

  private _note(
    status: 'autorestarting' | 'dead',
    running = this._tracker.running
  ): void {
    if (this._noted) {
      return; // `dead` after a failed automatic restart: the same death
    }
    this._noted = true;
    this._model.noteKernelDeath(status, running);
  }

  private _sessionContext: DeathWatchSessionContext;
  private _model: KernelMemoryModel;
  private _kernel: Kernel.IKernelConnection | null;
  private _tracker = new RunningCellTracker();
  private _userRestart = false;
  private _noted = false;
  private _isDisposed = false;
}
