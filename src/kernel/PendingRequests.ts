/**
 * Requests to the kernel helper waiting for their answer.
 *
 * Every request carries a fresh `request_id`, and the helper answers each
 * once, with a `reply` or an `error` of the same id. A request that is not
 * answered in time is rejected, because the helper may be stuck behind a
 * long cell: the shell channel queues requests while code runs. An answer
 * that comes after that is dropped.
 */
import { ErrorMessage, ReplyMessage } from '../protocol/messages';
import { trans } from '../text/translation';

/** The helper answered a request with an `error` message. */
export class HelperRequestError extends Error {
  constructor(
    readonly code: string,
    message: string
  ) {
    super(message);
    this.name = 'HelperRequestError';
  }
}

/** A request got no answer in time, or could not be answered any more. */
export class RequestAbandonedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RequestAbandonedError';
  }
}

interface IPending {
  type: string;
  resolve: (result: { [key: string]: unknown }) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** The requests to the kernel helper that are waiting for their answer. */
export class PendingRequests {
  constructor(private readonly _prefix = 'r') {}

  /** The number of requests still waiting. */
  get size(): number {
    return this._pending.size;
  }

  /**
   * Registers a request and returns its id and the promise of its result.
   * The caller sends the message with that id.
   */
  add(
    type: string,
    timeoutMs: number
  ): { requestId: string; result: Promise<{ [key: string]: unknown }> } {
    const requestId = `${this._prefix}${++this._counter}`;
    const result = new Promise<{ [key: string]: unknown }>(
      (resolve, reject) => {
        const timer = setTimeout(() => {
          this._pending.delete(requestId);
          reject(
            new RequestAbandonedError(
              trans.__(
                "The kernel helper did not answer '%1' within %2 s.",
                type,
                Math.round(timeoutMs / 1000)
              )
            )
          );
        }, timeoutMs);
        this._pending.set(requestId, { type, resolve, reject, timer });
      }
    );
    return { requestId, result };
  }

  /**
   * Settles the request that an answer belongs to. Returns false when no
   * request waits for that id, because it already timed out or was not sent
   * from here.
   */
  settle(answer: ReplyMessage | ErrorMessage): boolean {
    if (answer.request_id === null) {
      return false;
    }
    const pending = this._pending.get(answer.request_id);
    if (!pending) {
      return false;
    }
    this._pending.delete(answer.request_id);
    clearTimeout(pending.timer);
    if (answer.type === 'reply') {
      pending.resolve(answer.result);
    } else {
      pending.reject(new HelperRequestError(answer.code, answer.message));
    }
    return true;
  }

  /** Rejects every waiting request, because the comm went away. */
  rejectAll(reason: string): void {
    const pending = Array.from(this._pending.values());
    this._pending.clear();
    for (const p of pending) {
      clearTimeout(p.timer);
      p.reject(new RequestAbandonedError(reason));
    }
  }

  private _counter = 0;
  private _pending = new Map<string, IPending>();
}
