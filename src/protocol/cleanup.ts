/**
 * Wire types and parsers of the cleanup requests: `free_memory`,
 * `inspect` and `delete` (docs/protocol.md; the request types themselves are
 * in protocol.ts with the other requests).
 *
 * A reply's `result` is untrusted JSON like every kernel message: the parsers
 * below check every field the UI relies on and never throw; a bad result
 * comes back as `{error}` naming the offending field.
 */
import { FreeAction, HiddenHolderKind } from './messages';
import {
  describeValue,
  FieldReader,
  Parsed,
  parseWith,
  ShapeError
} from './reader';

/** Memory figures taken just before and just after a cleanup. */
export interface MemorySnapshot {
  host: { rss_bytes: number | null };
  gpus: SnapshotGpu[];
}

export interface SnapshotGpu {
  index: number;
  allocated_bytes: number | null;
  reserved_bytes: number | null;
  nvml_used_bytes: number | null;
}

/** What `empty_cache` did; any other string is kept as is. */
export type EmptyCacheOutcome =
  'done' | 'skipped_torch_not_imported' | 'skipped_cuda_not_initialized';

export interface FreeMemoryResult {
  actions_run: string[];
  /** Objects `gc.collect()` found unreachable; null when gc did not run. */
  gc_collected: number | null;
  /** null when empty_cache was not asked for. */
  empty_cache: string | null;
  /** Steps that raised (gc, empty_cache), as a delete's; absent from older helpers. */
  failures?: DeleteFailure[];
  before: MemorySnapshot;
  after: MemorySnapshot;
  elapsed_ms: number;
}

export type HolderKind =
  | 'tensor'
  | 'module'
  | 'optimizer'
  | 'container'
  | 'ndarray'
  | 'bytes'
  | 'other';

/** One name of the user's namespace that holds memory. */
export interface HolderEntry {
  name: string;
  /** One of HolderKind; any other string is kept as is. */
  kind: string;
  type_name: string;
  summary: string;
  /** "cuda:0", "cpu", ... -> bytes. */
  bytes_by_device: { [device: string]: number };
  total_bytes: number;
  /** Other names of the listing that share storages with this one. */
  shared_with: string[];
  /**
   * Bytes this name keeps alive that another entry counts (each storage is
   * counted once, on the largest holder); 0 from an older helper.
   */
  shared_bytes: number;
  /** The same per device ("cuda:0", "cpu"); {} from an older helper. */
  shared_bytes_by_device: { [device: string]: number };
  /** The entries those bytes are counted under; [] from an older helper. */
  counted_under: string[];
  /** "Out[3]", "_", "_3": copies of it in IPython's output cache. */
  output_cache_refs: string[];
  deletable: boolean;
  /** Why it cannot be deleted (null when deletable). */
  refusal: string | null;
  /** Tensors in it that keep an autograd graph alive; null when none (or an older helper). */
  graph_holding: GraphHolding | null;
  /**
   * Its walk ran out of the listing's budget: it holds at least its figures
   * (false from an older helper).
   */
  truncated: boolean;
}

export interface GraphHolding {
  tensors: number;
  /** Distinct autograd nodes reachable from them (bounded: see `truncated`). */
  graph_nodes: number;
  truncated: boolean;
  /**
   * Bytes the graphs' saved tensors keep alive that no name holds directly
   * (counted in the entry's total); null when the kernel's torch cannot show
   * saved tensors without unpacking them.
   */
  bytes: number | null;
  /** Saved tensors a hook packed (checkpointing, offloading): their packed form is what is counted. */
  packed_by_hooks: number;
}

/** A reference the user cannot see: output cache, last traceback, last result. */
export interface HiddenHolder {
  /** One of HiddenHolderKind; any other string is kept as is. */
  holder: string;
  label: string;
  bytes_by_device: { [device: string]: number };
  total_bytes: number;
  /**
   * The part of it a listed name holds too, per device: clearing this holder
   * alone leaves it alive. {} when none (or from an older helper).
   */
  named_bytes_by_device: { [device: string]: number };
  summary: string;
  /** What clearing it costs (e.g. "%debug is lost"); null when nothing. */
  warning: string | null;
  /**
   * The other hidden holders that hold some of the same objects (what no
   * listed name holds), with those bytes per device: clearing this holder
   * alone leaves them alive. Absent when none (or from an older helper).
   */
  held_also_by?: HiddenOverlap[];
}

