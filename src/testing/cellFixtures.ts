/**
 * CellMemoryRecord fixtures shaped like docs/protocol.md's `cell` example.
 */
import type { CellHistoryEntry } from '../model/CellHistory';
import { summarizeCellRecord } from '../model/cellFigures';
import { CellGpuMemory, CellMemoryRecord } from '../protocol/cell';
import { OomDiagnosis } from '../protocol/oom';
import { GiB, MiB } from './fixtures';

export function makeCellGpu(
  overrides: Partial<CellGpuMemory> = {}
): CellGpuMemory {
  return {
    index: 0,
    allocated_before_bytes: 1 * GiB,
    allocated_after_bytes: 2 * GiB,
    allocated_peak_bytes: 3 * GiB,
    reserved_before_bytes: 2 * GiB,
    reserved_after_bytes: 4 * GiB,
    reserved_peak_bytes: 4 * GiB,
    peak_exact: true,
    ...overrides
  };
}

export function makeCellRecord(
  overrides: Partial<CellMemoryRecord> = {}
): CellMemoryRecord {
  return {
    record_id: 1,
    execution_count: 1,
    cell_id: 'cell-a',
    started: 1732200000.25,
    duration_s: 2.1,
    status: 'ok',
    error: null,
    peak_exact: true,
    host: {
      rss_before_bytes: 500 * MiB,
      rss_after_bytes: 520 * MiB,
      rss_peak_bytes: 600 * MiB,
      peak_exact: true
    },
    gpus: [makeCellGpu()],
    oom: null,
    ...overrides
  };
}

/** A record without GPU figures, as from a CPU-only kernel. */
export function makeRamRecord(
  overrides: Partial<CellMemoryRecord> = {}
): CellMemoryRecord {
  return makeCellRecord({ gpus: [], ...overrides });
}

/** A history entry of `record`, as the history of kernel start 1 keeps it. */
export function historyEntry(record: CellMemoryRecord): CellHistoryEntry {
  return {
    key: `1:${record.record_id}`,
    session: 1,
    record,
    summary: summarizeCellRecord(record)
  };
}

export function oomRecord(
  overrides: Partial<CellMemoryRecord> = {}
): CellMemoryRecord {
  return makeCellRecord({
    status: 'error',
    error: {
      type: 'OutOfMemoryError',
      message_head: 'CUDA out of memory. Tried to allocate 2.00 GiB.',
      out_of_memory: true
    },
    ...overrides
  });
}

/** Makes `count` records with ids 1..count on cells cell-1..cell-count. */
export function manyRecords(count: number, firstId = 1): CellMemoryRecord[] {
  const out: CellMemoryRecord[] = [];
  for (let i = 0; i < count; i++) {
    const id = firstId + i;
    out.push(
      makeCellRecord({
        record_id: id,
        execution_count: id,
        cell_id: `cell-${id}`,
        started: 1732200000 + id,
        duration_s: (id % 7) * 0.5,
        gpus: [
          makeCellGpu({
            allocated_before_bytes: 0,
            allocated_after_bytes: (id % 13) * MiB,
            allocated_peak_bytes: (id % 17) * MiB
          })
        ]
      })
    );
  }
  return out;
}

/**
 * A diagnosis's byte figures, every one unknown, as when the kernel could
 * not read them.
 */
export const UNKNOWN_OOM_FIGURES = {
  requested_bytes: null,
  total_bytes: null,
  free_bytes: null,
  allocated_bytes: null,
  reserved_unallocated_bytes: null,
  process_in_use_bytes: null,
  other_processes_bytes: null,
  capacity_bytes: null,
  stale_bytes: null
} satisfies Partial<OomDiagnosis>;

/**
 * A diagnosis shaped like what oom_diagnosis.py sends when fragmentation
 * made GPU 0 run out of memory.
 */
export function makeOomDiagnosis(
  overrides: Partial<OomDiagnosis> = {}
): OomDiagnosis {
  return {
    kind: 'cuda',
    library: null,
    device_index: 0,
    requested_bytes: 2 * GiB,
    total_bytes: 80 * GiB,
    free_bytes: 300 * MiB,
    allocated_bytes: 70 * GiB,
    reserved_unallocated_bytes: 6 * GiB,
    process_in_use_bytes: 77 * GiB,
    other_processes_bytes: 2 * GiB,
    other_processes: [{ pid: 4242, used_bytes: 2 * GiB }],
    capacity_bytes: null,
    allowed_bytes: null,
    num_alloc_retries: 3,
    stale_bytes: 4 * GiB,
    stale_holders: [
      { holder: 'name', label: 'activations', bytes: 3 * GiB },
      {
        holder: 'last_traceback',
        label: 'Traceback of the last error',
        bytes: 1 * GiB
      }
    ],
    causes: [
      { cause: 'fragmentation', gain_bytes: 6 * GiB },
      { cause: 'stale_references', gain_bytes: 4 * GiB },
      { cause: 'other_processes', gain_bytes: 2 * GiB }
    ],
    allocation_sites: null,
    ...overrides
  };
}
