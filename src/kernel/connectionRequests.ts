/**
 * The requests that features make of a kernel's helper connection, one
 * interface per feature. KernelHelperConnection answers them all (through
 * HelperRequests); the features' models take only the part they use, so that
 * their tests can hand them a small fake.
 */
import { ISignal } from '@lumino/signaling';

import type {
  AllocationSitesResult,
  AllocationSnapshotResult,
  RecordingState
} from '../protocol/allocation';
import type {
  ClusterActionRequest,
  ClusterActionResult
} from '../protocol/cluster';
import type {
  DeleteResult,
  FreeAction,
  FreeMemoryResult,
  HiddenHolderKind,
  InspectResult
} from '../protocol/cleanup';
import type {
  EstimateMemoryRequest,
  EstimateMemoryResult
} from '../protocol/estimate';
import type { ReleaseEngineResult } from '../protocol/release';
import type { StopProcessResult } from '../protocol/processes';

/** The requests a connection to the kernel helper makes for cleanups. */
export interface ICleanupConnection {
  freeMemory(actions: FreeAction[]): Promise<FreeMemoryResult>;
  inspect(options?: {
    max_entries?: number;
    container_depth?: number;
  }): Promise<InspectResult>;
  deleteHolders(request: {
    listing_id: string;
    names: string[];
    hidden: HiddenHolderKind[];
    free: FreeAction[];
  }): Promise<DeleteResult>;
}

/**
 * The request of a connection to the kernel helper that lists what engines
 * started (Ray, Dask, pools, DataLoader workers, vLLM) and releases one.
 */
export interface IEngineConnection {
  releaseEngine(request: {
    mode: 'list' | 'release';
    kind?: string;
    name?: string;
    timeout_s?: number;
  }): Promise<ReleaseEngineResult>;
}

/** Whether a connection can release what engines started (test fakes may not). */
export function isEngineConnection(
  connection: object
): connection is IEngineConnection {
  return answers(connection, 'releaseEngine');
}

/** The requests of a connection to the kernel helper for allocation recording. */
export interface IAllocationConnection {
  recordAllocations(request: {
    enabled: boolean;
    host_frames?: number;
    gpu_max_entries?: number;
  }): Promise<RecordingState>;
  allocationSites(maxSites?: number): Promise<AllocationSitesResult>;
  allocationSnapshot(): Promise<AllocationSnapshotResult>;
  readonly otherMessage?: ISignal<unknown, unknown>;
}

/** Whether a connection answers the allocation-recording requests (test fakes may not). */
export function isAllocationConnection(
  connection: object
): connection is IAllocationConnection {
  return answers(connection, 'recordAllocations');
}

/** The request of a connection to the kernel helper that stops one of the kernel's processes. */
export interface IProcessConnection {
  stopProcess(request: {
    pid: number;
    start_time: number;
    timeout_s?: number;
  }): Promise<StopProcessResult>;
}

/** Whether a connection can stop the kernel's processes (test fakes may not). */
export function isProcessConnection(
  connection: object
): connection is IProcessConnection {
  return answers(connection, 'stopProcess');
}

/** The fields of an `estimate_memory` request, without its type and id. */
export type EstimateRequestFields = Omit<
  EstimateMemoryRequest,
  'type' | 'request_id'
>;

/**
 * The request of a connection to the kernel helper that predicts a training
 * step's peak memory, and the signal that carries its progress messages.
 */
export interface IEstimateConnection {
  estimateMemory(request: EstimateRequestFields): Promise<EstimateMemoryResult>;
  readonly otherMessage?: ISignal<unknown, unknown>;
}

/** Whether a connection can estimate a training step (test fakes may not). */
export function isEstimateConnection(
  connection: object
): connection is IEstimateConnection {
  return answers(connection, 'estimateMemory');
}

/** The fields of a `cluster_action` request, without its type and id. */
export type ClusterActionFields = Omit<
  ClusterActionRequest,
  'type' | 'request_id'
>;

/**
 * The request of a connection to the kernel helper that runs an action on
 * a cluster's workers, and the signal that carries the `cluster` messages.
 */
export interface IClusterConnection {
  clusterAction(request: ClusterActionFields): Promise<ClusterActionResult>;
  readonly otherMessage?: ISignal<unknown, unknown>;
}

/** Whether a connection can run cluster actions (test fakes and older connections may not). */
export function isClusterConnection(
  connection: object
): connection is IClusterConnection {
  return answers(connection, 'clusterAction');
}

/** Whether `connection` has the request method `method` (test fakes and older connections may not). */
function answers(connection: object, method: string): boolean {
  return typeof (connection as Record<string, unknown>)[method] === 'function';
}
