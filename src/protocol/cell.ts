/**
 * The parsers of the per-cell records: the `cells` message and the
 * `history` reply, described under `cell` in docs/protocol.md.
 * `parseKernelMessage` (messages.ts) dispatches to `readCells`, and a
 * record's `oom` is read by protocol/oom.ts.
 *
 * The wire types are generated from protocol/protocol.schema.json
 * (protocol.generated.ts) and re-exported here under the names the frontend
 * imports; the reader below checks untrusted JSON against them.
 */
import { readCellGpuLoad } from './load';
import { readCellCluster } from './clusterRecord';
import { readOomDiagnosis } from './oom';
import { readCellProcessTree } from './processes';
import { describeValue, FieldReader, ShapeError } from './reader';
import type {
  CellMemoryRecord,
  CellsMessage as WireCellsMessage
} from './protocol.generated';

export type {
  CellError,
  CellGpuMemory,
  CellHostMemory,
  CellMemoryRecord
} from './protocol.generated';

/**
 * Per-cell records, oldest first, as `readCells` gives them: the wire
 * message's valid records, and a text for each record that it could not
 * read.
 */
export interface CellsMessage extends WireCellsMessage {
  /** One text per record that could not be read; the other records are kept. */
  invalid: string[];
}

/** The statuses a record may have; a reader keeps any other string as is. */
export type CellStatus = 'ok' | 'error' | 'interrupted';

// ---------------------------------------------------------------------------
// Parser

/** The longest `cell_id` that the protocol allows. */
const MAX_CELL_ID_LENGTH = 256;

function readCellRecord(r: FieldReader): CellMemoryRecord {
  // Read in document order, so the first bad field is the one reported.
  const record_id = r.integer('record_id');
  const execution_count = r.nullableInteger('execution_count');
  const cell_id = r.nullableString('cell_id');
  if (cell_id !== null && cell_id.length > MAX_CELL_ID_LENGTH) {
    throw new ShapeError(
      `${r.path}.cell_id: expected at most ${MAX_CELL_ID_LENGTH} characters, got ${cell_id.length}`
    );
  }
  const started = r.number('started');
  const duration_s = r.number('duration_s');
  if (duration_s < 0) {
    throw new ShapeError(
      `${r.path}.duration_s: expected a non-negative number, got ${duration_s}`
    );
  }
  const status = r.string('status');
  const err = r.nullableObject('error');
  const error = err && {
    type: err.string('type'),
    message_head: err.string('message_head'),
    out_of_memory: err.boolean('out_of_memory')
  };
  const peak_exact = r.boolean('peak_exact');
  const h = r.object('host');
  const host = {
    rss_before_bytes: h.bytes('rss_before_bytes'),
    rss_after_bytes: h.bytes('rss_after_bytes'),
    rss_peak_bytes: h.bytes('rss_peak_bytes'),
    peak_exact: h.boolean('peak_exact')
  };
  const gpus = r.array('gpus').map((item, i) => {
    const g = FieldReader.of(item, `${r.path}.gpus[${i}]`);
    return {
      index: g.integer('index'),
      allocated_before_bytes: g.bytes('allocated_before_bytes'),
      allocated_after_bytes: g.bytes('allocated_after_bytes'),
      allocated_peak_bytes: g.bytes('allocated_peak_bytes'),
      reserved_before_bytes: g.bytes('reserved_before_bytes'),
      reserved_after_bytes: g.bytes('reserved_after_bytes'),
      reserved_peak_bytes: g.bytes('reserved_peak_bytes'),
      peak_exact: g.boolean('peak_exact')
    };
  });
  const oomReader = r.nullableObject('oom');
  const oom = oomReader && readOomDiagnosis(oomReader);
  // Older helpers leave this out, so it stays out, meaning unknown, rather
  // than becoming an empty list.
  const gpuLoad = r
    .nullableArray('gpu_load')
    ?.map((item, i) =>
      readCellGpuLoad(FieldReader.of(item, `${r.path}.gpu_load[${i}]`))
    );
  const processes = readCellProcessTree(r);
  const cluster = readCellCluster(r);
  const record: CellMemoryRecord = {
    record_id,
    execution_count,
    cell_id,
    started,
    duration_s,
    status,
    error,
    peak_exact,
    host,
    gpus,
    oom,
    ...(gpuLoad ? { gpu_load: gpuLoad } : {})
  };
  // Absent where the kernel had no process around the cell, and from older helpers.
  if (processes) {
    record.processes = processes;
  }
  // Absent where no cluster was attached during the cell, and from older helpers.
  if (cluster) {
    record.cluster = cluster;
  }
  return record;
}

/**
 * Reads a `cells` message. A record that does not parse is listed in
 * `invalid` rather than failing the whole message.
 */
export function readCells(r: FieldReader): CellsMessage {
  const records: CellMemoryRecord[] = [];
  const invalid: string[] = [];
  r.array('records').forEach((item, i) => {
    const parsed = parseCellRecord(item, `${r.path}.records[${i}]`);
    if ('record' in parsed) {
      records.push(parsed.record);
    } else {
      invalid.push(parsed.error);
    }
  });
  return { type: 'cells', records, invalid };
}

/**
 * Validates one `CellMemoryRecord`, such as an item of a `history` reply.
 * It never throws.
 */
export function parseCellRecord(
  value: unknown,
  path = 'record'
): { record: CellMemoryRecord } | { error: string } {
  try {
    return { record: readCellRecord(FieldReader.of(value, path)) };
  } catch (e) {
    return {
      error:
        e instanceof ShapeError
          ? e.message
          : `could not read ${path}: ${String(e)}`
    };
  }
}

/**
 * Reads the `result` of a `history` reply: the valid records, and one error
 * text for each record that could not be read, or for the whole result. It
 * never throws.
 */
export function parseHistoryResult(result: unknown): {
  records: CellMemoryRecord[];
  errors: string[];
} {
  const records: CellMemoryRecord[] = [];
  const errors: string[] = [];
  const list =
    typeof result === 'object' && result !== null
      ? (result as { records?: unknown }).records
      : undefined;
  if (!Array.isArray(list)) {
    errors.push(
      `history.records: expected an array, got ${describeValue(list)}`
    );
    return { records, errors };
  }
  list.forEach((item, i) => {
    const parsed = parseCellRecord(item, `history.records[${i}]`);
    if ('record' in parsed) {
      records.push(parsed.record);
    } else {
      errors.push(parsed.error);
    }
  });
  return { records, errors };
}
