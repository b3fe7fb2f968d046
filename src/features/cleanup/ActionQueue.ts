/**
 * Cleanup requests waiting for the kernel.
 *
 * Comm messages reach the kernel on the shell channel, so a request sent
 * while a cell runs would wait behind it anyway, invisibly. Instead the
 * frontend holds it here while the kernel is busy ("Queued — the kernel is
 * busy", cancellable), and sends everything queued, in order, as soon as the
 * kernel is idle. Once sent, a request can no longer be cancelled: it
 * settles with the kernel's answer, or fails when the connection goes away
 * (PendingRequests rejects every request still waiting then).
 *
 * The queue knows neither the DOM nor the kernel; `send` is whatever
 * function makes the request.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';
import { trans } from '../../text/translation';

/** A queued request was cancelled before it was sent. */
export class ActionCancelledError extends Error {
  constructor(
    message = trans.__('Cancelled before it was sent to the kernel.')
  ) {
    super(message);
    this.name = 'ActionCancelledError';
  }
}

/**
 * A request is 'queued' while it waits for an idle kernel, and 'sent' while
 * it waits for the kernel's answer.
 */
export type QueuedActionState = 'queued' | 'sent';

/** A cleanup request as the queue shows it to the user. */
export interface IQueuedAction {
  readonly id: number;
  /** What the request does, for the user ("Collect garbage"). */
  readonly label: string;
  readonly state: QueuedActionState;
}

interface IEntry extends IQueuedAction {
  state: QueuedActionState;
  send: () => Promise<unknown>;
  resolve: (value: any) => void;
  reject: (error: Error) => void;
}

/**
 * The cleanup requests of one kernel, which wait while the kernel is busy and
 * go out in order once it is idle.
 */
export class ActionQueue implements IDisposable {
  constructor(options: { busy?: boolean } = {}) {
    this._busy = options.busy ?? false;
  }

  /** True while the kernel runs code, so that new requests wait. */
  get busy(): boolean {
    return this._busy;
  }

  /** Requests not settled yet, queued and sent, oldest first. */
  get pending(): readonly IQueuedAction[] {
    return this._entries.map(({ id, label, state }) => ({ id, label, state }));
  }

  /** Requests still waiting to be sent. */
  get queuedCount(): number {
    return this._entries.filter(e => e.state === 'queued').length;
  }

  /** Emitted when a request is queued, sent, settled or cancelled. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Tell the queue whether the kernel is busy. When the kernel becomes idle,
   * the requests that wait are sent.
   */
  setBusy(busy: boolean): void {
    if (busy === this._busy) {
      return;
    }
    this._busy = busy;
    if (!busy) {
      this._flush();
    }
  }

  /**
   * Add a request. It is sent at once when the kernel is idle, else when it
   * becomes idle. `result` settles with what `send` resolves to, or rejects
   * with ActionCancelledError (cancelled or dropped before it was sent) or
   * with the request's own error.
   */
  enqueue<T>(
    label: string,
    send: () => Promise<T>
  ): { id: number; result: Promise<T> } {
    const id = ++this._counter;
    let resolve!: (value: T) => void;
    let reject!: (error: Error) => void;
    const result = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    if (this._isDisposed) {
      reject(
        new ActionCancelledError(trans.__('The kernel connection is closed.'))
      );
      return { id, result };
    }
    this._entries.push({ id, label, state: 'queued', send, resolve, reject });
    if (!this._busy) {
      this._flush();
    } else {
      this._changed.emit();
    }
    return { id, result };
  }

  /**
   * Cancel a request that was not sent yet. Returns false when it was sent
   * already or is no longer in the queue.
   */
  cancel(id: number): boolean {
    const entry = this._entries.find(e => e.id === id);
    if (!entry || entry.state !== 'queued') {
      return false;
    }
    this._remove(entry);
    entry.reject(new ActionCancelledError());
    this._changed.emit();
    return true;
  }

  /**
   * Drop every request not sent yet, rejecting it with `reason` (the kernel
   * restarted or died before it could be sent).
   */
  failQueued(reason: string): void {
    const queued = this._entries.filter(e => e.state === 'queued');
    if (!queued.length) {
      return;
    }
    for (const entry of queued) {
      this._remove(entry);
      entry.reject(new ActionCancelledError(reason));
    }
    this._changed.emit();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this.failQueued(trans.__('The kernel connection is closed.'));
    this._isDisposed = true;
    Signal.clearData(this);
  }

  private _flush(): void {
    const queued = this._entries.filter(e => e.state === 'queued');
    if (!queued.length) {
      return;
    }
    for (const entry of queued) {
      entry.state = 'sent';
      let sent: Promise<unknown>;
      try {
        sent = entry.send();
      } catch (e) {
        sent = Promise.reject(e);
      }
      sent.then(
        value => this._settle(entry, () => entry.resolve(value)),
        error =>
          this._settle(entry, () =>
            entry.reject(
              error instanceof Error ? error : new Error(String(error))
            )
          )
      );
    }
    this._changed.emit();
  }

  private _settle(entry: IEntry, settle: () => void): void {
    this._remove(entry);
    settle();
    if (!this._isDisposed) {
      this._changed.emit();
    }
  }

  private _remove(entry: IEntry): void {
    const i = this._entries.indexOf(entry);
    if (i >= 0) {
      this._entries.splice(i, 1);
    }
  }

  private _busy: boolean;
  private _entries: IEntry[] = [];
  private _counter = 0;
  private _changed = new Signal<this, void>(this);
  private _isDisposed = false;
}
