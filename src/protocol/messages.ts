/**
 * The comm's constants and `parseKernelMessage`, protocol version 1.
 *
 * The wire types are generated from the protocol's JSON Schema
 * (protocol/protocol.schema.json) into protocol.generated.ts; this
 * module re-exports the ones the rest of the frontend imports from here.
 * To change a message, change the schema and run `npm run build:schema`.
 *
 * Everything that arrives from the kernel is untrusted JSON: `parseKernelMessage`
 * checks every field it relies on and turns bad data into a readable error,
 * so that a buggy or foreign helper is reported in the panel instead of
 * crashing it.
 *
 * The `sample` message is read in protocol/sample.ts, and the per-cell
 * records in protocol/cell.ts; the reading machinery is in
 * protocol/reader.ts.
 */

import { CellsMessage, readCells } from './cell';
import type {
  ErrorMessage,
  HelloMessage,
  HelperConfig,
  HelperRequest,
  ReplyMessage
} from './protocol.generated';
import { describeValue, FieldReader, ShapeError } from './reader';
import { readHiddenGpus, readSample, SampleMessage } from './sample';

export type {
  AllocationSitesRequest,
  AllocationSnapshotRequest,
  ConfigureRequest,
  DeleteRequest,
  DeviceInfo,
  ErrorMessage,
  FreeAction,
  FreeMemoryRequest,
  HelloMessage,
  HelperConfig,
  HelperRequest,
  HiddenHolderKind,
  HistoryRequest,
  InspectRequest,
  NotebookNamesRequest,
  NvmlInfo,
  OpenMessage,
  PartialHelperConfig,
  PingRequest,
  RecordAllocationsRequest,
  ReplyMessage,
  SnapshotRequest,
  TensorflowInfo,
  TorchInfo
} from './protocol.generated';

import { PROTOCOL_VERSION } from './commConstants';

export { COMM_TARGET, PROTOCOL_VERSION } from './commConstants';

/**
 * The `code` of an error, such as 'malformed', 'unknown_type',
 * 'invalid_config' or 'internal'. Other codes are kept as sent.
 */
export type HelperErrorCode = string;

export { HIDDEN_HOLDER_KINDS, isHiddenHolderKind } from './commConstants';

/** The `type` of a request the frontend sends. */
export type HelperRequestType = HelperRequest['type'];

/** What a `reply` carries in `result`, per request type. */
export interface HelperRequestResults {
  configure: { config: HelperConfig };
  snapshot: { seq: number };
  ping: Record<string, never>;
  /**
   * This is not checked here; read it with `parseHistoryResult` and
   * `parseTimeline`.
   */
  history: { records: unknown; timeline?: unknown };
  /**
   * These are not checked here; read them with the parsers of
   * protocol/cleanup.ts.
   */
  free_memory: { [key: string]: unknown };
  inspect: { [key: string]: unknown };
  delete: { [key: string]: unknown };
  /**
   * This is not checked here; read it with `parseNotebookNames`
   * (features/snippets/notebookNames.ts).
   */
  notebook_names: { [key: string]: unknown };
  /**
   * These are not checked here; read them with the parsers of
   * protocol/allocation.ts.
   */
  record_allocations: { [key: string]: unknown };
  allocation_sites: { [key: string]: unknown };
  allocation_snapshot: { [key: string]: unknown };
  /** Unchecked here: read it with `parseStopProcessResult` (protocol/stopProcess.ts). */
  stop_process: { [key: string]: unknown };
  /** Unchecked here: read it with `parseReleaseEngineResult` (protocol/release.ts). */
  release_engine: { [key: string]: unknown };
  /** Unchecked here: read it with `parseEstimateMemoryResult` (protocol/estimate.ts). */
  estimate_memory: { [key: string]: unknown };
  /** Unchecked here: read it with `parseClusterActionResult` (protocol/cluster.ts). */
  cluster_action: { [key: string]: unknown };
}

/** A message of the kernel as `parseKernelMessage` gives it. */
export type KernelMessage =
  HelloMessage | SampleMessage | CellsMessage | ReplyMessage | ErrorMessage;

/**
 * The outcome of parsing one comm message from the kernel.
 *
 * `incompatible` is its own outcome, not a kind of `malformed`, because a
 * hello of another protocol version is well-formed in its own version, and
 * the user must be told about the mismatch, not about a parse error.
 *
 * `unsupported` is a JSON object with a string `type` that this parser does
 * not know: a message type that a newer feature of the helper added and
 * that this frontend does not handle. It is not an error.
 */
export type ParseResult =
  | { kind: 'message'; message: KernelMessage }
  | { kind: 'incompatible'; protocol: unknown; helperVersion: string | null }
  | { kind: 'unsupported'; type: string; data: { [key: string]: unknown } }
  | { kind: 'malformed'; error: string };

// ---------------------------------------------------------------------------
// Parser

