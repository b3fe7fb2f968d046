/**
 * The processes of one kernel: every descendant the helper lists in its
 * samples (docs/protocol.md, "The kernel's processes"), when each was first
 * seen (and so which cell started it, see processOrigin.ts), and the
 * `stop_process` requests made from this page with their outcomes. It has
 * no DOM, and it never throws into the UI: a failed request becomes a stop
 * state with an error sentence.
 *
 * A process is named by its pid and start time together: a pid is reused.
 * A new helper (another `record_series`: a restart, or the helper delivered
 * anew) starts the list again, and what its first tree lists was there
 * before this page watched, so no cell is named for it.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type {
  IEngineConnection,
  IProcessConnection
} from '../../kernel/connectionRequests';
import type {
  IKernelMemoryModel,
  ModelChange
} from '../../model/IKernelMemoryModel';
import type {
  ProcessTreeTotals,
  StopProcessResult,
  TreeProcess
} from '../../protocol/processes';
import { errorText } from '../../text/errorText';
import { EngineReleases } from './EngineReleases';
import { FirstSeen, ProcessOrigin, processOrigin } from './processOrigin';

/** What changed in a ProcessTracker, as its `changed` signal names it. */
export type ProcessTrackerChange = 'processes' | 'stop';

/** One process of the tree, with when it was first seen. */
export interface TrackedProcess {
  /** `${pid}:${start_time}`: one process, whatever reuses its pid later. */
  readonly key: string;
  readonly process: TreeProcess;
  readonly seen: FirstSeen;
}

/** A stop asked from this page: on its way, answered, or failed. */
export type StopState =
  | { readonly status: 'stopping'; readonly process: TreeProcess }
  | {
      readonly status: 'done';
      readonly process: TreeProcess;
      readonly result: StopProcessResult;
    }
  | {
      readonly status: 'failed';
      readonly process: TreeProcess;
      readonly error: string;
    };

/** The key of one process: its pid and start time. */
export function processKey(pid: number, startTime: number): string {
  return `${pid}:${startTime}`;
}

/** The outcomes after which the process is gone. */
const ENDED = new Set(['terminated', 'killed']);

/** The processes of one kernel, and the stops asked for them. */
export class ProcessTracker implements IDisposable {
  constructor(options: ProcessTracker.IOptions) {
    this._connection = options.connection;
    this._model = options.model;
    this._model.changed.connect(this._onModelChanged, this);
    this._readTree();
    this.engines = new EngineReleases({
      connection: options.engines ?? null,
      model: this._model,
      processes: this
    });
  }

  /** What the kernel started through an engine and can release, and the releases asked for. */
  readonly engines: EngineReleases;

  get changed(): ISignal<this, ProcessTrackerChange> {
    return this._changed;
  }

  /** Whether the helper reports the tree: null until a sample came, false for a helper (or a system) that does not. */
  get supported(): boolean | null {
    return this._supported;
  }

  /** The processes in tree order (parents before their children). */
  get processes(): readonly TrackedProcess[] {
    return this._processes;
  }

  /** The tree's totals (kernel + processes); null while it has no process. */
  get totals(): ProcessTreeTotals | null {
    return this._totals;
  }

  /** The latest tree's `read_at` (kernel clock); null without a tree. */
  get readAt(): number | null {
    return this._readAt;
  }

  /** The process with this pid and start time, if listed now. */
  get(pid: number, startTime: number): TrackedProcess | undefined {
    const key = processKey(pid, startTime);
    return this._processes.find(p => p.key === key);
  }

  /** The cell that started `p`; null where none can be named. */
  origin(p: TrackedProcess): ProcessOrigin | null {
    const cells = this._model.cells;
    if (this._recordsVersion !== cells.version) {
      this._recordsVersion = cells.version;
      this._records = cells.entries
        .filter(e => e.session === cells.session)
        .map(e => e.record);
    }
    return processOrigin(p.seen, this._records);
  }

  /** The stop asked last from this page; null if none. */
  get lastStop(): StopState | null {
    return this._lastStop;
  }

  /** Whether a stop of the process `key` names is on its way. */
  isStopping(key: string): boolean {
    return this._stopping.has(key);
  }

