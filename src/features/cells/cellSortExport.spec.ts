/**
 * Tests for the Cells table's sort and for the CSV and JSON exports of the
 * cell history.
 */
import { CellHistory, CellHistoryEntry } from '../../model/CellHistory';
import {
  cellHistoryToCsv,
  cellHistoryToJson,
  CSV_COLUMNS,
  exportFileName
} from './cellExport';
import { csvField } from '../../text/csvField';
import { CELL_SORT_KEYS, sortCellEntries } from './cellSort';
import {
  makeCellGpu,
  makeCellRecord,
  makeRamRecord,
  oomRecord
} from '../../testing/cellFixtures';
import { MiB } from '../../testing/fixtures';

function entries(
  records: ReturnType<typeof makeCellRecord>[]
): readonly CellHistoryEntry[] {
  const h = new CellHistory();
  h.startSession();
  h.merge(records);
  return h.entries;
}

const gpu = (after: number, peak: number | null) => [
  makeCellGpu({
    allocated_before_bytes: 0,
    allocated_after_bytes: after * MiB,
    allocated_peak_bytes: peak === null ? null : peak * MiB
  })
];

const SAMPLE = () =>
  entries([
    makeCellRecord({
      record_id: 1,
      execution_count: 3,
      duration_s: 5,
      gpus: gpu(10, 50)
    }),
    makeCellRecord({
      record_id: 2,
      execution_count: null,
      duration_s: 1,
      gpus: gpu(30, null)
    }),
    oomRecord({
      record_id: 3,
      execution_count: 1,
      duration_s: 2,
      gpus: gpu(10, 90)
    }),
    makeCellRecord({
      record_id: 4,
      execution_count: 2,
      duration_s: 1,
      status: 'interrupted',
      gpus: gpu(-5, 20)
    })
  ]);

const ids = (list: readonly CellHistoryEntry[]) =>
  list.map(e => e.record.record_id);

describe('sortCellEntries', () => {
  it.each([
    ['execution_count', 'ascending', [3, 4, 1, 2]],
    ['execution_count', 'descending', [1, 4, 3, 2]],
    ['delta', 'ascending', [4, 1, 3, 2]],
    ['delta', 'descending', [2, 1, 3, 4]],
    ['peak', 'ascending', [4, 1, 3, 2]],
    ['peak', 'descending', [3, 1, 4, 2]],
    ['duration', 'ascending', [2, 4, 3, 1]],
    ['duration', 'descending', [1, 3, 2, 4]],
    ['status', 'ascending', [1, 2, 4, 3]],
    ['status', 'descending', [3, 4, 1, 2]]
  ] as const)(
    'sorts by %s %s, stable, unknown last',
    (key, direction, expected) => {
      expect(ids(sortCellEntries(SAMPLE(), { key, direction }))).toEqual(
        expected
      );
    }
  );

  it('sorts by the bytes still alive, entries without a figure last either way, stable', () => {
    const list = SAMPLE();
    // Records 1 and 4 hold the same figure, and 2 has none, as a console run
    // or an earlier run would.
    const alive = new Map<number, number>([
      [1, 8 * MiB],
      [3, 2 * MiB],
      [4, 8 * MiB]
    ]);
    const context = {
      aliveBytes: (e: CellHistoryEntry) => alive.get(e.record.record_id) ?? null
    };
    expect(
      ids(
        sortCellEntries(list, { key: 'alive', direction: 'ascending' }, context)
      )
    ).toEqual([3, 1, 4, 2]);
    expect(
      ids(
        sortCellEntries(
          list,
          { key: 'alive', direction: 'descending' },
          context
        )
      )
    ).toEqual([1, 4, 3, 2]);
    // Without the figures, as with recording off, nothing moves from record
    // order.
    expect(
      ids(sortCellEntries(list, { key: 'alive', direction: 'descending' }))
    ).toEqual([1, 2, 3, 4]);
  });

  it('covers every column and leaves the input alone', () => {
    const list = SAMPLE();
    for (const key of CELL_SORT_KEYS) {
      expect(
        sortCellEntries(list, { key, direction: 'ascending' })
      ).toHaveLength(4);
    }
    expect(ids(list)).toEqual([1, 2, 3, 4]);
  });

  it('sorts 10,000 records quickly', () => {
    const h = new CellHistory(10_000);
    h.startSession();
    const records = [];
    for (let i = 1; i <= 10_000; i++) {
      records.push(
        makeCellRecord({ record_id: i, duration_s: (i * 7919) % 1000 })
      );
    }
    h.merge(records);
    const t0 = performance.now();
    sortCellEntries(h.entries, { key: 'duration', direction: 'descending' });
    // The bound is generous, for a shared CI machine.
    expect(performance.now() - t0).toBeLessThan(200);
  });
});