export interface HiddenOverlap {
  /** One of HiddenHolderKind; any other string is kept as is. */
  holder: string;
  bytes_by_device: { [device: string]: number };
}

export interface InspectResult {
  listing_id: string;
  elapsed_ms: number;
  truncated: boolean;
  /** Largest total_bytes first (sorted again here, whatever the kernel sent). */
  entries: HolderEntry[];
  hidden: HiddenHolder[];
}

export interface DeleteResult {
  deleted: string[];
  /** `hidden`: a hidden holder of the request (`output_cache`, ...), not a name. */
  refused: { name: string; reason: string; hidden?: boolean }[];
  cleared: string[];
  still_alive: { name: string; reason: string }[];
  /**
   * Steps that raised once the deleting began (an empty_cache after a sticky
   * CUDA error, a holder that could not be cleared): what `deleted` and
   * `cleared` list is done all the same. Absent when none (or from an older helper).
   */
  failures?: DeleteFailure[];
  before: MemorySnapshot;
  after: MemorySnapshot;
  elapsed_ms: number;
}

export interface DeleteFailure {
  /** 'delete' | 'clear' | 'gc' | 'empty_cache'; any other string is kept as is. */
  step: string;
  /** The name (delete), the hidden holder (clear), the GPU ("GPU 0") or null. */
  target: string | null;
  /** "RuntimeError: CUDA error: ..." */
  error: string;
}

function stringList(r: FieldReader, key: string): string[] {
  return r.array(key).map((item, i) => {
    if (typeof item !== 'string') {
      throw new ShapeError(
        `${r.path}.${key}[${i}]: expected a string, got ${describeValue(item)}`
      );
    }
    return item;
  });
}

function bytesByDevice(r: FieldReader, key: string): { [d: string]: number } {
  const map = r.object(key);
  const out: { [d: string]: number } = {};
  for (const device of Object.keys(map.data)) {
    const bytes = map.bytes(device);
    if (bytes === null) {
      throw new ShapeError(
        `${map.path}.${device}: expected a non-negative number, got null`
      );
    }
    out[device] = bytes;
  }
  return out;
}

function nonNegative(r: FieldReader, key: string): number {
  const v = r.bytes(key);
  if (v === null) {
    throw new ShapeError(
      `${r.path}.${key}: expected a non-negative number, got ${describeValue(r.data[key])}`
    );
  }
  return v;
}

function readSnapshot(r: FieldReader): MemorySnapshot {
  const host = r.object('host');
  return {
    host: { rss_bytes: host.bytes('rss_bytes') },
    gpus: r.array('gpus').map((item, i) => {
      const g = FieldReader.of(item, `${r.path}.gpus[${i}]`);
      return {
        index: g.integer('index'),
        allocated_bytes: g.bytes('allocated_bytes'),
        reserved_bytes: g.bytes('reserved_bytes'),
        nvml_used_bytes: g.bytes('nvml_used_bytes')
      };
    })
  };
}

function nameReasons(
  r: FieldReader,
  key: string
): { name: string; reason: string }[] {
  return r.array(key).map((item, i) => {
    const x = FieldReader.of(item, `${r.path}.${key}[${i}]`);
    return { name: x.string('name'), reason: x.string('reason') };
  });
}

/** Read leniently: a malformed overlap is left out, never the listing. */
function readHeldAlsoBy(h: FieldReader): { held_also_by?: HiddenOverlap[] } {
  let raw: unknown[] | null;
  try {
    raw = h.nullableArray('held_also_by');
  } catch {
    return {};
  }
  const out: HiddenOverlap[] = [];
  (raw ?? []).forEach((item, i) => {
    try {
      const o = FieldReader.of(item, `${h.path}.held_also_by[${i}]`);
      out.push({
        holder: o.string('holder'),
        bytes_by_device: bytesByDevice(o, 'bytes_by_device')
      });
    } catch {
      // leave it out
    }
  });
  return out.length ? { held_also_by: out } : {};
}

/**
 * Read leniently: the deletes are done whatever a failure's detail says, so
 * a malformed one reads as an unknown step, never as a failed reply.
 */
function readFailures(r: FieldReader): { failures?: DeleteFailure[] } {
  let raw: unknown[] | null;
  try {
    raw = r.nullableArray('failures');
  } catch {
    raw = [null];
  }
  if (raw === null || raw.length === 0) {
    return {};
  }
  return {
    failures: raw.map((item, i) => {
      try {
        const f = FieldReader.of(item, `${r.path}.failures[${i}]`);
        return {
          step: f.string('step'),
          target: f.has('target') ? f.nullableString('target') : null,
          error: f.string('error')
        };
      } catch {
        return {
          step: 'unknown',
          target: null,
          error: 'a step failed (the kernel sent no readable detail)'
        };
      }
    })
  };
}

