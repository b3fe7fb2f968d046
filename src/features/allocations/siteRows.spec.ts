/**
 * Tests for the site rows: the kernel's allocation sites become rows that are
 * mapped to cells, folded when small, and written as CSV.
 */
import { parseAllocationSites } from '../../protocol/allocation';
import {
  cellIdsByCount,
  foldSmallSites,
  SiteRow,
  siteRow,
  siteRows,
  sitesToCsv
} from './siteRows';
import {
  kernelListing,
  parsedListing
} from '../../testing/allocationSitesFixtures';

describe('site rows', () => {
  it('maps sites to cells: by id, else by execution count through the cell records', () => {
    const cellIds = cellIdsByCount([
      { execution_count: 7, cell_id: 'cell-b' },
      { execution_count: 8, cell_id: null },
      { execution_count: 9, cell_id: 'cell-a' }
    ]);
    const [host] = siteRows(parsedListing(), cellIds);
    const [big, json, outside] = host.rows;
    expect(big).toMatchObject({
      label: '[9] line 3',
      cellId: 'cell-a',
      executionCount: 9,
      line: 3,
      inNotebook: true,
      library: null
    });
    expect(json).toMatchObject({
      label: '[7] line 2',
      // The kernel did not know this cell's id, so it comes from the cell
      // record of In[7].
      cellId: 'cell-b',
      line: 2,
      library: 'python3.11/json/decoder.py:353'
    });
    expect(outside).toMatchObject({
      label: 'pandas/core/frame.py:702 in f',
      cellId: null,
      executionCount: null,
      inNotebook: false
    });
  });

  it('says a line is one of the cells with the same code, whose allocations cannot be told apart', () => {
    const listing = kernelListing() as any;
    listing.devices[0].sites[1].cell = {
      execution_count: 9,
      cell_id: 'cell-b',
      line: 1,
      same_code_cells: ['cell-a', 'cell-b']
    };
    const parsed = parseAllocationSites(listing);
    if (!('value' in parsed)) {
      throw new Error(parsed.error);
    }
    const site = parsed.value.devices[0].sites.find(
      s => s.cell?.cell_id === 'cell-b'
    )!;
    const row = siteRow(site, new Map());
    expect(row.label).toBe('[9] line 1, one of 2 cells with this code');
    // The row goes to the cell that ran last.
    expect(row.cellId).toBe('cell-b');
    listing.devices[0].sites[1].cell.same_code_cells = [7];
    expect(parseAllocationSites(listing)).toEqual({
      error: expect.stringContaining('same_code_cells[0]: expected a string')
    });
  });

  it('leaves a cell unknown when nothing names it', () => {
    const row = siteRow(
      {
        device: 'host',
        cell: { execution_count: 3, cell_id: null, line: 1 },
        frame: null,
        code: null,
        library_frame: null,
        bytes: 1,
        count: 1
      },
      new Map()
    );
    expect(row.cellId).toBeNull();
    expect(row.executionCount).toBe(3);
  });

  /**
   * Returns a host site row of `bytes`, in the notebook or in a library; its
   * line number is `bytes` too, so that each row is easy to tell apart.
   */
  const siteOf = (bytes: number, inNotebook: boolean, count = 1): SiteRow => ({
    device: 'host',
    label: inNotebook ? `[1] line ${bytes}` : `lib.py:${bytes}`,
    cellId: null,
    executionCount: inNotebook ? 1 : null,
    line: bytes,
    inNotebook,
    inConsole: false,
    code: null,
    library: null,
    bytes,
    count
  });

  it('folds the small sites outside the notebook, never a notebook line, and never one alone', () => {
    const row = siteOf;
    // These rows list 100,000,000 bytes, so the limit is 1,000,000 bytes: 1% of
    // them, which is above the 64 KiB floor.
    const rows = [
      row(90_000_000, true),
      row(6_000_000, false),
      row(2_000_000, false),
      row(999_999, false, 3),
      row(10, true),
      row(999_991, false, 4)
    ];
    const { shown, folded, foldedBytes, foldedCount } = foldSmallSites(rows);
    expect(shown.map(r => r.bytes)).toEqual([
      90_000_000, 6_000_000, 2_000_000, 10
    ]);
    expect(folded.map(r => r.bytes)).toEqual([999_999, 999_991]);
    expect(foldedBytes).toBe(1_999_990);
    expect(foldedCount).toBe(7);
    // A single small site is shown where it stands, because a fold would only
    // hide one row behind one line.
    const one = foldSmallSites(rows.slice(0, 5));
    expect(one.folded).toEqual([]);
    expect(one.shown).toHaveLength(5);
    expect(foldSmallSites([])).toEqual({
      shown: [],
      folded: [],
      foldedBytes: 0,
      foldedCount: 0
    });
  });

  it("folds the kernel's own few-KiB sites even where nothing of the notebook is listed yet", () => {
    const row = (bytes: number, inNotebook = false) =>
      siteOf(bytes, inNotebook);
    // Just after recording starts there are 30 sites of a few KiB each. Each is
    // well above 1% of the roughly 100 KiB listed, but below the 64 KiB floor.
    const early = Array.from({ length: 30 }, (_, i) => row(2_000 + i * 100));
    const { shown, folded } = foldSmallSites(early);
    expect(shown).toEqual([]);
    expect(folded).toHaveLength(30);
    // A site outside the notebook is shown at or above the floor, and a
    // notebook line is always shown.
    const later = foldSmallSites([
      row(64 * 1024),
      row(1_000),
      row(2_000),
      row(5, true)
    ]);
    expect(later.shown.map(r => r.bytes)).toEqual([64 * 1024, 5]);
  });

  it('writes CSV with quoting and without spreadsheet formulas', () => {
    const [host] = siteRows(parsedListing(), new Map());
    host.rows[0].code = '=HYPERLINK("x"), b';
    const csv = sitesToCsv(host.rows).split('\n');
    expect(csv[0]).toBe(
      'device,execution_count,cell_id,line,in_notebook,bytes,allocations,code,library_frame,where'
    );
    expect(csv[1]).toBe(
      'host,9,cell-a,3,true,32000112,1,"\'=HYPERLINK(""x""), b",,[9] line 3'
    );
    // The split gives the header, three rows, and an empty string after the
    // final newline.
    expect(csv).toHaveLength(5);
  });

  it('defuses a leading tab or carriage return in CSV as a formula too', () => {
    const [host] = siteRows(parsedListing(), new Map());
    host.rows[0].code = '\t=1+1';
    host.rows[0].label = '\r=1+1';
    const fields = sitesToCsv(host.rows).split('\n')[1];
    expect(fields).toContain(",'\t=1+1,");
    expect(fields.endsWith(',"\'\r=1+1"')).toBe(true);
  });
});
