/**
 * One allocation site of the kernel's allocation recording, and its reader:
 * the part that the `allocation_sites` listing and the out-of-memory
 * diagnosis share (see "Allocation sites" in docs/protocol.md). It is a
 * small module of its own because the OOM diagnosis is read at start-up,
 * while the rest of protocol/allocation.ts loads on demand.
 *
 * The wire types are generated from protocol/protocol.schema.json
 * (protocol.generated.ts) and re-exported here under the names the frontend
 * imports; the reader below checks untrusted JSON against them.
 */
import { describeValue, FieldReader, ShapeError } from './reader';
import type { AllocationSite, SiteCell, SiteFrame } from './protocol.generated';

export type { AllocationSite, SiteCell, SiteFrame } from './protocol.generated';

/**
 * Reads a non-negative count or byte figure, and throws a ShapeError otherwise.
 */
export function count(r: FieldReader, key: string): number {
  const v = r.bytes(key);
  if (v === null) {
    throw new ShapeError(
      `${r.path}.${key}: expected a non-negative number, got ${describeValue(r.data[key])}`
    );
  }
  return v;
}

function readFrame(r: FieldReader | null): SiteFrame | null {
  if (r === null) {
    return null;
  }
  return {
    filename: r.string('filename'),
    line: r.integer('line'),
    function: r.nullableString('function')
  };
}

function readSiteCell(cell: FieldReader): SiteCell {
  const out: SiteCell = {
    execution_count: cell.nullableInteger('execution_count'),
    cell_id: cell.nullableString('cell_id'),
    line: cell.integer('line')
  };
  const same = cell.nullableArray('same_code_cells');
  if (same !== null) {
    out.same_code_cells = same.map((id, i) => {
      if (typeof id !== 'string') {
        throw new ShapeError(
          `${cell.path}.same_code_cells[${i}]: expected a string, got ${describeValue(id)}`
        );
      }
      return id;
    });
  }
  return out;
}

/** Reads one site; the out-of-memory diagnosis uses it too. */
export function readSite(r: FieldReader): AllocationSite {
  const cell = r.nullableObject('cell');
  return {
    device: r.string('device'),
    cell: cell ? readSiteCell(cell) : null,
    frame: readFrame(r.nullableObject('frame')),
    code: r.nullableString('code'),
    library_frame: readFrame(r.nullableObject('library_frame')),
    bytes: count(r, 'bytes'),
    count: count(r, 'count')
  };
}
