/**
 * The rows of the "Lines" view, which map the kernel's allocation sites to
 * notebook cells, and the host sites as CSV. This module has no DOM.
 *
 * A site names its cell by `cell_id` when the kernel knew it, which it does
 * for cells run while recording was on; otherwise it names only the
 * execution count. The cell history, whose records carry both, maps such a
 * count to its cell.
 */
import {
  AllocationSite,
  AllocationSitesResult,
  SiteFrame
} from '../../protocol/allocation';
import { CellMemoryRecord } from '../../protocol/cell';
import { csvField } from '../../text/csvField';
import { trans } from '../../text/translation';

/**
 * One row of the "Lines" tab: an allocation site with the label and figures the
 * tab shows for it.
 */
export interface SiteRow {
  device: string;
  /**
   * The site's label: "[7] line 3", "[7] console, line 3" or "[7] line 3,
   * one of 2 cells with this code", or "json/decoder.py:353" outside the
   * notebook.
   */
  label: string;
  /**
   * The notebook cell to jump to, or null when unknown or outside the notebook.
   */
  cellId: string | null;
  executionCount: number | null;
  /** The 1-based line in the cell, or in the file outside the notebook. */
  line: number;
  inNotebook: boolean;
  /**
   * Whether the line is a console cell's (see ConsoleCells), in which case
   * there is no cell to go to.
   */
  inConsole: boolean;
  /** The line's text, which is kernel data. */
  code: string | null;
  /** The library frame beneath, such as "numpy/core/numeric.py:191 in ones". */
  library: string | null;
  bytes: number;
  count: number;
}

/**
 * Maps each execution count to a cell id, from the cell history's records;
 * the latest run wins.
 */
export function cellIdsByCount(
  records: Iterable<Pick<CellMemoryRecord, 'execution_count' | 'cell_id'>>
): Map<number, string> {
  const out = new Map<number, string>();
  for (const record of records) {
    if (record.execution_count !== null && record.cell_id !== null) {
      out.set(record.execution_count, record.cell_id);
    }
  }
  return out;
}

/** The last `parts` components of a path, such as "numpy/core/numeric.py". */
export function shortPath(filename: string, parts = 3): string {
  const pieces = filename.split(/[\\/]/).filter(p => p !== '');
  return pieces.slice(-parts).join('/') || filename;
}

/** Writes a stack frame as "path:line in function", with the path shortened. */
export function frameText(frame: SiteFrame): string {
  const where = `${shortPath(frame.filename)}:${frame.line}`;
  return frame.function ? trans.__('%1 in %2', where, frame.function) : where;
}

/** Whether a cell id is a console cell's, as ConsoleCells.has tells. */
export type IsConsoleCell = (cellId: string) => boolean;

const NO_CONSOLES: IsConsoleCell = () => false;

/**
 * Says where a site is, as in "[3] line 5" or "[ ] console, line 2, one of
 * 2 cells with this code".
 */
function siteLabel(
  count: number | null,
  inConsole: boolean,
  line: number,
  same: number
): string {
  const cell = `[${count ?? '?'}]`;
  const where = inConsole
    ? trans.__('%1 console, line %2', cell, line)
    : trans.__('%1 line %2', cell, line);
  return same > 1
    ? trans.__('%1, one of %2 cells with this code', where, same)
    : where;
}

/**
 * Turns one allocation site from the kernel into the row that the "Lines" tab
 * shows, naming the notebook cell it came from when one is known.
 */
