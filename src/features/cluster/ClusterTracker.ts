/**
 * The clusters one kernel drives (Dask or Ray), as the helper's `cluster`
 * messages report them (protocol/protocol.schema.json, ClusterMessage):
 * their state and workers, the events kept by id (newest first, bounded,
 * and kept after the cluster goes, for as long as the page lives), and the
 * `cluster_action` requests made from this page with what came back. It has
 * no DOM, and it never throws into the UI: a message that cannot be read is
 * a note, and a failed request becomes a state with an error sentence.
 *
 * A kernel without a cluster, a non-Python kernel, or an older helper sends
 * no `cluster` message at all, and the tracker then has nothing to show.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { IClusterConnection } from '../../kernel/connectionRequests';
import type {
  ClusterActionName,
  ClusterActionResult,
  ClusterAllocatorReading,
  ClusterEvent,
  ClusterReading,
  ClusterState
} from '../../protocol/cluster';
import type { Parsed } from '../../protocol/reader';
import { errorText } from '../../text/errorText';

/** The most events kept; the helper sends its latest 50 with each message. */
export const MAX_CLUSTER_EVENTS = 200;

/** What changed in a ClusterTracker, as its `changed` signal names it. */
export type ClusterTrackerChange = 'clusters' | 'action';

/** An event as kept: with a key that stays unique across helper restarts. */
export interface KeptClusterEvent {
  /** The helper's run (counted from 1 in this page) and the event's id. */
  readonly key: string;
  readonly event: ClusterEvent;
}

/** An action asked from this page: on its way, answered, or failed. */
export type ClusterActionState =
  | {
      readonly status: 'running';
      readonly cluster: string;
      readonly action: ClusterActionName;
    }
  | {
      readonly status: 'done';
      readonly cluster: string;
      readonly action: ClusterActionName;
      readonly result: ClusterActionResult;
    }
  | {
      readonly status: 'failed';
      readonly cluster: string;
      readonly action: ClusterActionName;
      readonly error: string;
    };

/** The reader of `cluster` messages: `parseClusterMessage` of protocol/cluster.ts. */
export type ClusterMessageReader = (data: unknown) => Parsed<ClusterReading>;

/** The clusters of one kernel, their events, and the actions asked for them. */
export class ClusterTracker implements IDisposable {
  constructor(options: ClusterTracker.IOptions) {
    this._connection = options.connection;
    this._read = options.read;
    this._signal = options.otherMessage ?? options.connection?.otherMessage;
    this._signal?.connect(this._onMessage, this);
  }

  /** Fires when the clusters, the events or the last action changed. */
  get changed(): ISignal<this, ClusterTrackerChange> {
    return this._changed;
  }

  /** The clusters of the last message; empty before any and after the last went. */
  get clusters(): readonly ClusterState[] {
    return this._clusters;
  }

  /** Whether the helper reported a cluster once, so that its going away can be said. */
  get everSeen(): boolean {
    return this._everSeen;
  }

  /** The names of the clusters reported last before they went; empty while one is there. */
  get wentAway(): readonly string[] {
    return this._clusters.length ? [] : this._lastNames;
  }

  /** The kernel-clock time of the last message; null before any. */
  get time(): number | null {
    return this._time;
  }

  /** The events kept, newest first. */
  get events(): readonly KeptClusterEvent[] {
    return this._events;
  }

  /** What the reader left out of the last message, one sentence each. */
  get notes(): readonly string[] {
    return this._notes;
  }

  /** The action asked last from this page; null if none. */
  get lastAction(): ClusterActionState | null {
    return this._lastAction;
  }

  /** Whether this page can run actions on the cluster (test fakes may not). */
  get canAct(): boolean {
    return this._connection !== null;
  }

  /** Whether an action is on its way. */
  get isActing(): boolean {
    return this._lastAction?.status === 'running';
  }

  /** The cluster named `name`, if reported now. */
  cluster(name: string): ClusterState | undefined {
    return this._clusters.find(c => c.name === name);
  }

  /**
   * The latest allocator reading of a worker: from the last message, or
   * from the last action's answer where that is newer.
   */
  allocatorOf(workerId: string): ClusterAllocatorReading | null {
    // A map made once per message, so that a view's rows look up in O(1).
    let best = this._allocators.get(workerId) ?? null;
    const fresh = this._actionAllocators.get(workerId);
    if (fresh && (!best || fresh.read_at > best.read_at)) {
      best = fresh;
    }
    return best;
  }

