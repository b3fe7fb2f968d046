/**
 * The helper's requests, typed: what each one sends and how its reply is
 * read (docs/protocol.md). A reply is untrusted JSON, so the parsers check
 * it, and a malformed one rejects with a MalformedReplyError. The parsers
 * for features that most pages never use load with their first request.
 *
 * KernelHelperConnection supplies the comm through `_request`, so this file
 * knows nothing of kernels, comms or restarts.
 */
import type {
  AllocationSitesResult,
  AllocationSnapshotResult,
  RecordingState
} from '../protocol/allocation';
import type {
  DeleteResult,
  FreeAction,
  FreeMemoryResult,
  HiddenHolderKind,
  InspectResult
} from '../protocol/cleanup';
import type { ClusterActionResult } from '../protocol/cluster';
import type { EstimateMemoryResult } from '../protocol/estimate';
import type { ReleaseEngineResult } from '../protocol/release';
import type { StopProcessResult } from '../protocol/processes';
import {
  ClusterActionFields,
  EstimateRequestFields,
  IClusterConnection,
  ICleanupConnection,
  IEngineConnection,
  IEstimateConnection,
  IProcessConnection
} from './connectionRequests';
import {
  HelperRequestResults,
  HelperRequestType,
  PartialHelperConfig
} from '../protocol/messages';
import { Parsed } from '../protocol/reader';

/**
 * How long new settings may wait for their answer. The kernel reads comm
 * messages between cells, so settings sent during a training cell are
 * applied when that cell ends, which may be hours later, and the usual
 * request timeout would call them failed while they wait. A restart, a lost
 * connection or a silent helper (which SilenceWatch reconnects) abandons
 * them sooner, and the next comm opens with the settings anyway.
 */
const SETTINGS_WAIT_MS = 24 * 3600 * 1000;

/**
 * The base class of helper connections, which sends the typed requests and
 * checks their replies.
 */