export function siteRow(
  site: AllocationSite,
  cellIds: ReadonlyMap<number, string>,
  isConsoleCell: IsConsoleCell = NO_CONSOLES
): SiteRow {
  const cell = site.cell;
  if (cell) {
    const count = cell.execution_count;
    const cellId =
      cell.cell_id ?? (count !== null ? (cellIds.get(count) ?? null) : null);
    const inConsole = cellId !== null && isConsoleCell(cellId);
    const same = cell.same_code_cells?.length ?? 0;
    return {
      device: site.device,
      label: siteLabel(count, inConsole, cell.line, same),
      cellId,
      executionCount: count,
      line: cell.line,
      inNotebook: true,
      inConsole,
      code: site.code,
      library: site.library_frame ? frameText(site.library_frame) : null,
      bytes: site.bytes,
      count: site.count
    };
  }
  const frame = site.frame;
  return {
    device: site.device,
    label: frame ? frameText(frame) : 'unknown',
    cellId: null,
    executionCount: null,
    line: frame?.line ?? 0,
    inNotebook: false,
    inConsole: false,
    code: site.code,
    library: null,
    bytes: site.bytes,
    count: site.count
  };
}

/**
 * Every device's rows, largest first within each device, which is the
 * kernel's order.
 */
export function siteRows(
  listing: AllocationSitesResult,
  cellIds: ReadonlyMap<number, string>,
  isConsoleCell: IsConsoleCell = NO_CONSOLES
): { device: string; rows: SiteRow[] }[] {
  return listing.devices.map(d => ({
    device: d.device,
    rows: d.sites.map(site => siteRow(site, cellIds, isConsoleCell))
  }));
}

/**
 * A site outside the notebook below this share of the device's listed bytes
 * goes into the fold: a host listing carries dozens of library allocations
 * of a few KiB (the JSON decoder, IPython's caches) that would bury the
 * notebook's own lines.
 */
export const SMALL_SITE_SHARE = 0.01;

/**
 * A site outside the notebook below this many bytes goes into the fold too,
 * whatever its share: just after recording starts nothing of the notebook's
 * is listed yet, and the kernel's own messaging (zmq, the JSON codec,
 * jupyter_client) would otherwise fill the tab with rows of a few KiB.
 */
export const SMALL_SITE_BYTES = 64 * 1024;

/** One device's rows split into those shown and the small ones folded away. */
export interface FoldedRows {
  shown: SiteRow[];
  /**
   * The sites outside the notebook that are each below SMALL_SITE_SHARE of
   * the listed bytes or below SMALL_SITE_BYTES, in their order.
   */
  folded: SiteRow[];
  foldedBytes: number;
  foldedCount: number;
}

/**
 * Every notebook line stays shown, however small: those are the user's own.
 * Outside the notebook, a site below SMALL_SITE_SHARE of the listed bytes, or
 * below SMALL_SITE_BYTES, is folded, unless it would be folded alone,
 * because a fold of one hides nothing.
 */
export function foldSmallSites(rows: readonly SiteRow[]): FoldedRows {
  const listed = rows.reduce((sum, r) => sum + r.bytes, 0);
  const limit = Math.max(listed * SMALL_SITE_SHARE, SMALL_SITE_BYTES);
  const small = (r: SiteRow) => !r.inNotebook && r.bytes < limit;
  const folded = rows.filter(small);
  if (folded.length < 2) {
    return { shown: [...rows], folded: [], foldedBytes: 0, foldedCount: 0 };
  }
  return {
    shown: rows.filter(r => !small(r)),
    folded,
    foldedBytes: folded.reduce((sum, r) => sum + r.bytes, 0),
    foldedCount: folded.reduce((sum, r) => sum + r.count, 0)
  };
}

/** One device's sites as CSV, with the header first. */
export function sitesToCsv(rows: readonly SiteRow[]): string {
  const header = [
    'device',
    'execution_count',
    'cell_id',
    'line',
    'in_notebook',
    'bytes',
    'allocations',
    'code',
    'library_frame',
    'where'
  ];
  const lines = [header.join(',')];
  for (const r of rows) {
    lines.push(
      [
        r.device,
        r.executionCount,
        r.cellId,
        r.line,
        r.inNotebook ? 'true' : 'false',
        r.bytes,
        r.count,
        r.code,
        r.library,
        r.label
      ]
        // Every text of a site comes from the kernel (file names, code,
        // labels), so it is defused as a formula.
        .map(value => csvField(value, typeof value === 'string'))
        .join(',')
    );
  }
  return lines.join('\n') + '\n';
}
