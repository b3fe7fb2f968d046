/**
 * The one comm that a connection has open to the helper in its kernel. Every
 * message the comm brings goes to the model (`ingest`), and answers settle
 * the requests sent on it; a request goes out with an id and waits for its
 * answer. A comm that is no longer used is dropped with its handlers, so
 * that nothing a dropped comm brings can reach the model.
 *
 * KernelHelperConnection decides when a comm is adopted or dropped, on
 * kernel restarts, changes and reconnects; this file knows nothing of
 * those.
 */
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import type {
  HelperRequestResults,
  HelperRequestType
} from '../protocol/messages';
import { claimsHello } from '../protocol/messageReaders';
import { describeFailure, ignoreRejection } from './kernelFailures';
import { PendingRequests } from './PendingRequests';
import { trans } from '../text/translation';

/** The one comm that a connection has open to the helper in its kernel. */
export class HelperComm {
  constructor(options: HelperComm.IOptions) {
    this._model = options.model;
    this._onHello = options.onHello;
  }

  /** The comm in use; null when none. */
  get comm(): Kernel.IComm | null {
    return this._comm;
  }

  /** True once the comm in use brought the helper's hello. */
  get helloSeen(): boolean {
    return this._comm !== null && this._helloSeen;
  }

  /**
   * Emits the messages of helper features that the memory model does not
   * show (for example `allocation_recording`), exactly as the kernel sent
   * them, so listeners must treat them as untrusted data.
   */
  get otherMessage(): ISignal<this, unknown> {
    return this._otherMessage;
  }

  /** Makes `comm` the comm in use; the previous one must have been dropped first. */
  adopt(comm: Kernel.IComm): void {
    comm.onMsg = msg => this._onMsg(comm, msg);
    comm.onClose = () => this._onClose(comm);
    this._comm = comm;
    this._helloSeen = false;
  }

  /** Forgets the comm; with `sendClose`, the kernel side is told to close it too. */
  drop(sendClose: boolean): void {
    const comm = this._comm;
    this._comm = null;
    if (!comm) {
      return;
    }
    comm.onMsg = () => undefined;
    comm.onClose = () => undefined;
    if (comm.isDisposed) {
      return;
    }
    try {
      if (sendClose) {
        ignoreRejection(comm.close().done);
      } else {
        comm.dispose();
      }
    } catch {
      comm.dispose();
    }
  }

  /**
   * Drops the comm (with `sendClose`, the kernel side is told too) and
   * rejects every request still waiting for an answer with `reason`,
   * because the helper will not answer it on another comm.
   */
  reset(sendClose: boolean, reason: string): void {
    this.drop(sendClose);
    this._requests.rejectAll(reason);
  }

  /** Sends a request and waits for its answer, for at most `timeoutMs`. */
  async request<T extends HelperRequestType>(
    type: T,
    fields: { [key: string]: unknown },
    timeoutMs: number
  ): Promise<HelperRequestResults[T]> {
    const comm = this._comm;
    if (!comm) {
      throw new Error(
        trans.__('The memory helper is not connected to this kernel.')
      );
    }
    const { requestId, result } = this._requests.add(type, timeoutMs);
    try {
      ignoreRejection(
        comm.send({ ...fields, type, request_id: requestId } as any).done
      );
    } catch (reason) {
      this._requests.settle({
        type: 'error',
        request_id: requestId,
        code: 'send_failed',
        message: describeFailure(trans.__('could not send the request'), reason)
      });
    }
    return (await result) as unknown as HelperRequestResults[T];
  }

  dispose(): void {
    Signal.clearData(this);
  }

  private _onMsg(comm: Kernel.IComm, msg: KernelMessage.ICommMsgMsg): void {
    if (comm !== this._comm) {
      return;
    }
    const data = msg.content.data;
    if (this._helloSeen && claimsHello(data)) {
      // Only the helper's first hello on a comm says who it is and which
      // protocol it speaks; a later one can only come from code in the
      // kernel writing onto this comm.
      this._model.noteIgnoredMessage(
        trans.__('a second hello on the same connection')
      );
      return;
    }
    const result = this._model.ingest(data);
    if (claimsHello(data) && result.kind !== 'malformed') {
      this._helloSeen = true;
    }
    if (result.kind === 'unsupported') {
      this._otherMessage.emit(data);
      return;
    }
    if (result.kind === 'malformed') {
      this._rejectMalformedAnswer(data, result.error);
      return;
    }
    if (result.kind !== 'message') {
      return;
    }
    const message = result.message;
    if (message.type === 'hello' && this._model.state === 'live') {
      this._onHello();
    }
    if (message.type === 'reply' || message.type === 'error') {
      const settled = this._requests.settle(message);
      if (!settled && message.type === 'error' && message.request_id !== null) {
        // This answers a request that already timed out, but the error is
        // still worth showing.
        this._model.reportProblem(
          trans.__(
            'The kernel helper reported an error (%1): %2',
            message.code,
            message.message
          )
        );
      }
    }
  }

  /**
   * A `reply` or `error` that fails parsing still names the request it
   * answers. That request is failed now rather than left to wait out its
   * timeout (minutes, for a cleanup) for an answer that has already come.
   */
  private _rejectMalformedAnswer(data: unknown, error: string): void {
    if (typeof data !== 'object' || data === null) {
      return;
    }
    const answer = data as { type?: unknown; request_id?: unknown };
    if (
      (answer.type !== 'reply' && answer.type !== 'error') ||
      typeof answer.request_id !== 'string'
    ) {
      return;
    }
    this._requests.settle({
      type: 'error',
      request_id: answer.request_id,
      code: 'malformed_answer',
      message: trans.__("The kernel helper's answer was malformed (%1).", error)
    });
  }

  private _onClose(comm: Kernel.IComm): void {
    if (comm !== this._comm) {
      return;
    }
    this._comm = null;
    this._requests.rejectAll(
      trans.__('The kernel helper closed the connection.')
    );
    if (this._model.state !== 'protocol-mismatch') {
      this._model.setState(
        'disconnected',
        trans.__(
          'The kernel closed the memory helper connection. Use "Refresh GPU memory" to reconnect.'
        )
      );
    }
  }

  private _model: KernelMemoryModel;
  private _onHello: () => void;
  private _comm: Kernel.IComm | null = null;
  private _helloSeen = false;
  private _requests = new PendingRequests();
  private _otherMessage = new Signal<this, unknown>(this);
}

/** The types that go with HelperComm. */
export namespace HelperComm {
  /** The options a new HelperComm is constructed with. */
  export interface IOptions {
    model: KernelMemoryModel;
    /** Called when the helper said hello on the comm and the model is live, for example to recover its history. */
    onHello: () => void;
  }
}