function readGraphHolding(g: FieldReader | null): GraphHolding | null {
  if (g === null) {
    return null;
  }
  return {
    tensors: g.integer('tensors'),
    graph_nodes: g.integer('graph_nodes'),
    truncated: g.boolean('truncated'),
    bytes: g.bytes('bytes'),
    packed_by_hooks: g.integer('packed_by_hooks')
  };
}

/** Read the `result` of a `free_memory` reply. Never throws. */
export function parseFreeMemoryResult(
  result: unknown
): Parsed<FreeMemoryResult> {
  return parseWith(result, 'free_memory', r => {
    const actions_run = stringList(r, 'actions_run');
    const gc_collected = r.nullableInteger('gc_collected');
    const empty_cache = r.nullableString('empty_cache');
    return {
      actions_run,
      gc_collected,
      empty_cache,
      ...readFailures(r),
      before: readSnapshot(r.object('before')),
      after: readSnapshot(r.object('after')),
      elapsed_ms: r.number('elapsed_ms')
    };
  });
}

/** Read the `result` of an `inspect` reply. Never throws. */
export function parseInspectResult(result: unknown): Parsed<InspectResult> {
  return parseWith(result, 'inspect', r => {
    const listing_id = r.string('listing_id');
    const elapsed_ms = r.number('elapsed_ms');
    const truncated = r.boolean('truncated');
    const entries = r.array('entries').map((item, i) => {
      const e = FieldReader.of(item, `${r.path}.entries[${i}]`);
      return {
        name: e.string('name'),
        kind: e.string('kind'),
        type_name: e.string('type_name'),
        summary: e.string('summary'),
        bytes_by_device: bytesByDevice(e, 'bytes_by_device'),
        total_bytes: nonNegative(e, 'total_bytes'),
        shared_with: stringList(e, 'shared_with'),
        shared_bytes: e.bytes('shared_bytes') ?? 0,
        shared_bytes_by_device:
          e.nullableObject('shared_bytes_by_device') === null
            ? {}
            : bytesByDevice(e, 'shared_bytes_by_device'),
        counted_under:
          e.nullableArray('counted_under') === null
            ? []
            : stringList(e, 'counted_under'),
        output_cache_refs: stringList(e, 'output_cache_refs'),
        deletable: e.boolean('deletable'),
        refusal: e.nullableString('refusal'),
        graph_holding: readGraphHolding(e.nullableObject('graph_holding')),
        truncated: e.optionalBoolean('truncated', false)
      };
    });
    const hidden = r.array('hidden').map((item, i) => {
      const h = FieldReader.of(item, `${r.path}.hidden[${i}]`);
      return {
        holder: h.string('holder'),
        label: h.string('label'),
        bytes_by_device: bytesByDevice(h, 'bytes_by_device'),
        total_bytes: nonNegative(h, 'total_bytes'),
        named_bytes_by_device:
          h.nullableObject('named_bytes_by_device') === null
            ? {}
            : bytesByDevice(h, 'named_bytes_by_device'),
        summary: h.string('summary'),
        warning: h.nullableString('warning'),
        ...readHeldAlsoBy(h)
      };
    });
    // Stable sort: the kernel's order breaks ties.
    entries.sort((a, b) => b.total_bytes - a.total_bytes);
    return { listing_id, elapsed_ms, truncated, entries, hidden };
  });
}

/** Read the `result` of a `delete` reply. Never throws. */
export function parseDeleteResult(result: unknown): Parsed<DeleteResult> {
  return parseWith(result, 'delete', r => ({
    deleted: stringList(r, 'deleted'),
    refused: r.array('refused').map((item, i) => {
      const x = FieldReader.of(item, `${r.path}.refused[${i}]`);
      const hidden = x.has('hidden') && x.boolean('hidden');
      return {
        name: x.string('name'),
        reason: x.string('reason'),
        ...(hidden ? { hidden } : {})
      };
    }),
    cleared: stringList(r, 'cleared'),
    still_alive: nameReasons(r, 'still_alive'),
    ...readFailures(r),
    before: readSnapshot(r.object('before')),
    after: readSnapshot(r.object('after')),
    elapsed_ms: r.number('elapsed_ms')
  }));
}

export type { FreeAction, HiddenHolderKind };
