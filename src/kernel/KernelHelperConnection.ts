/**
 * Keeps the memory helper running in one notebook's kernel and connected to
 * that notebook's KernelMemoryModel.
 *
 * For each kernel (the first one, and again after every restart, kernel
 * change or restored connection) it does the following; steps 1 to 3 live in
 * ./HelperDelivery.ts and ./helperBootstrap.ts:
 *   1. It reads `language_info.name`, because only Python kernels get the
 *      helper.
 *   2. It executes the helper's bootstrap code (./helperCode.ts) silently,
 *      so that it leaves no history, no Out[] and no cell hooks.
 *   3. In the same tick, it opens the comm with the protocol version and the
 *      sampling config. An error in the execute reply means that the helper
 *      could not start, and its ename and evalue are shown.
 *   4. It hands every comm message (hello, samples, `cells` records) to
 *      `model.ingest`, and settles the answers to its own requests
 *      (./HelperComm.ts).
 *   5. On each hello, it asks for the `history` that the helper kept (the
 *      per-cell records and the figures of the samples it sent lately), so
 *      that a reloaded page or a second frontend recovers them
 *      (./historyRecovery.ts).
 *
 * A kernel restart disposes every comm on the frontend side, so steps 1 to 3
 * run again once the restarted kernel is idle, or at once when a notebook
 * cell is about to be sent first (see deliverBeforeExecution).
 * ./KernelLifecycle.ts decides when to attach again after a restart, a
 * death, a kernel change or a lost connection. Each attach has a generation
 * number, and the steps of an attach that a newer one replaced are dropped.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { Kernel } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { SilenceWatch } from './SilenceWatch';
import {
  HelperConfig,
  HelperRequestResults,
  HelperRequestType,
  PartialHelperConfig
} from '../protocol/messages';
import { HelperDelivery } from './HelperDelivery';
import { HelperRequests } from './HelperRequests';
import { loadHelperBootstrapCode } from './helperCode';
import { HelperComm } from './HelperComm';
import { HelperRequestError } from './PendingRequests';
import { CommsLeftOpen, OpenComm } from './CommsLeftOpen';
import { HelperReadiness } from './HelperReadiness';
import { IOPubWatch } from './IOPubWatch';
import { KernelLifecycle } from './KernelLifecycle';
import { recoverHistory, RecoveredHistory } from './historyRecovery';
import { loadMessageReaders } from '../protocol/messageReaders';
import { trans } from '../text/translation';

/** The parts of a notebook's session context the connection uses. */
export type HelperSessionContext = Pick<
  ISessionContext,
  | 'session'
  | 'isReady'
  | 'ready'
  | 'kernelChanged'
  | 'statusChanged'
  | 'connectionStatusChanged'
>;

/** The state's sentence for when this page's connection to the kernel cannot use comms. */
export const noCommsText = (): string =>
  trans.__(
    'Another notebook or console in this page connected to this kernel first, and JupyterLab lets only that connection use its comms: monitor it from there, or reopen this notebook alone.'
  );

/** How long the `history` request may wait behind the cells that were queued before it. */
export const HISTORY_TIMEOUT_MS = 60 * 60_000;

/**
 * Keeps the memory helper running in one notebook's kernel and connected to
 * that notebook's model.
 */
