/**
 * Notices a helper that went quiet while the panel says "live". The helper's
 * sampler sends a sample at least every heartbeat (a thread of its own, so
 * also while a cell runs); when none came for several heartbeats while the
 * kernel is idle, the comm is gone on the kernel's side (the helper was
 * uninstalled, or a comm opened around a restart never reached the new
 * process) and the panel would show stale figures as live. The watch then
 * asks for a reconnect: the bootstrap is idempotent in the kernel, so a
 * living helper just gets a new comm. Figures heard on another page's comm
 * (state `overheard`) that stop coming are said to be stale instead: this
 * page's own delivery is still waiting for the kernel.
 */
import { IDisposable } from '@lumino/disposable';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { trans } from '../text/translation';

/** Heartbeats without a sample before the helper counts as gone. */
export const SILENT_HEARTBEATS = 3;
/** Never sooner than this many seconds (short heartbeats, a busy page). */
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

  /** Look once (the timer calls this; tests too). True when it asked for a reconnect. */
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
      // The other page's comm went quiet (closed, or its kernel process
      // restarted): the figures are stale. This page's own delivery is
      // still under way (its kernel info asked again): nothing to restart.
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
    /** Called once per silence found (the model is then no longer live). */
    onSilent: () => void;
    now?: () => number;
    checkEveryMs?: number;
  }
}