function readConfig(r: FieldReader): HelperConfig {
  return {
    interval_s: r.number('interval_s'),
    change_threshold_bytes: r.number('change_threshold_bytes'),
    heartbeat_s: r.number('heartbeat_s'),
    reset_peak_per_cell: r.has('reset_peak_per_cell')
      ? r.boolean('reset_peak_per_cell')
      : true,
    // Left out where an older helper leaves them out, which tells that it
    // would refuse them in a configure (settings.ts, configForHelper).
    ...(r.has('watch_cluster')
      ? { watch_cluster: r.boolean('watch_cluster') }
      : {}),
    ...(r.has('cluster_interval_s')
      ? { cluster_interval_s: r.number('cluster_interval_s') }
      : {})
  };
}

function readHello(r: FieldReader): HelloMessage {
  // Read in document order, so the first bad field is the one reported.
  const protocol = r.integer('protocol');
  const helper_version = r.string('helper_version');
  const python = r.string('python');
  const pid = r.integer('pid');
  const hostname = r.string('hostname');
  const record_series = r.string('record_series');
  const torch = r.nullableObject('torch');
  const torchInfo = torch && {
    version: torch.nullableString('version'),
    cuda_build: torch.nullableString('cuda_build'),
    cuda_initialized: torch.boolean('cuda_initialized')
  };
  const tensorflow = r.nullableObject('tensorflow');
  const tensorflowInfo = tensorflow && {
    version: tensorflow.nullableString('version'),
    gpus_initialized: tensorflow.boolean('gpus_initialized')
  };
  const nvml = r.object('nvml');
  const nvmlInfo = {
    available: nvml.boolean('available'),
    driver_version: nvml.nullableString('driver_version'),
    error: nvml.nullableString('error')
  };
  const devices = r.array('devices').map((item, i) => {
    const d = FieldReader.of(item, `${r.path}.devices[${i}]`);
    return {
      index: d.integer('index'),
      name: d.nullableString('name'),
      total_bytes: d.bytes('total_bytes'),
      uuid: d.nullableString('uuid')
    };
  });
  const waitForCuda =
    r.has('devices_wait_for_cuda') && r.boolean('devices_wait_for_cuda');
  const hiddenGpus = readHiddenGpus(r);
  const config = readConfig(r.object('config'));
  return {
    type: 'hello',
    protocol,
    helper_version,
    python,
    pid,
    hostname,
    record_series,
    torch: torchInfo,
    tensorflow: tensorflowInfo,
    nvml: nvmlInfo,
    devices,
    ...(waitForCuda ? { devices_wait_for_cuda: true } : {}),
    ...(hiddenGpus ? { hidden_gpus: hiddenGpus } : {}),
    config
  };
}

function readReply(r: FieldReader): ReplyMessage {
  return {
    type: 'reply',
    request_id: r.string('request_id'),
    request_type: r.string('request_type'),
    result: r.object('result').data
  };
}

function readError(r: FieldReader): ErrorMessage {
  return {
    type: 'error',
    request_id: r.nullableString('request_id'),
    code: r.string('code'),
    message: r.string('message')
  };
}

/**
 * Validates the `data` of a comm message from the kernel helper.
 *
 * It never throws. Bad data comes back as `{kind: 'malformed', error}`
 * naming the offending field. A hello of another protocol version comes
 * back as `{kind: 'incompatible'}`, and its other fields are not checked,
 * because they may legitimately differ in that version. An object of a type
 * not described here comes back as `{kind: 'unsupported'}`.
 */
export function parseKernelMessage(data: unknown): ParseResult {
  try {
    const r = FieldReader.of(data, 'message');
    const type = r.data.type;
    if (typeof type !== 'string') {
      throw new ShapeError(
        `message.type: expected a string, got ${describeValue(type)}`
      );
    }
    switch (type) {
      case 'hello': {
        const protocol = r.data.protocol;
        if (protocol !== PROTOCOL_VERSION) {
          const version = r.data.helper_version;
          return {
            kind: 'incompatible',
            protocol,
            helperVersion: typeof version === 'string' ? version : null
          };
        }
        return {
          kind: 'message',
          message: readHello(FieldReader.of(data, 'hello'))
        };
      }
      case 'sample':
        return {
          kind: 'message',
          message: readSample(FieldReader.of(data, 'sample'))
        };
      case 'cells':
        return {
          kind: 'message',
          message: readCells(FieldReader.of(data, 'cells'))
        };
      case 'reply':
        return {
          kind: 'message',
          message: readReply(FieldReader.of(data, 'reply'))
        };
      case 'error':
        return {
          kind: 'message',
          message: readError(FieldReader.of(data, 'error'))
        };
      default:
        return { kind: 'unsupported', type, data: r.data };
    }
  } catch (e) {
    if (e instanceof ShapeError) {
      return { kind: 'malformed', error: e.message };
    }
    return {
      kind: 'malformed',
      error: `could not read the message: ${String(e)}`
    };
  }
}
