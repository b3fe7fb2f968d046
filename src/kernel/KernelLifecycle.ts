/**
 * Follows the events in a notebook's kernel that the connection must act
 * on: a restart (made by this page, made automatically, or made by another
 * page, which only IOPub reports), a death, a kernel change, or a websocket
 * that was lost and came back. Each of these ends the comm the connection
 * had, because JupyterLab disposes every comm of a restarting kernel and a
 * lost connection loses the messages sent meanwhile. The kernel is then
 * attached again once it can take the helper.
 *
 * KernelHelperConnection does the attaching and gives each attach a
 * generation number. This file decides when to attach, from the session
 * context's signals and from IOPubWatch's report of a restart made by
 * another page.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { Kernel } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { CommsLeftOpen, OpenComm } from './CommsLeftOpen';
import { HelperComm } from './HelperComm';
import { SILENT } from './silentExecution';
import { IOPubWatch } from './IOPubWatch';
import { ignoreRejection } from './kernelFailures';
import { trans } from '../text/translation';

/** The parts of a session context the lifecycle follows. */
export type LifecycleSessionContext = Pick<
  ISessionContext,
  'session' | 'kernelChanged' | 'statusChanged' | 'connectionStatusChanged'
>;

/** The parts of the connection that the lifecycle uses. */
export interface IKernelLifecycleHost {
  sessionContext: LifecycleSessionContext;
  model: KernelMemoryModel;
  /** This page's comm to the helper. */
  channel: HelperComm;
  iopub: IOPubWatch;
  /** Comms open in kernels that nothing reads, for the next open's `replaces`. */
  commsLeftOpen: Pick<CommsLeftOpen, 'add'>;
  /** True when the kernel's language is known to be a Python version that the helper supports. */
  isPython(kernelId: string): boolean;
  /** The kernel that the current or last attach was for. */
  attached(): Kernel.IKernelConnection | null;
  /** The comm that is open now, with its kernel; null when none is. */
  openComm(): OpenComm | null;
  /** Starts monitoring `kernel` from scratch; null means there is no kernel. */
  attach(kernel: Kernel.IKernelConnection | null): void;
  /** Forgets the current comm and requests, and invalidates bootstraps that are still running. */
  detach(reason: string): void;
}

/**
 * Follows what happens to a notebook's kernel (restarts, deaths, changes, lost
 * websockets) and tells the connection.
 */
export class KernelLifecycle implements IDisposable {
  constructor(host: IKernelLifecycleHost) {
    this._host = host;
    const sc = host.sessionContext;
    sc.kernelChanged.connect(this._onKernelChanged, this);
    sc.statusChanged.connect(this._onStatusChanged, this);
    sc.connectionStatusChanged.connect(this._onConnectionStatusChanged, this);
  }

  /** True while a restart that this page was told about is under way and the restarted kernel has not said 'idle' yet. */
  get restarting(): boolean {
    return this._restarting;
  }

  /** True when the websocket to the kernel was lost and has not come back yet. */
  get connectionLost(): boolean {
    return this._connectionLost;
  }

  /** Ends the restart early, because the restarted kernel gets its helper now (ahead of a cell) rather than at 'idle'. */
  endRestart(): void {
    this._restarting = false;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    const sc = this._host.sessionContext;
    sc.kernelChanged.disconnect(this._onKernelChanged, this);
    sc.statusChanged.disconnect(this._onStatusChanged, this);
    sc.connectionStatusChanged.disconnect(
      this._onConnectionStatusChanged,
      this
    );
  }

  /**
   * Handles a restart made by another frontend, of which this page saw no
   * `restarting` status (see IOPubWatch). This page's comm, and any of its
   * requests still queued behind a cell (the helper's bootstrap, or
   * JupyterLab's kernel info request), died with the old process, so the
   * restart is recorded and the page connects again.
   */
  restartedElsewhere(): void {
    const host = this._host;
    host.model.captureBeforeRestart();
    host.model.settleRestart();
    // The comm_open may have reached the new process all the same, if it was
    // sent as the restart happened, so the next open names this comm for the
    // helper to close.
    const maybeInNewProcess = host.openComm();
    if (maybeInNewProcess) {
      host.commsLeftOpen.add(maybeInNewProcess);
    }
    host.iopub.retire();
    host.channel.reset(
      false,
      trans.__('The kernel was restarted from another page.')
    );
    const kernel = this._sessionKernel();
    if (kernel) {
      // A page opened during the old process's cell has no info reply yet,
      // and the delivery waits for one. Asking now makes the new process
      // answer at once (services settles `kernel.info` with its reply)
      // rather than at the next retry.
      try {
        ignoreRejection(kernel.requestKernelInfo());
      } catch {
        // The connection is being disposed, which the attach below finds out.
      }
    }
    host.attach(kernel);
  }

  private _onKernelChanged(
    _: unknown,
    change: { newValue: Kernel.IKernelConnection | null }
  ): void {
    const host = this._host;
    // SessionContext.restartKernel() also emits kernelChanged, with the same
    // kernel, when the restart is over. If the restarted kernel already got
    // its helper on 'idle', there is nothing left to do.
    if (
      change.newValue !== null &&
      change.newValue === host.attached() &&
      !this._restarting
    ) {
      return;
    }
    // Services disposed the old kernel's connection before saying so, so the
    // comm cannot be closed through it. If that kernel lives on as another
    // notebook's, the next open there names the comm for the helper to close.
    const old = host.attached();
    const open = host.openComm();
    if (old && old !== change.newValue && old.isDisposed && open) {
      host.commsLeftOpen.add(open);
    }
    this._restarting = false;
    this._connectionLost = false;
    host.attach(change.newValue);
  }

