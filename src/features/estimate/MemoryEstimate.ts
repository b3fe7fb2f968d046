/**
 * One kernel's "Will it fit?" estimate: the request asked from this page,
 * its progress while the helper traces the training step, and its answer
 * (docs/protocol.md, "estimate_memory"). It has no DOM, and it never throws
 * into the UI: a failed request becomes a state with an error sentence.
 *
 * One estimate runs at a time per kernel: the helper answers requests
 * between cells, one after another, so a second one would only wait behind
 * the first.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type {
  EstimateRequestFields,
  IEstimateConnection
} from '../../kernel/connectionRequests';
import type {
  EstimateMemoryResult,
  EstimateProgressMessage
} from '../../protocol/estimate';
import { errorText } from '../../text/errorText';

/**
 * How far a running estimate is, as its last progress message said, with
 * the plain step's figures once they are known (the remedies follow).
 */
export type EstimateProgress = Pick<
  EstimateProgressMessage,
  'stage' | 'done' | 'total' | 'partial'
>;

/** The estimate asked from this page: none yet, running, answered or failed. */
export type EstimateState =
  | { readonly status: 'idle' }
  | {
      readonly status: 'running';
      readonly request: EstimateRequestFields;
      readonly progress: EstimateProgress | null;
    }
  | {
      readonly status: 'done';
      readonly request: EstimateRequestFields;
      readonly result: EstimateMemoryResult;
    }
  | {
      readonly status: 'failed';
      readonly request: EstimateRequestFields;
      readonly error: string;
    };

/** The reader of progress messages: `readEstimateProgress` of protocol/estimate.ts. */
export type ProgressReader = (data: unknown) => EstimateProgress | null;

/** One kernel's estimate. */
export class MemoryEstimate implements IDisposable {
  constructor(options: MemoryEstimate.IOptions) {
    this._connection = options.connection;
    this._readProgress = options.readProgress;
    this._connection?.otherMessage?.connect(this._onMessage, this);
  }

  /** Fires when the state changed. */
  get changed(): ISignal<this, EstimateState> {
    return this._changed;
  }

  /** The estimate asked last from this page. */
  get state(): EstimateState {
    return this._state;
  }

  /** Whether this page can ask for an estimate (test fakes and old connections may not). */
  get canEstimate(): boolean {
    return this._connection !== null;
  }

  /** Whether an estimate is on its way. */
  get isRunning(): boolean {
    return this._state.status === 'running';
  }

  /**
   * Asks the helper for an estimate; resolves with its final state, never
   * rejects. While one runs, a second call resolves with that one's end.
   */
  run(request: EstimateRequestFields): Promise<EstimateState> {
    if (this._running) {
      return this._running;
    }
    this._running = this._run(request).finally(() => (this._running = null));
    return this._running;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._connection?.otherMessage?.disconnect(this._onMessage, this);
    Signal.clearData(this);
  }

  private async _run(request: EstimateRequestFields): Promise<EstimateState> {
    this._set({ status: 'running', request, progress: null });
    let state: EstimateState;
    try {
      if (!this._connection) {
        throw new Error('This kernel connection cannot estimate memory.');
      }
      const result = await this._connection.estimateMemory(request);
      state = { status: 'done', request, result };
    } catch (reason) {
      state = { status: 'failed', request, error: errorText(reason) };
    }
    if (!this._isDisposed) {
      this._set(state);
    }
    return state;
  }

  private _onMessage(_: unknown, data: unknown): void {
    const state = this._state;
    if (state.status !== 'running') {
      return;
    }
    const progress = this._readProgress(data);
    if (progress) {
      // A later message without figures keeps the figures already shown.
      const partial = progress.partial ?? state.progress?.partial;
      this._set({
        ...state,
        progress: partial ? { ...progress, partial } : progress
      });
    }
  }

  private _set(state: EstimateState): void {
    this._state = state;
    this._changed.emit(state);
  }

  private _connection: IEstimateConnection | null;
  private _readProgress: ProgressReader;
  private _state: EstimateState = { status: 'idle' };
  private _running: Promise<EstimateState> | null = null;
  private _changed = new Signal<this, EstimateState>(this);
  private _isDisposed = false;
}

/** The options of a MemoryEstimate. */
export namespace MemoryEstimate {
  /** What an estimate is made from. */
  export interface IOptions {
    /** The kernel's connection; null where it cannot estimate. */
    connection: IEstimateConnection | null;
    /** Reads a progress message, or null for any other message. */
    readProgress: ProgressReader;
  }
}
