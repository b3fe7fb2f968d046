/**
 * The `history` reply's `timeline`: the charted figures of the samples that
 * the helper sent lately (it keeps up to 3,600 of them), so that a page
 * opened afterwards, after a reload or in a second tab, charts what the
 * kernel went through. It is stored as columns, oldest first, with `null`
 * where a figure was unknown, and with a row of all `null` where no
 * frontend was watching, which the chart draws as a gap.
 *
 * The wire types are generated from protocol/protocol.schema.json
 * (protocol.generated.ts) and re-exported here under the names the frontend
 * imports; the reader below checks untrusted JSON against them.
 */
import {
  describeValue,
  FieldReader,
  parseWith,
  Parsed,
  ShapeError
} from './reader';
import type { TimelineColumns } from './protocol.generated';

export type { TimelineColumns, TimelineGpuColumns } from './protocol.generated';

/**
 * Reads the `timeline` of a `history` result. An absent timeline, from a
 * helper older than the timeline, reads as null, not as an error.
 */
export function parseTimeline(result: unknown): Parsed<TimelineColumns | null> {
  const value =
    typeof result === 'object' && result !== null
      ? (result as { timeline?: unknown }).timeline
      : undefined;
  if (value === undefined || value === null) {
    return { value: null };
  }
  return parseWith(value, 'history.timeline', readTimeline);
}

function readTimeline(r: FieldReader): TimelineColumns {
  const times = r.array('times').map((t, i) => {
    if (typeof t !== 'number' || !Number.isFinite(t)) {
      throw new ShapeError(
        `${r.path}.times[${i}]: expected a number, got ${describeValue(t)}`
      );
    }
    return t;
  });
  const length = times.length;
  const column = (owner: FieldReader, key: string) =>
    byteColumn(owner.array(key), `${owner.path}.${key}`, length);
  const seen = new Set<number>();
  const gpus = r.array('gpus').map((item, i) => {
    const g = FieldReader.of(item, `${r.path}.gpus[${i}]`);
    const index = g.integer('index');
    if (index < 0 || seen.has(index)) {
      throw new ShapeError(`${g.path}.index: ${index} is negative or repeated`);
    }
    seen.add(index);
    return {
      index,
      allocated_bytes: column(g, 'allocated_bytes'),
      reserved_bytes: column(g, 'reserved_bytes'),
      process_used_bytes: column(g, 'process_used_bytes')
    };
  });
  return { times, rss_bytes: column(r, 'rss_bytes'), gpus };
}

function byteColumn(
  values: unknown[],
  path: string,
  length: number
): (number | null)[] {
  if (values.length !== length) {
    throw new ShapeError(
      `${path}: expected ${length} entries (one per time), got ${values.length}`
    );
  }
  values.forEach((v, i) => {
    if (
      v !== null &&
      !(typeof v === 'number' && Number.isFinite(v) && v >= 0)
    ) {
      throw new ShapeError(
        `${path}[${i}]: expected a non-negative number or null, got ${describeValue(v)}`
      );
    }
  });
  return values as (number | null)[];
}
