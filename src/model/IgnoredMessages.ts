/**
 * The messages a model dropped because they did not fit where they arrived:
 * malformed ones, or a second hello on one comm, which can happen because
 * code in the kernel can write onto the helper's comm. The panel keeps its
 * state and says how many were dropped, with the last reason. The browser
 * console hears of them at most once every IGNORED_WARNING_MS, so that a
 * flood does not drown it.
 */
import { trans } from '../text/translation';

/**
 * How often, at most, the browser console hears of ignored messages. The
 * panel's note counts every one regardless.
 */
export const IGNORED_WARNING_MS = 10_000;

/**
 * Counts the helper messages a model dropped and keeps the sentence that
 * reports them up to date.
 */
export class IgnoredMessages {
  /**
   * `report` shows the sentence that counts them, as the model's problem note.
   */
  constructor(report: (text: string) => void) {
    this._report = report;
  }

  get count(): number {
    return this._count;
  }

  /**
   * Counts one more message, dropped for `reason`. `now` is in milliseconds
   * since the epoch.
   */
  note(reason: string, now: number): void {
    this._count++;
    const count = this._count;
    const text = trans._n(
      "Ignored %1 message on the memory helper's connection that did not fit (the last: %2).",
      "Ignored %1 messages on the memory helper's connection that did not fit (the last: %2).",
      count,
      reason
    );
    this._report(text);
    if (now - this._lastWarning >= IGNORED_WARNING_MS) {
      this._lastWarning = now;
      console.warn(`jupyterlab-vram: ${text}`);
    }
  }

  private _report: (text: string) => void;
  private _count = 0;
  private _lastWarning = -Infinity;
}
