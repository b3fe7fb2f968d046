/**
 * Keeps the memory helper running in one notebook's kernel and connected to
 * that notebook's KernelMemoryModel.
 *
 * For each kernel (the first one, after every restart, after a kernel change,
 * after the connection comes back) it (steps 1-3: ./HelperDelivery.ts and
 * ./helperBootstrap.ts):
 *   1. reads `language_info.name` (only Python kernels get the helper);
 *   2. executes the helper's bootstrap code (./helperCode.ts) silently (no
 *      history, no Out[], no cell hooks), and
 *   3. opens the comm with the protocol version and the sampling config, in
 *      the same tick (an error in the execute reply means the helper could
 *      not start: its ename/evalue is shown);
 *   4. hands every comm message to `model.ingest` (hello, samples, `cells`
 *      records), and settles the answers to its own requests (./HelperComm.ts);
 *   5. on each hello, asks for the `history` the helper kept (per-cell
 *      records and the figures of the samples it sent lately), so a reloaded
 *      page or a second frontend recovers them (./historyRecovery.ts).
 *
 * A kernel restart disposes every comm on the frontend side, so step 1-3
 * run again once the restarted kernel is idle, or at once when a notebook
 * cell is about to be sent first (deliverBeforeExecution); when to attach
 * anew after a restart, a death, a kernel change or a lost connection is
 * ./KernelLifecycle.ts's to say. Each run has a generation number: the
 * steps of a run that a newer run replaced are dropped.
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

/** The state's sentence where this page's connection to the kernel has no comms. */
export const noCommsText = (): string =>
  trans.__(
    'Another notebook or console in this page connected to this kernel first, and JupyterLab lets only that connection use its comms: monitor it from there, or reopen this notebook alone.'
  );

