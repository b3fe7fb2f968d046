/**
 * The helper's requests, typed: what each one sends and how its reply is
 * read (docs/protocol.md). A reply is untrusted JSON: the parsers check it
 * and a malformed one rejects with a MalformedReplyError. The parsers of
 * features most pages never use load with their first request.
 *
 * KernelHelperConnection supplies the comm (`_request`): this file knows
 * nothing of kernels, comms or restarts.
 */
import type {
  AllocationSitesResult,
  AllocationSnapshotResult,
  RecordingState
} from '../allocationProtocol';
import type {
  DeleteResult,
  FreeAction,
  FreeMemoryResult,
  HiddenHolderKind,
  InspectResult
} from '../cleanupProtocol';
import { ICleanupConnection } from '../model/MemoryActions';
import {
  HelperRequestResults,
  HelperRequestType,
  PartialHelperConfig
} from '../protocol';
import { Parsed } from '../protocolReader';

export abstract class HelperRequests implements ICleanupConnection {
  /**
   * @param _cleanupTimeoutMs how long a cleanup or recording request may
   * wait for its answer once sent.
   */
  constructor(protected readonly _cleanupTimeoutMs: number) {}

  /** True while a comm to a helper is open (the helper may not have said hello yet). */
  abstract get isOpen(): boolean;

  /**
   * Send new sampling settings to the helper. Without an open comm there is
   * nothing to do: the next comm_open carries the config anyway.
   */
  async configure(
    config: PartialHelperConfig
  ): Promise<HelperRequestResults['configure'] | null> {
    if (!this.isOpen) {
      return null;
    }
    return this._request('configure', { config });
  }

  /** Ask for a sample now; it is in the model when this resolves. */
  requestSnapshot(): Promise<HelperRequestResults['snapshot']> {
    return this._request('snapshot', {});
  }

  ping(): Promise<HelperRequestResults['ping']> {
    return this._request('ping', {});
  }

  /**
   * Run `gc.collect()` and/or `torch.cuda.empty_cache()` in the kernel.
   * Rejects with a clear message when the reply is malformed.
   */
  async freeMemory(actions: FreeAction[]): Promise<FreeMemoryResult> {
    const result = await this._request(
      'free_memory',
      { actions },
      this._cleanupTimeoutMs
    );
    // The cleanup parsers load with the first cleanup: most pages never make one.
    const { parseFreeMemoryResult } = await import('../cleanupProtocol');
    return checked(parseFreeMemoryResult(result), 'free_memory');
  }

  /** List what holds memory in the user's namespace (largest first). */
  async inspect(
    options: { max_entries?: number; container_depth?: number } = {}
  ): Promise<InspectResult> {
    const result = await this._request(
      'inspect',
      { ...options },
      this._cleanupTimeoutMs
    );
    const { parseInspectResult } = await import('../cleanupProtocol');
    return checked(parseInspectResult(result), 'inspect');
  }

  /** Delete names of a listing and clear hidden holders, then free. */
  async deleteHolders(request: {
    listing_id: string;
    names: string[];
    hidden: HiddenHolderKind[];
    free: FreeAction[];
  }): Promise<DeleteResult> {
    const result = await this._request(
      'delete',
      { ...request },
      this._cleanupTimeoutMs
    );
    const { parseDeleteResult } = await import('../cleanupProtocol');
    return checked(parseDeleteResult(result), 'delete');
  }

  /**
   * The names of the user's model, optimizer, data loader, loss and scaler
   * and the runtime flags. Unchecked: read the result with
   * `parseNotebookNames`. A short timeout suits it: the snippet commands
   * fall back to placeholder names rather than wait behind a running cell.
   */
  requestNotebookNames(
    timeoutMs = 3000
  ): Promise<HelperRequestResults['notebook_names']> {
    return this._request('notebook_names', {}, timeoutMs);
  }

  /**
   * Turn allocation recording on or off in the kernel (tracemalloc and
   * PyTorch's allocator history); resolves with the recording state.
   */
  async recordAllocations(request: {
    enabled: boolean;
    host_frames?: number;
    gpu_max_entries?: number;
  }): Promise<RecordingState> {
    const result = await this._request(
      'record_allocations',
      { ...request },
      this._cleanupTimeoutMs
    );
    // The parsers load with the feature, not at start-up.
    const { parseRecordingState } = await import('../allocationProtocol');
    return checked(parseRecordingState(result), 'record_allocations');
  }

  /** Live memory grouped by the notebook line that allocated it. */
  async allocationSites(maxSites?: number): Promise<AllocationSitesResult> {
    const result = await this._request(
      'allocation_sites',
      maxSites === undefined ? {} : { max_sites: maxSites },
      this._cleanupTimeoutMs
    );
    const { parseAllocationSites } = await import('../allocationProtocol');
    return checked(parseAllocationSites(result), 'allocation_sites');
  }

  /** PyTorch's allocator snapshot, pickled (for its memory viewer). */
  async allocationSnapshot(): Promise<AllocationSnapshotResult> {
    const result = await this._request(
      'allocation_snapshot',
      {},
      this._cleanupTimeoutMs
    );
    const { parseAllocationSnapshot } = await import('../allocationProtocol');
    return checked(parseAllocationSnapshot(result), 'allocation_snapshot');
  }

  /** Send a request over the open comm; resolves with its reply's result. */
  protected abstract _request<T extends HelperRequestType>(
    type: T,
    fields: { [key: string]: unknown },
    timeoutMs?: number
  ): Promise<HelperRequestResults[T]>;
}

/** The helper's reply could not be read. */
export class MalformedReplyError extends Error {
  constructor(requestType: string, detail: string) {
    super(`The kernel helper sent a malformed '${requestType}' reply: ${detail}`);
    this.name = 'MalformedReplyError';
  }
}

function checked<T>(parsed: Parsed<T>, requestType: string): T {
  if ('error' in parsed) {
    throw new MalformedReplyError(requestType, parsed.error);
  }
  return parsed.value;
}
