/**
 * The writes and reads of one browser keeper (cell history, timeline) to its
 * store, run one after another in the order asked, so that a clear cannot
 * overtake the save before it; and the timer that gathers what is added
 * into one write. The first failure is said once on the console, and the
 * keeper carries on in memory: the page keeps what it shows, the next page
 * may lack it.
 */
export class StoreQueue {
  /** `what`: what could not be kept, for the console ("the cell history"). */
  constructor(what: string) {
    this._what = what;
  }

  /** Settles when every operation asked so far has run (or failed). */
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

  /** Call `flush` in `delayMs`, unless a call is due already. */
  flushLater(flush: () => void, delayMs: number): void {
    if (this._timer === null) {
      this._timer = setTimeout(() => {
        this._timer = null;
        flush();
      }, delayMs);
    }
  }

  /** The call due (flushing now, or nothing left to flush) is not needed. */
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
