/**
 * Notices a helper that went quiet while the panel says "live". The helper's
 * sampler runs in a thread of its own, so it sends a sample at least once
 * per heartbeat even while a cell runs. When no sample came for several
 * heartbeats while the kernel is idle, the comm is gone on the kernel's
 * side (the helper was uninstalled, or a comm opened around a restart never
 * reached the new process), and the panel would show stale figures as live.
 * The watch then asks for a reconnect. The bootstrap is idempotent in the
 * kernel, so a helper that is still running just gets a new comm. When
 * figures overheard on another page's comm (state `overheard`) stop coming,
 * the watch says they are stale instead, because this page's own delivery
 * is still waiting for the kernel.
 */
import { IDisposable } from '@lumino/disposable';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { trans } from '../text/translation';

/** How many heartbeats may pass without a sample before the helper counts as gone. */
export const SILENT_HEARTBEATS = 3;
/** The shortest silence, in seconds, that counts, so that short heartbeats or a busy page cause no false alarm. */
export const MIN_SILENCE_S = 15;

/**
 * Notices a helper that has stopped sending samples while the panel says it is
 * live.
 */
export class SilenceWatch implements IDisposable {
  constructor(options: SilenceWatch.IOptions) {
    this._model = options.model;
    this._onSilent = options.onSilent;
    this._now = options.now ?? (() => Date.now() / 1000);
    this._timer = setInterval(() => this.check(), options.checkEveryMs ?? 2000);
  }

  get isDisposed(): boolean {
    return this._timer === null;
  }

  /** Seconds of silence after which a live helper counts as gone. */
  silenceLimit(): number {
    const heartbeat = this._model.hello?.config.heartbeat_s ?? 10;
    return Math.max(MIN_SILENCE_S, SILENT_HEARTBEATS * heartbeat);
  }

  /** Checks once; the timer calls this, and so do tests. Returns true when it asked for a reconnect. */
  check(): boolean {
    const model = this._model;
    const overheard = model.state === 'overheard';
    if ((model.state !== 'live' && !overheard) || model.kernelBusy) {
      return false;
    }
    const silence = model.secondsSinceSample(this._now());
    if (silence === null || silence < this.silenceLimit()) {
      return false;
    }
    if (overheard) {
      // The other page's comm went quiet, because it closed or its kernel
      // process restarted, so the figures are stale. This page's own
      // delivery is still under way (it keeps asking for the kernel info),
      // so there is nothing to restart.
      model.setState(
        'kernel-starting',
        trans.__(
          'No sample heard for %1 s; waiting for the kernel to answer\u2026',
          Math.round(silence)
        )
      );
      return false;
    }
    model.setState(
      'disconnected',
      trans.__(
        "No message from the kernel's memory helper for %1 s; reconnecting\u2026",
        Math.round(silence)
      )
    );
    this._onSilent();
    return true;
  }

  dispose(): void {
    if (this._timer !== null) {
      clearInterval(this._timer);
      this._timer = null;
    }
  }

  private _model: KernelMemoryModel;
  private _onSilent: () => void;
  private _now: () => number;
  private _timer: ReturnType<typeof setInterval> | null;
}

/** The types that go with SilenceWatch. */
export namespace SilenceWatch {
  /** The options a new SilenceWatch is constructed with. */
  export interface IOptions {
    model: KernelMemoryModel;
    /** Called once for each silence found; the model is no longer live by then. */
    onSilent: () => void;
    now?: () => number;
    checkEveryMs?: number;
  }
}
