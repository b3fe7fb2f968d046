import { parseCellRecord, parseHistoryResult } from './cell';
import { parseKernelMessage } from './messages';
import {
  makeCellRecord,
  makeRamRecord,
  oomRecord
} from '../testing/cellFixtures';
import { makeHello, wire } from '../testing/fixtures';

function cellMessage(record: unknown) {
  return { type: 'cells', records: [record] };
}

describe('parseKernelMessage: cells', () => {
  it('reads a cell record exactly as sent', () => {
    const record = oomRecord({ record_id: 12, execution_count: 7 });
    const result = parseKernelMessage(wire(cellMessage(record)));
    expect(result).toEqual({
      kind: 'message',
      message: { type: 'cells', records: [record], invalid: [] }
    });
  });

  it('reads the records of a "Run All" round in order, keeping the good ones beside a bad one', () => {
    const records = [1, 2, 3].map(id => makeCellRecord({ record_id: id }));
    const data = wire({
      type: 'cells',
      records: [records[0], { record_id: 'two' }, records[1], records[2]]
    });
    const result = parseKernelMessage(data);
    expect(result.kind).toBe('message');
    expect(result.kind === 'message' && result.message.type).toBe('cells');
    if (result.kind === 'message' && result.message.type === 'cells') {
      expect(result.message.records).toEqual(records);
      expect(result.message.invalid).toEqual([
        expect.stringContaining('cells.records[1].record_id')
      ]);
    }
  });

  it.each([
    ['no records', {}],
    ['records not an array', { records: { 0: 1 } }]
  ])('reports %s as malformed', (_name, fields) => {
    const result = parseKernelMessage({ type: 'cells', ...fields });
    expect(result.kind === 'malformed' && result.error).toContain(
      'cells.records'
    );
  });

  it('reads nulls: no execution count, console cell, unknown figures', () => {
    const record = makeRamRecord({
      execution_count: null,
      cell_id: null,
      host: {
        rss_before_bytes: null,
        rss_after_bytes: null,
        rss_peak_bytes: null,
        peak_exact: false
      }
    });
    const result = parseKernelMessage(wire(cellMessage(record)));
    expect(result.kind).toBe('message');
    expect(result.kind === 'message' && result.message.type).toBe('cells');
    if (result.kind === 'message' && result.message.type === 'cells') {
      const [read] = result.message.records;
      expect(read.execution_count).toBeNull();
      expect(read.cell_id).toBeNull();
      expect(read.host.rss_peak_bytes).toBeNull();
    }
  });

  it('treats a missing figure as unknown, never 0', () => {
    const data = wire(cellMessage(makeCellRecord())) as any;
    delete data.records[0].gpus[0].allocated_peak_bytes;
    const result = parseKernelMessage(data);
    expect(
      result.kind === 'message' &&
        result.message.type === 'cells' &&
        result.message.records[0].gpus[0].allocated_peak_bytes
    ).toBeNull();
  });

  const mutations: [string, (r: any) => void, string][] = [
    ['record not an object', r => (r.record = [1]), 'cells.records[0]'],
    [
      'fractional record_id',
      r => (r.record.record_id = 1.5),
      'cells.records[0].record_id'
    ],
    [
      'string execution_count',
      r => (r.record.execution_count = '7'),
      'cells.records[0].execution_count'
    ],
    [
      'numeric cell_id',
      r => (r.record.cell_id = 5),
      'cells.records[0].cell_id'
    ],
    [
      'too long cell_id',
      r => (r.record.cell_id = 'x'.repeat(257)),
      'cells.records[0].cell_id'
    ],
    [
      'missing started',
      r => delete r.record.started,
      'cells.records[0].started'
    ],
    [
      'negative duration',
      r => (r.record.duration_s = -1),
      'cells.records[0].duration_s'
    ],
    [
      'status not a string',
      r => (r.record.status = 0),
      'cells.records[0].status'
    ],
    [
      'error without type',
      r => (r.record.error = { message_head: 'x', out_of_memory: false }),
      'cells.records[0].error.type'
    ],
    [
      'error.out_of_memory a string',
      r =>
        (r.record.error = {
          type: 'E',
          message_head: '',
          out_of_memory: 'yes'
        }),
      'cells.records[0].error.out_of_memory'
    ],
    [
      'peak_exact missing',
      r => delete r.record.peak_exact,
      'cells.records[0].peak_exact'
    ],
    ['host missing', r => delete r.record.host, 'cells.records[0].host'],
    [
      'negative rss',
      r => (r.record.host.rss_after_bytes = -5),
      'cells.records[0].host.rss_after_bytes'
    ],
    ['gpus not an array', r => (r.record.gpus = {}), 'cells.records[0].gpus'],
    [
      'gpu without index',
      r => delete r.record.gpus[0].index,
      'cells.records[0].gpus[0].index'
    ],
    [
      'gpu figure a string',
      r => (r.record.gpus[0].reserved_after_bytes = '2 GiB'),
      'cells.records[0].gpus[0].reserved_after_bytes'
    ]
  ];
  it.each(mutations)(
    'reports %s as an invalid record, without throwing',
    (_name, mutate, fragment) => {
      const data = wire(cellMessage(makeCellRecord())) as any;
      const holder = { record: data.records[0] };
      mutate(holder);
      data.records[0] = holder.record;
      const result = parseKernelMessage(data);
      expect(result.kind).toBe('message');
      expect(result.kind === 'message' && result.message.type).toBe('cells');
      if (result.kind === 'message' && result.message.type === 'cells') {
        expect(result.message.records).toEqual([]);
        expect(result.message.invalid).toEqual([
          expect.stringContaining(fragment)
        ]);
      }
    }
  );
});

describe('hello config', () => {
  it('reads reset_peak_per_cell, defaulting to true when absent', () => {
    const data = wire(makeHello()) as any;
    data.config.reset_peak_per_cell = false;
    const r1 = parseKernelMessage(data);
    expect(
      r1.kind === 'message' &&
        r1.message.type === 'hello' &&
        r1.message.config.reset_peak_per_cell
    ).toBe(false);
    delete data.config.reset_peak_per_cell;
    const r2 = parseKernelMessage(data);
    expect(
      r2.kind === 'message' &&
        r2.message.type === 'hello' &&
        r2.message.config.reset_peak_per_cell
    ).toBe(true);
    data.config.reset_peak_per_cell = 1;
    expect(parseKernelMessage(data).kind).toBe('malformed');
  });
});

describe('parseCellRecord / parseHistoryResult', () => {
  it('keeps good records and names each bad one', () => {
    const good1 = makeCellRecord({ record_id: 1 });
    const good2 = makeCellRecord({ record_id: 3 });
    const { records, errors } = parseHistoryResult(
      wire({ records: [good1, { record_id: 'two' }, good2] })
    );
    expect(records).toEqual([good1, good2]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('history.records[1].record_id');
  });

  it.each([null, 5, {}, { records: 'many' }])(
    'reports a result of %p',
    result => {
      const { records, errors } = parseHistoryResult(result);
      expect(records).toEqual([]);
      expect(errors[0]).toContain('history.records');
    }
  );

  it('never throws on hostile values', () => {
    const hostile = {};
    Object.defineProperty(hostile, 'record_id', {
      get() {
        throw new Error('boom');
      },
      enumerable: true
    });
    expect(parseCellRecord(hostile)).toEqual({
      error: expect.stringContaining('boom')
    });
  });
});