  /** Whether the connection can stop processes (test fakes may not). */
  get canStop(): boolean {
    return this._connection !== null;
  }

  /**
   * Asks the helper to stop one process (SIGTERM, then SIGKILL after
   * `timeoutS`). The caller has asked the user first. Resolves with the
   * stop's state, never rejects.
   */
  async stop(process: TreeProcess, timeoutS?: number): Promise<StopState> {
    const key = processKey(process.pid, process.start_time);
    this._stopping.add(key);
    this._setStop({ status: 'stopping', process });
    let state: StopState;
    try {
      if (!this._connection) {
        throw new Error('This kernel connection cannot stop processes.');
      }
      const result = await this._connection.stopProcess({
        pid: process.pid,
        start_time: process.start_time,
        ...(timeoutS === undefined ? {} : { timeout_s: timeoutS })
      });
      state = { status: 'done', process, result };
      if (ENDED.has(result.outcome) || result.refusal === 'gone') {
        // Gone now: the next tree leaves it out too (a zombie holds nothing).
        this._processes = this._processes.filter(p => p.key !== key);
      }
    } catch (reason) {
      state = { status: 'failed', process, error: errorText(reason) };
    }
    this._stopping.delete(key);
    if (!this._isDisposed) {
      this._setStop(state);
      this._changed.emit('processes');
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
    this.engines.dispose();
    this._model.changed.disconnect(this._onModelChanged, this);
    Signal.clearData(this);
  }

  private _setStop(state: StopState): void {
    this._lastStop = state;
    this._changed.emit('stop');
  }

  private _onModelChanged(_: IKernelMemoryModel, change: ModelChange): void {
    if (change === 'sample' || change === 'hello' || change === 'state') {
      this._readTree();
    } else if (change === 'cells') {
      // New records may name the cell of a process seen before they came.
      this._changed.emit('processes');
    }
  }

  /** Takes in the latest sample's tree, if it is new. */
  private _readTree(): void {
    const series = this._model.hello?.record_series ?? null;
    if (series !== this._series) {
      this._series = series;
      this._seen.clear();
      this._firstTree = true;
    }
    const sample = this._model.latest;
    if (sample === this._sample) {
      return;
    }
    this._sample = sample;
    const tree = sample?.processes ?? null;
    this._supported = sample ? tree !== null : null;
    this._totals = tree?.totals ?? null;
    this._readAt = tree?.read_at ?? null;
    const seen = new Map<string, FirstSeen>();
    this._processes = (tree?.processes ?? []).map(process => {
      const key = processKey(process.pid, process.start_time);
      const first = this._seen.get(key) ?? {
        at: tree!.read_at,
        busy: this._model.kernelBusyWith === 'cell',
        preexisting: this._firstTree
      };
      seen.set(key, first);
      return { key, process, seen: first };
    });
    this._seen = seen;
    if (tree) {
      this._firstTree = false;
    }
    this._changed.emit('processes');
  }

  private _connection: IProcessConnection | null;
  private _model: IKernelMemoryModel;
  private _changed = new Signal<this, ProcessTrackerChange>(this);
  private _supported: boolean | null = null;
  private _processes: readonly TrackedProcess[] = [];
  private _totals: ProcessTreeTotals | null = null;
  private _readAt: number | null = null;
  private _sample: unknown = undefined;
  private _series: string | null = null;
  private _seen = new Map<string, FirstSeen>();
  private _firstTree = true;
  private _records: Parameters<typeof processOrigin>[1] = [];
  private _recordsVersion = -1;
  private _lastStop: StopState | null = null;
  private _stopping = new Set<string>();
  private _isDisposed = false;
}

/** The types of the ProcessTracker class. */
export namespace ProcessTracker {
  /** What a ProcessTracker is made from. */
  export interface IOptions {
    /** The kernel's helper connection; null: this page cannot stop processes. */
    connection: IProcessConnection | null;
    /** The same connection where it can release engines; null or absent: this page cannot. */
    engines?: IEngineConnection | null;
    model: IKernelMemoryModel;
  }
}