  private _onStatusChanged(_: unknown, status: Kernel.Status): void {
    const host = this._host;
    // Busy and idle for cells come from IOPubWatch, because this status also
    // follows other requests, such as comm messages and other pages'
    // subshells.
    switch (status) {
      case 'idle':
        if (this._restarting) {
          // The restarted kernel has answered, so the helper is delivered
          // again.
          this._restarting = false;
          host.attach(this._sessionKernel());
        }
        break;
      case 'starting':
        this._nudgeRestartedKernel();
        break;
      case 'restarting':
      case 'autorestarting':
        // The frontend disposes every comm of a restarting kernel.
        this._restarting = true;
        this._nudged = false;
        host.iopub.retire();
        host.detach(
          trans.__('The kernel restarted, so the helper connection is gone.')
        );
        // The figures described the old process.
        host.model.startKernelSession();
        host.model.setState(
          'kernel-starting',
          status === 'autorestarting'
            ? trans.__('The kernel died and is restarting\u2026')
            : trans.__('The kernel is restarting\u2026')
        );
        break;
      case 'dead':
        host.iopub.stop();
        host.detach(trans.__('The kernel died.'));
        host.model.setState(
          'disconnected',
          trans.__('The kernel is dead. Restart it to resume monitoring.')
        );
        break;
      default:
        break;
    }
  }

  private _onConnectionStatusChanged(
    _: unknown,
    status: Kernel.ConnectionStatus
  ): void {
    const host = this._host;
    if (status === 'connected') {
      // The connection is back. When a restart brought it back, the
      // restarted kernel's 'idle' does the attaching.
      const lost = this._connectionLost;
      this._connectionLost = false;
      if (this._restarting) {
        this._nudgeRestartedKernel();
      } else if (lost) {
        // Comm messages sent meanwhile are lost, so start over cleanly. This
        // is safe because the bootstrap is idempotent in the kernel.
        host.attach(this._sessionKernel());
      }
      return;
    }
    if (this._restarting) {
      return; // A restart reconnects the websocket on purpose.
    }
    const kernel = host.sessionContext.session?.kernel;
    // On a kernel change, services disposes the old kernel's connection,
    // which says 'disconnected', before it says the kernel changed. That is
    // not a lost connection, and the change attaches the new kernel.
    if (
      !kernel ||
      kernel.isDisposed ||
      kernel !== host.attached() ||
      kernel.status === 'dead'
    ) {
      return;
    }
    this._connectionLost = true;
    // The kernel still has the comm, so the next open names it in
    // `replaces` and the helper stops sending to it. Services keeps no comm
    // across the reconnection, so this page never hears of it again.
    const lost = host.openComm();
    if (lost) {
      host.commsLeftOpen.add(lost);
    }
    // Answers sent meanwhile are lost, because the comm is opened anew once
    // the connection is back. The requests therefore fail now rather than at
    // their timeout, which for a cleanup is minutes of a spinning indicator.
    host.detach(trans.__('Lost the connection to the kernel.'));
    host.model.setState(
      'disconnected',
      status === 'connecting'
        ? trans.__('Lost the connection to the kernel; reconnecting\u2026')
        : trans.__('Lost the connection to the kernel.')
    );
  }

  /**
   * After a restart, the helper is delivered when the kernel says 'idle'.
   * JupyterLab asks the new process for its info as the websocket
   * reconnects, and the kernel answers on the shell channel. The statuses it
   * publishes around that answer can be gone before the page's IOPub is
   * joined to the new process, and the status then stays 'starting' or
   * 'unknown' until the kernel runs something (this happens after an
   * automatic restart with JupyterLab 4.6 and ipykernel 7). So, once per
   * restart, an empty silent execution makes the kernel say busy and then
   * idle. JupyterLab queues it behind its own info request, so it reaches
   * the new process.
   */
  private _nudgeRestartedKernel(): void {
    const kernel = this._host.sessionContext.session?.kernel;
    // Only a kernel that the helper goes into is nudged, because another
    // kernel may count even an empty silent execution.
    if (
      !this._restarting ||
      this._nudged ||
      !kernel ||
      !this._host.isPython(kernel.id)
    ) {
      return;
    }
    this._nudged = true;
    try {
      const nudge = kernel.requestExecute({ ...SILENT, code: '' }, true);
      // While the kernel is busy with this request it is starting for the
      // helper and runs no cell, which IOPubWatch must know.
      this._host.iopub.noteHelperRequest(nudge.msg.header.msg_id);
      ignoreRejection(nudge.done);
    } catch {
      // The kernel died again; its next status will say so.
    }
  }

  /** The session's current kernel, or null when it has none. */
  private _sessionKernel(): Kernel.IKernelConnection | null {
    return this._host.sessionContext.session?.kernel ?? null;
  }

  private _host: IKernelLifecycleHost;
  private _restarting = false;
  private _connectionLost = false;
  /** True once the restarted kernel was asked to run an empty cell (see _nudgeRestartedKernel). */
  private _nudged = false;
  private _isDisposed = false;
}