export abstract class HelperRequests
  implements
    IClusterConnection,
    ICleanupConnection,
    IEngineConnection,
    IEstimateConnection,
    IProcessConnection
{
  /**
   * @param _cleanupTimeoutMs how long a cleanup or recording request may
   * wait for its answer once sent.
   */
  constructor(protected readonly _cleanupTimeoutMs: number) {}

  /** True while a comm to a helper is open (the helper may not have said hello yet). */
  abstract get isOpen(): boolean;

  /**
   * Sends new sampling settings to the helper. Without an open comm there
   * is nothing to do, because the next comm_open carries the config anyway.
   */
  async configure(
    config: PartialHelperConfig
  ): Promise<HelperRequestResults['configure'] | null> {
    if (!this.isOpen) {
      return null;
    }
    return this._request('configure', { config }, SETTINGS_WAIT_MS);
  }

  /** Asks for a sample now; the sample is in the model when this resolves. */
  requestSnapshot(): Promise<HelperRequestResults['snapshot']> {
    return this._request('snapshot', {});
  }

  ping(): Promise<HelperRequestResults['ping']> {
    return this._request('ping', {});
  }

  /**
   * Runs `gc.collect()`, `torch.cuda.empty_cache()` or both in the kernel.
   * Rejects with a clear message when the reply is malformed.
   */
  async freeMemory(actions: FreeAction[]): Promise<FreeMemoryResult> {
    return this._parsed(
      'free_memory',
      { actions },
      async () => (await import('../protocol/cleanup')).parseFreeMemoryResult
    );
  }

  /** Lists what holds memory in the user's namespace, largest first. */
  async inspect(
    options: { max_entries?: number; container_depth?: number } = {}
  ): Promise<InspectResult> {
    return this._parsed(
      'inspect',
      { ...options },
      async () => (await import('../protocol/cleanup')).parseInspectResult
    );
  }

  /** Deletes names from a listing, clears hidden holders, and then frees memory. */
  async deleteHolders(request: {
    listing_id: string;
    names: string[];
    hidden: HiddenHolderKind[];
    free: FreeAction[];
  }): Promise<DeleteResult> {
    return this._parsed(
      'delete',
      { ...request },
      async () => (await import('../protocol/cleanup')).parseDeleteResult
    );
  }

  /**
   * Lists what the kernel started through an engine and can release
   * (`mode: 'list'`), or releases the one named by `kind` and `name` after
   * the user confirmed it; resolves with the releasables and, for a release,
   * what came back and what did not.
   */
  async releaseEngine(request: {
    mode: 'list' | 'release';
    kind?: string;
    name?: string;
    timeout_s?: number;
  }): Promise<ReleaseEngineResult> {
    return this._parsed(
      'release_engine',
      { ...request },
      async () => (await import('../protocol/release')).parseReleaseEngineResult
    );
  }

  /**
   * Predicts the peak memory of one training step of the named model,
   * optimizer, loss and sample batch, for a range of batch sizes, without
   * allocating on a GPU; `estimate_progress` messages come through
   * `otherMessage` while it runs.
   */
  async estimateMemory(
    request: EstimateRequestFields
  ): Promise<EstimateMemoryResult> {
    return this._parsed(
      'estimate_memory',
      { ...request },
      async () =>
        (await import('../protocol/estimate')).parseEstimateMemoryResult
    );
  }

  /**
   * Asks for the names of the user's model, optimizer, data loader, loss and
   * scaler, and for the runtime flags. The result is not checked here; read
   * it with `parseNotebookNames`. A short timeout suits this request,
   * because the snippet commands fall back to placeholder names rather than
   * wait behind a running cell.
   */
  requestNotebookNames(
    timeoutMs = 3000
  ): Promise<HelperRequestResults['notebook_names']> {
    return this._request('notebook_names', {}, timeoutMs);
  }

  /**
   * Turns allocation recording (tracemalloc and PyTorch's allocator history)
   * on or off in the kernel, and resolves with the recording state.
   */
  async recordAllocations(request: {
    enabled: boolean;
    host_frames?: number;
    gpu_max_entries?: number;
  }): Promise<RecordingState> {
    return this._parsed(
      'record_allocations',
      { ...request },
      async () => (await import('../protocol/allocation')).parseRecordingState
    );
  }

  /** Asks for the live memory, grouped by the notebook line that allocated it. */
  async allocationSites(maxSites?: number): Promise<AllocationSitesResult> {
    return this._parsed(
      'allocation_sites',
      maxSites === undefined ? {} : { max_sites: maxSites },
      async () => (await import('../protocol/allocation')).parseAllocationSites
    );
  }

  /** Asks for PyTorch's allocator snapshot, pickled, for PyTorch's memory viewer. */
  async allocationSnapshot(): Promise<AllocationSnapshotResult> {
    return this._parsed(
      'allocation_snapshot',
      {},
      async () =>
        (await import('../protocol/allocation')).parseAllocationSnapshot
    );
  }

  /**
   * Stops one process of the kernel's tree (SIGTERM, then SIGKILL once
   * `timeout_s` passed), named by pid and start time so that a reused pid is
   * never signalled; resolves with what happened, refusals included.
   */
  async stopProcess(request: {
    pid: number;
    start_time: number;
    timeout_s?: number;
  }): Promise<StopProcessResult> {
    return this._parsed(
      'stop_process',
      { ...request },
      async () =>
        (await import('../protocol/stopProcess')).parseStopProcessResult
    );
  }

  /**
   * Runs an action on every worker of a cluster the kernel drives (gc,
   * empty_cache, restart, or reading their allocators), after the user
   * confirmed it where it changes something; resolves with what came back
   * from each worker and what the action could not do.
   */
  async clusterAction(
    request: ClusterActionFields
  ): Promise<ClusterActionResult> {
    return this._parsed(
      'cluster_action',
      { ...request },
      async () => (await import('../protocol/cluster')).parseClusterActionResult
    );
  }

  /**
   * Sends a request that may take as long as a cleanup, and reads its reply
   * with the parser that `load` returns. The parser is loaded on demand,
   * because most pages never make such a request. Rejects with a
   * MalformedReplyError when the reply cannot be read.
   */
  private async _parsed<T>(
    type: HelperRequestType,
    fields: { [key: string]: unknown },
    load: () => Promise<(result: unknown) => Parsed<T>>
  ): Promise<T> {
    const result = await this._request(type, fields, this._cleanupTimeoutMs);
    const parse = await load();
    return checked(parse(result), type);
  }

  /** Sends a request over the open comm and resolves with its reply's result. */
  protected abstract _request<T extends HelperRequestType>(
    type: T,
    fields: { [key: string]: unknown },
    timeoutMs?: number
  ): Promise<HelperRequestResults[T]>;
}

/** The helper's reply could not be read. */
export class MalformedReplyError extends Error {
  constructor(requestType: string, detail: string) {
    super(
      `The kernel helper sent a malformed '${requestType}' reply: ${detail}`
    );
    this.name = 'MalformedReplyError';
  }
}

function checked<T>(parsed: Parsed<T>, requestType: string): T {
  if ('error' in parsed) {
    throw new MalformedReplyError(requestType, parsed.error);
  }
  return parsed.value;
}