export class KernelHelperConnection
  extends HelperRequests
  implements IDisposable
{
  constructor(options: KernelHelperConnection.IOptions) {
    super(options.cleanupTimeoutMs ?? 300_000);
    this._sessionContext = options.sessionContext;
    this._model = options.model;
    this._requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
    this._commsLeftOpen = options.commsLeftOpen ?? new CommsLeftOpen(null);
    this._channel = new HelperComm({
      model: this._model,
      onHello: () => this._recoverHistory()
    });
    this._channel.otherMessage.connect((_, data) =>
      this._otherMessage.emit(data)
    );
    this._delivery = new HelperDelivery({
      readiness: new HelperReadiness(
        options.bootstrapCode
          ? () => Promise.resolve(options.bootstrapCode as string)
          : loadHelperBootstrapCode
      ),
      model: this._model,
      config: () => options.config(),
      commsLeftOpen: kernelId => this._commsLeftOpen.take(kernelId),
      isCurrent: generation =>
        generation === this._generation && !this._isDisposed,
      adopt: comm => this._channel.adopt(comm),
      // Requests sent on the comm meanwhile (new settings) will get no
      // answer, so they are rejected now.
      abandon: () =>
        this._channel.reset(
          false,
          trans.__('The memory helper did not start in this kernel.')
        ),
      // A helper that was already in the kernel may have taken the comm, so
      // the kernel is told to close it.
      closeComm: () =>
        this._channel.reset(
          true,
          trans.__('The kernel skipped the memory helper behind a failed cell.')
        ),
      // While the kernel is busy with this request it runs no cell, and the
      // panel says what it is doing instead.
      sent: msgId => this._iopub.noteHelperRequest(msgId)
    });
    this._iopub = new IOPubWatch({
      model: this._model,
      channel: this._channel,
      restarting: () => this._lifecycle.restarting,
      restartedElsewhere: () => this._lifecycle.restartedElsewhere()
    });

    this._silence = new SilenceWatch({
      model: this._model,
      onSilent: () => this.reconnect()
    });

    this._lifecycle = new KernelLifecycle({
      sessionContext: this._sessionContext,
      model: this._model,
      channel: this._channel,
      iopub: this._iopub,
      commsLeftOpen: this._commsLeftOpen,
      isPython: kernelId => this._delivery.isPython(kernelId),
      attached: () => this._kernel,
      openComm: () => this.openComm,
      attach: kernel => this._attach(kernel),
      detach: reason => this._detach(reason)
    });
    this._attach(this._sessionContext.session?.kernel ?? null);
  }

  get model(): KernelMemoryModel {
    return this._model;
  }

  /** True while a comm to a helper is open, even if the helper has not said hello yet. */
  get isOpen(): boolean {
    return this._channel.comm !== null;
  }

  /** The comm that is open now, with its kernel; null when none is. */
  get openComm(): OpenComm | null {
    const comm = this._channel.comm;
    const kernel = this._kernel;
    return comm && kernel ? { kernelId: kernel.id, commId: comm.commId } : null;
  }

  /**
   * Tells the kernel that the page is going away. This is best effort: the
   * message may not leave the page in time, and CommsLeftOpen makes up for
   * that on the next page.
   */
  closeForPageExit(): void {
    this._generation++;
    this._iopub.stop();
    this._channel.drop(true);
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Asks for what the helper kept from before this comm (the per-cell
   * records and the figures of the samples it sent lately) and merges it
   * into the model. Resolves with the numbers of records and timeline rows
   * added. Bad records are reported as a problem and skipped; a bad timeline
   * is reported and left out as a whole.
   */
  async requestHistory(): Promise<RecoveredHistory> {
    const generation = this._generation;
    // The request is sent at hello, so it waits behind every cell queued
    // meanwhile (for example a Run All sent as the page opened). The kernel
    // answers only when those cells are done, and a reply that came after a
    // shorter timeout would be dropped, losing its records. A reset (a
    // restart or a closed comm) still ends the request at once.
    const result = await this._request(
      'history',
      {},
      Math.max(this._requestTimeoutMs, HISTORY_TIMEOUT_MS)
    );
    const readers = await loadMessageReaders();
    if (generation !== this._generation || this._isDisposed) {
      return { records: 0, samples: 0 }; // A helper this page no longer listens to answered.
    }
    return recoverHistory(this._model, result, readers);
  }

  /**
   * Emits the comm messages of helper features that the memory model does
   * not show (for example `allocation_recording`), exactly as the kernel
   * sent them, so listeners must treat them as untrusted data.
   */
  get otherMessage(): ISignal<this, unknown> {
    return this._otherMessage;
  }

  /** Bootstraps again and opens a new comm, for example after the helper failed. */
  reconnect(): void {
    // While the connection is lost, whatever is sent waits in services'
    // queue and goes out once the connection is back, next to the attach
    // that the reconnection makes. That would open a second comm that
    // nothing reads and that no later comm_open names for the helper to
    // close, so nothing is attached until then.
    if (!this._lifecycle.connectionLost) {
      this._attach(this._sessionContext.session?.kernel ?? null);
    }
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._generation++;
    this._silence.dispose();
    this._iopub.stop();
    Signal.clearData(this);
    this._lifecycle.dispose();
    // Tell the helper to stop sending to this comm, because the kernel may
    // live on after the notebook closes.
    this._channel.reset(true, trans.__('The notebook was closed.'));
    this._channel.dispose();
  }

  // -------------------------------------------------------------------------
  // Attaching: each attach of a kernel gets a new generation number.

  /** Forgets the current comm and requests, and invalidates bootstraps that are still running. */
  private _detach(reason: string): void {
    this._generation++;
    this._channel.reset(false, reason);
    this._model.setKernelBusy(false);
  }

  /**
   * Starts monitoring `kernel` from scratch; null means there is no kernel.
   * With `code`, the helper is delivered at once (see
   * deliverBeforeExecution).
   */
  private _attach(
    kernel: Kernel.IKernelConnection | null,
    code: string | null = null
  ): void {
    if (this._isDisposed) {
      return;
    }
    const closeOld =
      this._channel.comm !== null && !this._lifecycle.connectionLost;
    // For the same kernel (restarted or reconnected), what was heard earlier
    // about what keeps it busy still holds, because the wake-up request or a
    // bootstrap that this page sent runs no cell. For another kernel, being
    // busy counts as running a cell until its statuses say otherwise.
    const busyWith =
      kernel === this._kernel ? (this._model.kernelBusyWith ?? 'cell') : 'cell';
    this._kernel = kernel;
    this._generation++;
    this._channel.reset(closeOld, trans.__('The kernel changed.'));
    this._model.startKernelSession();
    this._model.setKernelBusy(kernel?.status === 'busy', busyWith);
    const generation = this._generation;
    if (!kernel) {
      this._iopub.stop();
      this._waitForKernel(generation);
      return;
    }
    if (kernel.handleComms === false) {
      // Services gives a kernel's comms only to the page's first connection
      // to that kernel. No comm can open here, so nothing is sent: the
      // bootstrap would run, but the comm would fail.
      this._iopub.stop();
      this._model.setKernelBusy(false);
      this._model.setState('disconnected', noCommsText());
      return;
    }
    // Until the new comm says hello, which a running cell may delay for
    // hours, the samples that the helper sends to other frontends' comms are
    // shown. A restart made by another frontend is also noticed there.
    this._iopub.listen(kernel);
    if (code !== null) {
      this._delivery.send(kernel, generation, code);
      return;
    }
    this._delivery.start(kernel, generation);
  }

  private _waitForKernel(generation: number): void {
    if (this._sessionContext.isReady) {
      this._model.setState(
        'disconnected',
        trans.__('This notebook has no kernel. Select one to see its memory.')
      );
      return;
    }
    this._model.setState('kernel-starting');
    void this._sessionContext.ready.then(
      () => {
        if (
          generation === this._generation &&
          !this._sessionContext.session?.kernel
        ) {
          this._model.setState(
            'disconnected',
            trans.__(
              'This notebook has no kernel. Select one to see its memory.'
            )
          );
        }
      },
      () => undefined
    );
  }

  /**
   * Called when a notebook cell is about to be sent to the kernel. If the
   * helper is not there yet (the kernel just started or restarted, as with
   * Run All or Restart and Run All) and it can be delivered at once (the
   * kernel is Python and the helper's code is loaded), it is sent now, ahead
   * of the cell. The kernel runs requests in order, so the cell is measured
   * and the panel is live while it runs. Otherwise the helper would wait
   * behind every queued cell, and none of those cells would get a record.
   */
  deliverBeforeExecution(): void {
    if (
      this._isDisposed ||
      this._channel.comm !== null ||
      this._lifecycle.connectionLost
    ) {
      return;
    }
    const kernel = this._sessionContext.session?.kernel ?? null;
    const code = this._delivery.code;
    if (
      !kernel ||
      kernel.status === 'dead' ||
      code === null ||
      !this._delivery.isPython(kernel.id)
    ) {
      return;
    }
    const lifecycle = this._lifecycle;
    if (lifecycle.restarting && kernel === this._kernel) {
      // The kernel was restarted and has not said 'idle' yet, so attach now
      // with the code.
      lifecycle.endRestart();
      this._attach(kernel, code);
    } else if (kernel === this._kernel && !lifecycle.restarting) {
      // The kernel is attached. The helper is sent now unless this attach
      // already sent it; if not, the attach is still waiting for the
      // language or the code.
      this._delivery.send(kernel, this._generation, code);
    }
  }

  protected _request<T extends HelperRequestType>(
    type: T,
    fields: { [key: string]: unknown },
    timeoutMs = this._requestTimeoutMs
  ): Promise<HelperRequestResults[T]> {
    return this._channel.request(type, fields, timeoutMs);
  }

  /** Recovers the records of the cells that ran before this comm opened, and the timeline before it. */
  private _recoverHistory(): void {
    const generation = this._generation;
    this.requestHistory().catch(reason => {
      // An abandoned request (the comm closed, the kernel restarted, or it
      // timed out behind a long cell) is normal, but an error answer is
      // worth reporting.
      if (
        reason instanceof HelperRequestError &&
        generation === this._generation &&
        !this._isDisposed
      ) {
        this._model.reportProblem(
          trans.__(
            'Could not recover the per-cell history and timeline (%1): %2',
            reason.code,
            reason.message
          )
        );
      }
    });
  }

  private _sessionContext: HelperSessionContext;
  private _silence: SilenceWatch;
  private _model: KernelMemoryModel;
  private _delivery: HelperDelivery;
  private _requestTimeoutMs: number;
  private _channel: HelperComm;
  private _iopub: IOPubWatch;
  private _lifecycle: KernelLifecycle;
  private _otherMessage = new Signal<this, unknown>(this);
  /** The kernel that the current or last attach was for. */
  private _kernel: Kernel.IKernelConnection | null = null;
  private _generation = 0;
  /** Comms open in kernels that nothing reads (an earlier page's, or a lost connection's), named in the next open's `replaces`. */
  private _commsLeftOpen: Pick<CommsLeftOpen, 'take' | 'add'>;
  private _isDisposed = false;
}

/** The types that go with KernelHelperConnection. */
export namespace KernelHelperConnection {
  /** The options a new KernelHelperConnection is constructed with. */
  export interface IOptions {
    sessionContext: HelperSessionContext;
    model: KernelMemoryModel;
    /** Returns the sampling config to open the comm with; it is read again at each open. */
    config: () => HelperConfig | PartialHelperConfig;
    /** The helper's bootstrap code; defaults to the generated helper bundle. */
    bootstrapCode?: string;
    /** How long a request may wait for its answer; the default is 60 s. */
    requestTimeoutMs?: number;
    /**
     * How long a cleanup request (free_memory, inspect, delete) may wait for
     * its answer once sent. The default is 300 s, because garbage collection
     * on a large heap is slow.
     */
    cleanupTimeoutMs?: number;
    /**
     * The comms left open in kernels (see CommsLeftOpen.ts): those of an
     * earlier page in this tab, and this connection's own when it is lost.
     * They are taken once for each comm that this connection opens and put
     * into the comm_open's `replaces`. By default only this connection's own
     * comms are tracked.
     */
    commsLeftOpen?: Pick<CommsLeftOpen, 'take' | 'add'>;
  }
}