  /**
   * Takes in one message from the helper; returns whether it was a
   * `cluster` message. The connection's messages come here; tests and the
   * benchmark call it directly.
   */
  ingest(data: unknown): boolean {
    if (
      typeof data !== 'object' ||
      data === null ||
      (data as { type?: unknown }).type !== 'cluster'
    ) {
      return false;
    }
    const parsed = this._read(data);
    if ('error' in parsed) {
      this._notes = [parsed.error];
      this._changed.emit('clusters');
      return true;
    }
    const { message, notes } = parsed.value;
    if (this._seq !== null && message.seq <= this._seq) {
      // A new helper counts from 1 again, and its event ids too.
      this._run++;
    }
    this._seq = message.seq;
    this._time = message.time;
    this._notes = notes;
    if (this._clusters.length && !message.clusters.length) {
      this._lastNames = this._clusters.map(c => c.name);
    }
    this._clusters = message.clusters;
    this._allocators = new Map(
      message.clusters.flatMap(c =>
        c.workers.flatMap(w =>
          w.allocator ? [[w.id, w.allocator] as const] : []
        )
      )
    );
    this._everSeen ||= message.clusters.length > 0;
    this._keepEvents(message.events);
    this._changed.emit('clusters');
    return true;
  }

  /**
   * Runs `action` on every worker of the cluster named `cluster`. The
   * caller has asked the user first where the action changes something.
   * Resolves with the action's state, never rejects.
   */
  async run(
    cluster: ClusterState,
    action: ClusterActionName,
    timeoutS?: number
  ): Promise<ClusterActionState> {
    const named = { cluster: cluster.name, action };
    this._setAction({ status: 'running', ...named });
    let state: ClusterActionState;
    try {
      if (!this._connection) {
        throw new Error('This kernel connection cannot act on a cluster.');
      }
      const result = await this._connection.clusterAction({
        engine: cluster.engine,
        cluster: cluster.name,
        action,
        ...(timeoutS === undefined ? {} : { timeout_s: timeoutS })
      });
      state = { status: 'done', ...named, result };
    } catch (reason) {
      state = { status: 'failed', ...named, error: errorText(reason) };
    }
    if (!this._isDisposed) {
      this._setAction(state);
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
    this._signal?.disconnect(this._onMessage, this);
    Signal.clearData(this);
  }

  private _onMessage(_: unknown, data: unknown): void {
    this.ingest(data);
  }

  private _setAction(state: ClusterActionState): void {
    this._lastAction = state;
    if (state.status === 'done') {
      this._actionAllocators = new Map(
        state.result.workers.flatMap(w =>
          w.allocator ? [[w.id, w.allocator] as const] : []
        )
      );
    }
    this._changed.emit('action');
  }

  /** Adds the events not kept yet, newest first, and drops the oldest past the bound. */
  private _keepEvents(events: readonly ClusterEvent[]): void {
    let added = false;
    for (const event of events) {
      const key = `${this._run}:${event.id}`;
      if (!this._eventKeys.has(key)) {
        this._eventKeys.add(key);
        this._events.push({ key, event });
        added = true;
      }
    }
    if (!added) {
      return;
    }
    this._events.sort((a, b) => b.event.time - a.event.time);
    for (const dropped of this._events.splice(MAX_CLUSTER_EVENTS)) {
      this._eventKeys.delete(dropped.key);
    }
    // A new array, so that a view that kept the old one sees the change.
    this._events = [...this._events];
  }

  private _connection: IClusterConnection | null;
  private _read: ClusterMessageReader;
  private _signal: ISignal<unknown, unknown> | undefined;
  private _changed = new Signal<this, ClusterTrackerChange>(this);
  private _clusters: readonly ClusterState[] = [];
  private _allocators = new Map<string, ClusterAllocatorReading>();
  private _actionAllocators = new Map<string, ClusterAllocatorReading>();
  private _lastNames: readonly string[] = [];
  private _everSeen = false;
  private _time: number | null = null;
  private _seq: number | null = null;
  private _run = 1;
  private _events: KeptClusterEvent[] = [];
  private _eventKeys = new Set<string>();
  private _notes: readonly string[] = [];
  private _lastAction: ClusterActionState | null = null;
  private _isDisposed = false;
}

/** The types of the ClusterTracker class. */
export namespace ClusterTracker {
  /** What a ClusterTracker is made from. */
  export interface IOptions {
    /** The kernel's helper connection; null: this page cannot run actions. */
    connection: IClusterConnection | null;
    /** The signal of the helper's other messages, where the connection is not given. */
    otherMessage?: ISignal<unknown, unknown>;
    read: ClusterMessageReader;
  }
}
