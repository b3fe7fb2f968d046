/**
 * How long NVML has gone without attributing memory to the kernel, and when
 * the note that says so (see visibilityNotes.ts) falls due. It falls due
 * after NVML_UNATTRIBUTED_NOTE_AFTER_S, so that a process list read while a
 * context was being created does not raise it.
 *
 * The helper sends a sample when a figure changes, and otherwise one per
 * heartbeat (10 s by default). Once the kernel's figures settle, the note
 * would therefore wait for the heartbeat, so a timer calls `onDue` when the
 * note falls due instead.
 */
import { SampleMessage } from '../protocol/sample';

/**
 * How long NVML must go on not naming the kernel before the panel says so.
 * Right after CUDA starts, a process list read while the context was being
 * created can lack the kernel for a moment; the helper reads the list again
 * after 0.25 s, and after twice as long each time it still lacks the kernel.
 * That brief case is not the lasting one that the note explains, which is a
 * container seeing host process ids.
 */
export const NVML_UNATTRIBUTED_NOTE_AFTER_S = 2;

/** Whether NVML, where present, attributes no figure to the kernel on some GPU. */
export function nvmlCannotAttribute(sample: SampleMessage): boolean {
  return sample.gpus.some(
    g => g.nvml !== null && g.nvml.process_used_bytes === null
  );
}

/**
 * Measures how long NVML has gone without attributing memory to the kernel and
 * says when the note about it falls due.
 */
export class NvmlAttributionClock {
  constructor(onDue: () => void) {
    this._onDue = onDue;
  }

  /**
   * Called when a sample came; it starts, continues or ends a run of
   * unattributed samples.
   */
  sampled(sample: SampleMessage): void {
    if (!nvmlCannotAttribute(sample)) {
      this._since = null;
    } else if (this._since === null) {
      this._since = sample.time;
    }
  }

  /**
   * Called for a new kernel session, because what NVML said of the old one no
   * longer counts.
   */
  reset(): void {
    this._since = null;
  }

  /**
   * How long NVML has not attributed memory to the kernel. It is measured on
   * the kernel's clock from the first such sample to `latest`, and then on
   * our clock since `latest` arrived (`arrival`, in Unix seconds). It is null
   * while NVML does attribute memory.
   */
  unattributedFor(
    latest: SampleMessage | null,
    arrival: number,
    now: number = Date.now() / 1000
  ): number | null {
    if (this._since === null || !latest) {
      return null;
    }
    return latest.time - this._since + Math.max(0, now - arrival);
  }

  /**
   * Arranges for `onDue` to be called when the note falls due, given how
   * long it has been so far. The timer is set again only when this brings
   * the due time forward, not at every sample. A timer that fires early sets
   * the next one through the update that `onDue` makes.
   */
  schedule(unattributedFor: number | null): void {
    if (
      unattributedFor === null ||
      unattributedFor >= NVML_UNATTRIBUTED_NOTE_AFTER_S ||
      this._isDisposed
    ) {
      this._clearTimer();
      return;
    }
    const wait = (NVML_UNATTRIBUTED_NOTE_AFTER_S - unattributedFor) * 1000;
    const due = Date.now() + wait;
    if (this._timer !== null && due >= this._due) {
      return;
    }
    this._clearTimer();
    this._due = due;
    this._timer = setTimeout(() => {
      this._timer = null;
      this._onDue();
    }, wait);
  }

  dispose(): void {
    this._isDisposed = true;
    this._clearTimer();
  }

  private _clearTimer(): void {
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private _onDue: () => void;
  /**
   * The time of the first sample of the current run in which NVML does not
   * attribute memory to the kernel.
   */
  private _since: number | null = null;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  /** The Date.now() value at which the pending timer fires. */
  private _due = 0;
  private _isDisposed = false;
}