/** How long the `history` request may wait behind the cells queued before it. */
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
      // Requests sent on it meanwhile (new settings) will get no answer.
      abandon: () =>
        this._channel.reset(
          false,
          trans.__('The memory helper did not start in this kernel.')
        ),
      // A helper already there may have taken it: the kernel is told to close it.
      closeComm: () =>
        this._channel.reset(
          true,
          trans.__('The kernel skipped the memory helper behind a failed cell.')
        ),
      // The kernel busy with it runs no cell: the panel says what it does.
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

  /** True while a comm to a helper is open (the helper may not have said hello yet). */
  get isOpen(): boolean {
    return this._channel.comm !== null;
  }

  /** The comm open now and its kernel; null when none. */
  get openComm(): OpenComm | null {
    const comm = this._channel.comm;
    const kernel = this._kernel;
    return comm && kernel ? { kernelId: kernel.id, commId: comm.commId } : null;
  }

  /**
   * The page is going away: tell the kernel (best effort: the message may
   * not leave the page in time, which CommsLeftOpen makes up for).
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
   * Ask for what the helper kept from before this comm (per-cell records,
   * and the figures of the samples it sent lately) and merge it into the
   * model; resolves with the numbers of records and timeline rows added.
   * Bad records are reported as a problem and skipped; a bad timeline is
   * reported and left out whole.
   */
  async requestHistory(): Promise<RecoveredHistory> {
    const generation = this._generation;
    // Asked at hello, it waits behind every cell queued meanwhile (a Run All
    // sent as the page opened): the kernel answers when they are done, and a
    // reply after a shorter timeout would be dropped, its records lost to
    // the page. A reset (restart, closed comm) still ends it at once.
    const result = await this._request(
      'history',
      {},
      Math.max(this._requestTimeoutMs, HISTORY_TIMEOUT_MS)
    );
    if (generation !== this._generation || this._isDisposed) {
      return { records: 0, samples: 0 }; // answered by a helper we no longer listen to
    }
    return recoverHistory(this._model, result);
  }

  /**
   * Comm messages of helper features the memory model does not show (e.g.
   * `allocation_recording`), as the kernel sent them: untrusted data.
   */
  get otherMessage(): ISignal<this, unknown> {
    return this._otherMessage;
  }

  /** Bootstrap again and open a new comm (e.g. after the helper failed). */
  reconnect(): void {
    // While the connection is lost, what is sent waits in services' queue
    // and goes out once it is back, beside the attach that makes: a second
    // comm that nothing reads and no open names for the helper to close.
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
    // Tell the helper to stop sending to this comm (the kernel may live on).
    this._channel.reset(true, trans.__('The notebook was closed.'));
    this._channel.dispose();
  }

  // -------------------------------------------------------------------------
  // Runs: one attach of a kernel each

  /** Forget the current comm and requests; invalidates running bootstraps. */
  private _detach(reason: string): void {
    this._generation++;
    this._channel.reset(false, reason);
    this._model.setKernelBusy(false);
  }

  /**
   * Start monitoring `kernel` from scratch (null: no kernel); with `code`,
   * deliver the helper at once (see deliverBeforeExecution).
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
    // The same kernel (restarted, reconnected): what keeps it busy, heard
    // before, still holds (the wake-up or a bootstrap this page sent runs no
    // cell); another kernel's busy is a cell's until its statuses say.
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
      // Services gives a kernel's comms to the page's first connection to it
      // only: no comm can open here, so nothing is sent (the bootstrap would
      // run, and the comm fail).
      this._iopub.stop();
      this._model.setKernelBusy(false);
      this._model.setState('disconnected', noCommsText());
      return;
    }
    // Until the new comm says hello (a running cell may delay it for hours),
    // the samples the helper sends to other frontends' comms are shown; and
    // a restart from another frontend is heard there.
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
   * A notebook cell is about to be sent to the kernel. If the helper is not
   * there yet (a kernel just started or restarted: Run All, Restart and Run
   * All) and can be delivered at once (a Python kernel, its code loaded), it
   * is sent now, ahead of the cell: the kernel runs requests in order, so
   * the cell runs measured and the panel is live while it runs. Otherwise
   * the helper would wait behind every queued cell, and none of them would
   * have a record.
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
      // Restarted, and the restarted kernel has not said 'idle' yet.
      lifecycle.endRestart();
      this._attach(kernel, code);
    } else if (kernel === this._kernel && !lifecycle.restarting) {
      // Attached: sent unless its run already sent it (else it still awaits
      // the language or the code).
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

  /** Recover the records of cells that ran before this comm opened, and the timeline before it. */
  private _recoverHistory(): void {
    const generation = this._generation;
    this.requestHistory().catch(reason => {
      // Abandoned (comm closed, kernel restarted, timed out behind a long
      // cell) is normal; an error answer is worth a note.
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
  /** The kernel the current (or last) attach was for. */
  private _kernel: Kernel.IKernelConnection | null = null;
  private _generation = 0;
  /** Comms open in kernels that nothing reads (an earlier page's, a lost connection's), for the next open's `replaces`. */
  private _commsLeftOpen: Pick<CommsLeftOpen, 'take' | 'add'>;
  private _isDisposed = false;
}

/** The types that go with KernelHelperConnection. */
export namespace KernelHelperConnection {
  /** The options a new KernelHelperConnection is constructed with. */
  export interface IOptions {
    sessionContext: HelperSessionContext;
    model: KernelMemoryModel;
    /** The sampling config to open the comm with (read at each open). */
    config: () => HelperConfig | PartialHelperConfig;
    /** Defaults to the generated helper bundle. */
    bootstrapCode?: string;
    /** How long a request may wait for its answer (default 60 s). */
    requestTimeoutMs?: number;
    /**
     * How long a cleanup request (free_memory, inspect, delete) may wait
     * for its answer once sent (default 300 s: gc on a large heap is slow).
     */
    cleanupTimeoutMs?: number;
    /**
     * The comms left open in kernels (see CommsLeftOpen.ts): an earlier
     * page's in this tab, and this connection's own when it is lost. Taken
     * once per comm this connection opens, into the comm_open's `replaces`.
     * Default: this connection's own only.
     */
    commsLeftOpen?: Pick<CommsLeftOpen, 'take' | 'add'>;
  }
}
