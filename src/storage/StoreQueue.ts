/**
 * Runs the writes and reads of one browser keeper (the cell history or the
 * timeline) one after another, in the order they were asked for, so that a
 * clear cannot overtake the save before it. It also holds the timer that
 * gathers what is added into one write. The first failure is reported once
 * on the console, and the keeper carries on in memory: the page keeps what
 * it shows, but the next page may lack it.
 */
export class StoreQueue {
  /** `what` names what could not be kept, for the console message ("the cell history"). */
  constructor(what: string) {
    this._what = what;
  }

  /** Settles when every operation asked for so far has run or failed. */
  get settled(): Promise<void> {
    return this._queue;
  }

  run(operation: () => Promise<void>): Promise<void> {
    this._queue = this._queue.then(operation).catch(reason => {
      if (!this._warned) {
        this._warned = true;
        console.warn(
          `jupyterlab-vram: could not keep ${this._what} in the browser (it stays for this page only):`,
          reason
        );
      }
    });
    return this._queue;
  }

  /** Calls `flush` after `delayMs`, unless a call is already due. */
  flushLater(flush: () => void, delayMs: number): void {
    if (this._timer === null) {
      this._timer = setTimeout(() => {
        this._timer = null;
        flush();
      }, delayMs);
    }
  }

  /** Cancels the call that is due, because the caller flushes now or nothing is left to flush. */
  cancelFlush(): void {
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private _what: string;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _queue: Promise<void> = Promise.resolve();
  private _warned = false;
}
