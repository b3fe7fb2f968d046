/**
 * How long NVML has gone without attributing memory to the kernel, and when
 * the note that says so (visibilityNotes.ts) falls due: after
 * NVML_UNATTRIBUTED_NOTE_AFTER_S, so that a list read while a context was
 * being created does not raise it.
 *
 * The helper sends a sample when a figure changes, else one per heartbeat
 * (10 s by default): once the kernel's figures settle, the note would wait
 * for the heartbeat. A timer calls `onDue` when it falls due instead.
 */
import { SampleMessage } from '../protocol/sample';

/**
 * How long NVML must go on not naming the kernel before the panel says so. Right
 * after CUDA starts, a process list read as the context was created can lack the
 * kernel for a moment (the helper reads it again after 0.25, 0.5 and 1 s): that is
 * not the lasting case the note explains (a container seeing host pids).
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

  /** A sample came: it starts, continues or ends a run of unattributed samples. */
  sampled(sample: SampleMessage): void {
    if (!nvmlCannotAttribute(sample)) {
      this._since = null;
    } else if (this._since === null) {
      this._since = sample.time;
    }
  }

  /** A new kernel session: what NVML said of the old one no longer counts. */
  reset(): void {
    this._since = null;
  }

  /**
   * How long NVML has not attributed memory to the kernel: by the kernel's
   * clock from the first such sample to `latest`, then by ours since
   * `latest` arrived (`arrival`, Unix seconds); null while it does.
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
   * Call `onDue` when the note falls due, given how long it has been so far.
   * The timer is set again only when this brings the due time forward, not
   * at every sample; one that fires early sets the next through the update
   * `onDue` makes.
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
  /** The first sample's time of the current run in which NVML does not attribute memory to the kernel. */
  private _since: number | null = null;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _due = 0; // Date.now() at which the pending timer fires
  private _isDisposed = false;
}
