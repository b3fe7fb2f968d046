/**
 * What one kernel started through an engine and can release (a Dask
 * LocalCluster, a Ray runtime, a multiprocessing pool, a DataLoader
 * iterator's workers, a vLLM engine), and the releases asked from this page
 * with their outcomes (docs/protocol.md, "release_engine"). It has no DOM,
 * and it never throws into the UI: a failed request becomes a state with an
 * error sentence.
 *
 * The list is asked for only when the kernel's processes change (a
 * releasable always has processes of its own), and only while the kernel is
 * idle, because the helper answers requests between cells: a kernel without
 * processes is never asked, so Run All pays nothing for this.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { IEngineConnection } from '../../kernel/connectionRequests';
import type {
  IKernelMemoryModel,
  ModelChange
} from '../../model/IKernelMemoryModel';
import type {
  Releasable,
  ReleaseEngineResult,
  ReleaseOutcome
} from '../../protocol/release';
import { errorText } from '../../text/errorText';

/** The kernel's processes as this list follows them (a ProcessTracker). */
export interface IFollowedProcesses {
  /** Fires with 'processes' when the list of processes changed. */
  readonly changed: ISignal<unknown, string>;
  /** The processes now, each named by its pid and start time. */
  readonly processes: readonly { readonly key: string }[];
}

/** A release asked from this page: on its way, answered, or failed. */
export type ReleaseState =
  | { readonly status: 'releasing'; readonly releasable: Releasable }
  | {
      readonly status: 'done';
      readonly releasable: Releasable;
      readonly outcome: ReleaseOutcome;
    }
  | {
      readonly status: 'failed';
      readonly releasable: Releasable;
      readonly error: string;
    };

/** What changed in an EngineReleases, as its `changed` signal names it. */
export type EngineReleasesChange = 'releasables' | 'release';

/** Milliseconds the list waits after a change of the processes, so that a pool starting its workers is asked about once. */
export const LIST_DELAY_MS = 400;

/** The identity of a releasable: its kind and its name. */
export function releasableKey(r: Pick<Releasable, 'kind' | 'name'>): string {
  return `${r.kind}:${r.name}`;
}

/** The releasables of one kernel, and the releases asked for them. */
export class EngineReleases implements IDisposable {
  constructor(options: EngineReleases.IOptions) {
    this._connection = options.connection;
    this._model = options.model;
    this._processes = options.processes;
    this._processes.changed.connect(this._onProcessesChanged, this);
    this._model.changed.connect(this._onModelChanged, this);
    this._onProcessesChanged(this._processes, 'processes');
  }

  /** Fires when the list or a release changed. */
  get changed(): ISignal<this, EngineReleasesChange> {
    return this._changed;
  }

  /** Whether this page can ask for releases (test fakes and old connections may not). */
  get canRelease(): boolean {
    return this._connection !== null;
  }

  /** What can be released now, largest host memory first, as last listed. */
  get releasables(): readonly Releasable[] {
    return this._releasables;
  }

  /** Why the last list failed, or null when it did not. */
  get listError(): string | null {
    return this._listError;
  }

  /** The release asked last from this page; null if none. */
  get lastRelease(): ReleaseState | null {
    return this._lastRelease;
  }

  /** Whether a release is on its way. */
  get isReleasing(): boolean {
    return this._lastRelease?.status === 'releasing';
  }

  /** The releasable of this kind and name as last listed, if any. */
  get(kind: string, name: string): Releasable | undefined {
    const key = releasableKey({ kind, name });
    return this._releasables.find(r => releasableKey(r) === key);
  }

  /** Asks the helper for the list now; resolves when it answered. */
  async refresh(): Promise<void> {
    if (!this._connection || this._isDisposed) {
      return;
    }
    const signature = this._signature;
    this._listedFor = signature;
    try {
      const result = await this._connection.releaseEngine({ mode: 'list' });
      this._listError = null;
      this._take(result);
    } catch (reason) {
      this._listError = errorText(reason);
      if (!this._isDisposed) {
        this._changed.emit('releasables');
      }
    }
  }