describe('CSV export', () => {
  it('quotes commas, quotes, newlines and surrounding spaces', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('line1\nline2')).toBe('"line1\nline2"');
    expect(csvField('cr\r')).toBe('"cr\r"');
    expect(csvField(' padded')).toBe('" padded"');
    expect(csvField(null)).toBe('');
    expect(csvField(-5)).toBe('-5');
    expect(csvField(false)).toBe('false');
  });

  it('defuses spreadsheet formulas in kernel text only', () => {
    expect(csvField('=HYPERLINK("x")', true)).toBe('"\'=HYPERLINK(""x"")"');
    expect(csvField('-1', false)).toBe('-1');
  });

  it('writes a header and one line per record', () => {
    const list = entries([
      oomRecord({
        record_id: 7,
        execution_count: 4,
        error: {
          type: 'Weird,Error',
          message_head: 'bad "thing"\nhappened',
          out_of_memory: true
        }
      }),
      makeRamRecord({ record_id: 8, cell_id: null, execution_count: null })
    ]);
    const csv = cellHistoryToCsv(list);
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    expect(lines[1]).toContain('"Weird,Error","bad ""thing""\nhappened"');
    // The kernel start comes first, because record ids start again at each
    // kernel process.
    expect(lines[1].startsWith('1,7,4,cell-a,2024-11-21T')).toBe(true);
    expect(lines[2]).toContain(',ram,');
    expect(lines[2].startsWith('1,8,,,')).toBe(true);
    expect(lines[3]).toBe('');
  });

  it('tells the runs of two kernel processes apart, whose record ids both start at 1', () => {
    const h = new CellHistory();
    h.startSession('kernel-a');
    h.merge([makeCellRecord({ record_id: 1, execution_count: 1 })]);
    h.startSession('kernel-b');
    h.merge([makeCellRecord({ record_id: 1, execution_count: 1 })]);
    const rows = cellHistoryToCsv(h.entries).split('\r\n').slice(1, 3);
    expect(rows.map(row => row.split(',').slice(0, 3).join(','))).toEqual([
      '1,1,1',
      '2,1,1'
    ]);
  });
});

describe('JSON export', () => {
  it('keeps the records as sent, with derived figures', () => {
    const record = makeCellRecord({ record_id: 2 });
    const text = cellHistoryToJson(entries([record]), {
      notebook: 'a/b.ipynb',
      exportedAt: new Date(0)
    });
    const data = JSON.parse(text);
    expect(data.notebook).toBe('a/b.ipynb');
    expect(data.exported_at).toBe('1970-01-01T00:00:00.000Z');
    expect(data.records[0]).toMatchObject(record);
    expect(data.records[0].derived).toEqual({
      kernel_start: 1,
      source: 'gpu',
      delta_bytes: 1024 ** 3,
      peak_bytes: 3 * 1024 ** 3,
      peak_exact: true,
      outcome: 'ok',
      processes_host_delta_bytes: null,
      processes_host_sampled_max_bytes: null,
      processes_gpu_delta_bytes: null
    });
  });

  it('names files after the notebook', () => {
    expect(exportFileName('dir/Train model.ipynb', 'csv')).toBe(
      'Train model-memory-history.csv'
    );
    expect(exportFileName(null, 'json')).toBe('notebook-memory-history.json');
  });
});
