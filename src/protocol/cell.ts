/**
 * Wire types and parsers of the per-cell records: the `cells` message and the
 * `history` reply (docs/protocol.md, `cell`). `parseKernelMessage`
 * (protocol.ts) dispatches to `readCells`; a record's `oom` is read by
 * protocol/oom.ts.
 */
import { OomDiagnosis, readOomDiagnosis } from './oom';
import { describeValue, FieldReader, ShapeError } from './reader';

export type CellStatus = 'ok' | 'error' | 'interrupted';

/** Why a cell failed; `null` in a record whose status is `ok`. */
export interface CellError {
  /** The exception's class name (kernel text: render as text). */
  type: string;
  /** The first 1000 characters of `str(exception)` (kernel text). */
  message_head: string;
  out_of_memory: boolean;
}

export interface CellHostMemory {
  rss_before_bytes: number | null;
  rss_after_bytes: number | null;
  rss_peak_bytes: number | null;
  peak_exact: boolean;
}

export interface CellGpuMemory {
  /** CUDA ordinal, as in samples. */
  index: number;
  allocated_before_bytes: number | null;
  allocated_after_bytes: number | null;
  allocated_peak_bytes: number | null;
  reserved_before_bytes: number | null;
  reserved_after_bytes: number | null;
  reserved_peak_bytes: number | null;
  peak_exact: boolean;
}

/** What one executed cell did to memory (docs/protocol.md, `cell`). */
export interface CellMemoryRecord {
  /** 1, 2, 3... per helper (a restart starts again at 1). */
  record_id: number;
  /** The `In[n]` number; null if IPython gave none. */
  execution_count: number | null;
  /** The notebook cell's id (= cell model id); null for console executions. */
  cell_id: string | null;
  /** Unix seconds (kernel clock) when the cell started. */
  started: number;
  duration_s: number;
  /** One of CellStatus; any other string is kept as is. */
  status: string;
  error: CellError | null;
  /** True when every peak in the record is exact. */
  peak_exact: boolean;
  host: CellHostMemory;
  /** Devices whose caching allocator holds or held memory (may be empty). */
  gpus: CellGpuMemory[];
  /** The out-of-memory diagnosis; null unless the cell died of OOM (absent from older helpers). */
  oom: OomDiagnosis | null;
}

/**
 * Per-cell records, oldest first: one message per round of the helper's
 * sender (a lone cell's record alone; a "Run All" gathers the cells of ~50 ms).
 */
export interface CellsMessage {
  type: 'cells';
  records: CellMemoryRecord[];
  /** One text per record that could not be read (the others are kept). */
  invalid: string[];
}

// ---------------------------------------------------------------------------
// Parser

/** Longest `cell_id` the protocol allows. */
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
  return {
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
    oom
  };
}

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
 * Validate one `CellMemoryRecord` (e.g. an item of a `history` reply).
 * Never throws.
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
 * Read the `result` of a `history` reply: the valid records, and one error
 * text per record (or for the whole result) that could not be read. Never
 * throws.
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