  /**
   * Asks the helper to release one releasable, which the user has confirmed.
   * Resolves with the release's state, never rejects.
   */
  async release(
    releasable: Releasable,
    timeoutS?: number
  ): Promise<ReleaseState> {
    this._setRelease({ status: 'releasing', releasable });
    let state: ReleaseState;
    try {
      if (!this._connection) {
        throw new Error('This kernel connection cannot release engines.');
      }
      const result = await this._connection.releaseEngine({
        mode: 'release',
        kind: releasable.kind,
        name: releasable.name,
        ...(timeoutS === undefined ? {} : { timeout_s: timeoutS })
      });
      if (!result.released) {
        throw new Error('The helper did not say what it released.');
      }
      state = { status: 'done', releasable, outcome: result.released };
      // The list came with the answer: what is left after the release.
      this._listedFor = this._signature;
      this._take(result);
    } catch (reason) {
      state = { status: 'failed', releasable, error: errorText(reason) };
    }
    if (!this._isDisposed) {
      this._setRelease(state);
    }
    return state;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    clearTimeout(this._timer);
    this._processes.changed.disconnect(this._onProcessesChanged, this);
    this._model.changed.disconnect(this._onModelChanged, this);
    Signal.clearData(this);
  }

  private _take(result: ReleaseEngineResult): void {
    this._releasables = result.releasables;
    if (!this._isDisposed) {
      this._changed.emit('releasables');
    }
  }

  private _setRelease(state: ReleaseState): void {
    this._lastRelease = state;
    this._changed.emit('release');
  }

  private _onProcessesChanged(_: unknown, change: string): void {
    if (change !== 'processes') {
      return;
    }
    this._signature = this._processes.processes
      .map(p => p.key)
      .sort()
      .join(' ');
    this._schedule();
  }

  private _onModelChanged(_: IKernelMemoryModel, change: ModelChange): void {
    // A list put off while a cell ran is asked for once the kernel is idle.
    if (change === 'busy' || change === 'state') {
      this._schedule();
    }
  }

  /** Lists again soon if the processes changed since the last list and nothing stands in the way. */
  private _schedule(): void {
    if (
      this._timer !== undefined ||
      this._signature === this._listedFor ||
      !this._connection
    ) {
      return;
    }
    this._timer = setTimeout(() => {
      this._timer = undefined;
      if (this._isDisposed || this._signature === this._listedFor) {
        return;
      }
      // A cell holds the helper's answers back, and a release lists anew
      // when it is done; either way the list waits.
      if (
        this._model.kernelBusyWith === 'cell' ||
        this._model.state !== 'live' ||
        this.isReleasing
      ) {
        return;
      }
      if (!this._signature) {
        // No process: nothing the helper lists has any left.
        this._listedFor = '';
        if (this._releasables.length) {
          this._releasables = [];
          this._changed.emit('releasables');
        }
        return;
      }
      void this.refresh();
    }, LIST_DELAY_MS);
  }

  private _connection: IEngineConnection | null;
  private _model: IKernelMemoryModel;
  private _processes: IFollowedProcesses;
  private _changed = new Signal<this, EngineReleasesChange>(this);
  private _releasables: readonly Releasable[] = [];
  private _listError: string | null = null;
  private _lastRelease: ReleaseState | null = null;
  /** The processes' keys now, and those the list was asked for last. */
  private _signature = '';
  private _listedFor = '';
  private _timer: ReturnType<typeof setTimeout> | undefined = undefined;
  private _isDisposed = false;
}

/** The types of the EngineReleases class. */
export namespace EngineReleases {
  /** What an EngineReleases is made from. */
  export interface IOptions {
    /** The kernel's helper connection; null: this page cannot release engines. */
    connection: IEngineConnection | null;
    model: IKernelMemoryModel;
    /** The kernel's processes, whose changes make the list be asked for again. */
    processes: IFollowedProcesses;
  }
}
