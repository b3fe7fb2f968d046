/**
 * The parsers of the results of the cleanup requests `free_memory`,
 * `inspect` and `delete`, described in docs/protocol.md. The request types
 * themselves are exported by messages.ts with the other requests.
 *
 * A reply's `result` is untrusted JSON like every kernel message, so the
 * parsers below check every field the UI relies on and never throw; a bad
 * result comes back as `{error}` naming the offending field.
 *
 * The wire types are generated from protocol/protocol.schema.json
 * (protocol.generated.ts) and re-exported here under the names the frontend
 * imports; the reader below checks untrusted JSON against them.
 */
import { FreeAction, HiddenHolderKind } from './messages';
import {
  describeValue,
  FieldReader,
  Parsed,
  parseWith,
  ShapeError
} from './reader';
import type {
  DeleteFailure,
  DeleteResult,
  FreeMemoryResult,
  GraphHolding,
  HiddenOverlap,
  InspectResult,
  MemorySnapshot
} from './protocol.generated';

export type {
  DeleteFailure,
  DeleteResult,
  FreeMemoryResult,
  GraphHolding,
  HiddenHolder,
  HiddenOverlap,
  HolderEntry,
  InspectResult,
  MemorySnapshot,
  SnapshotGpu
} from './protocol.generated';

/** What kind of object holds memory in a holders listing. */
export type HolderKind =
  | 'tensor'
  | 'module'
  | 'optimizer'
  | 'container'
  | 'ndarray'
  | 'bytes'
  | 'other';

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

/**
 * Reads the overlaps leniently. A malformed overlap is left out, but the
 * listing is never rejected for it.
 */
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
      // A malformed overlap is left out; the rest of the listing stands.
    }
  });
  return out.length ? { held_also_by: out } : {};
}

/**
 * Reads the failures leniently. The deletes are done whatever a failure's
 * detail says, so a malformed detail reads as an unknown step, never as a
 * failed reply.
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

/** Reads the `result` of a `free_memory` reply. It never throws. */
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

/** Reads the `result` of an `inspect` reply. It never throws. */
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
    // The sort is stable, so the kernel's order breaks ties.
    entries.sort((a, b) => b.total_bytes - a.total_bytes);
    return { listing_id, elapsed_ms, truncated, entries, hidden };
  });
}

/** Reads the `result` of a `delete` reply. It never throws. */
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
