import { CellHistory, CellHistoryChange } from './CellHistory';
import { KernelMemoryModel } from './KernelMemoryModel';
import { makeCellRecord, manyRecords } from '../testing/cellFixtures';
import { makeHello, wire } from '../testing/fixtures';

function history(capacity = 100) {
  const h = new CellHistory(capacity);
  h.startSession();
  const changes: CellHistoryChange[] = [];
  h.changed.connect((_, c) => changes.push(c));
  return { h, changes };
}

describe('CellHistory', () => {
  it('keeps records in order and finds the latest per cell', () => {
    const { h, changes } = history();
    h.add(makeCellRecord({ record_id: 1, cell_id: 'a' }));
    h.add(makeCellRecord({ record_id: 2, cell_id: 'b' }));
    h.add(makeCellRecord({ record_id: 3, cell_id: 'a', execution_count: 9 }));
    expect(h.entries.map(e => e.record.record_id)).toEqual([1, 2, 3]);
    expect(h.latestForCell('a')!.record.execution_count).toBe(9);
    expect(h.latestForCell('zzz')).toBeUndefined();
    expect(changes).toHaveLength(3);
    expect(changes[0]).toEqual({ kind: 'added', entries: [h.entries[0]] });
  });

  it('computes the summary once per entry', () => {
    const { h } = history();
    const entry = h.add(makeCellRecord())!;
    expect(entry.summary.source).toBe('gpu');
    expect(entry.summary.deltaBytes).toBe(1024 ** 3);
  });

  it('is bounded: the oldest go first, and their cells forget them', () => {
    const { h } = history(3);
    h.merge(manyRecords(5));
    expect(h.length).toBe(3);
    expect(h.entries.map(e => e.record.record_id)).toEqual([3, 4, 5]);
    expect(h.latestForCell('cell-1')).toBeUndefined();
    expect(h.latestForCell('cell-5')).toBeDefined();
    // An evicted record sent again (history reply) stays out.
    expect(h.add(manyRecords(1, 2)[0])).toBeNull();
    h.setCapacity(2);
    expect(h.entries.map(e => e.record.record_id)).toEqual([4, 5]);
  });

  it('de-duplicates live records against a history reply by record_id', () => {
    const { h, changes } = history();
    h.add(makeCellRecord({ record_id: 4, cell_id: 'd' }));
    h.add(makeCellRecord({ record_id: 5, cell_id: 'e' }));
    const added = h.merge(manyRecords(5));
    expect(added.map(e => e.record.record_id)).toEqual([1, 2, 3]);
    expect(h.entries.map(e => e.record.record_id)).toEqual([1, 2, 3, 4, 5]);
    // The held record 4 wins over the history's copy.
    expect(h.latestForCell('d')).toBeDefined();
    expect(h.latestForCell('cell-4')).toBeUndefined();
    expect(h.merge(manyRecords(5))).toEqual([]);
    expect(changes).toHaveLength(3);
  });

  it('remembers the clear point: a later history reply does not refill it', () => {
    const { h, changes } = history();
    h.merge(manyRecords(3));
    h.clear();
    expect(h.length).toBe(0);
    expect(h.latestForCell('cell-1')).toBeUndefined();
    expect(changes[changes.length - 1]).toEqual({ kind: 'cleared' });
    expect(h.merge(manyRecords(3))).toEqual([]);
    const next = h.merge(manyRecords(4));
    expect(next.map(e => e.record.record_id)).toEqual([4]);
  });

  it('starts again after a new kernel process (ids restart at 1)', () => {
    const { h } = history();
    h.merge(manyRecords(3));
    h.clear();
    h.startSession();
    const added = h.merge(manyRecords(2));
    expect(added.map(e => e.key)).toEqual(['2:1', '2:2']);
  });

  it('keeps records of an earlier process next to the new ones', () => {
    const { h } = history();
    h.add(makeCellRecord({ record_id: 1, cell_id: 'a', execution_count: 1 }));
    h.startSession();
    h.add(makeCellRecord({ record_id: 1, cell_id: 'a', execution_count: 2 }));
    expect(h.length).toBe(2);
    expect(h.latestForCell('a')!.record.execution_count).toBe(2);
  });

  it('bumps its version on each change', () => {
    const { h } = history();
    const v0 = h.version;
    h.add(makeCellRecord());
    expect(h.version).toBeGreaterThan(v0);
    const v1 = h.version;
    h.add(makeCellRecord()); // duplicate
    expect(h.version).toBe(v1);
  });
});

describe('KernelMemoryModel: cell records', () => {
  it('routes cell messages into its history and emits "cells"', () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    const changes: string[] = [];
    model.changed.connect((_, c) => changes.push(c));
    model.ingest(wire(makeHello()));
    const result = model.ingest(
      wire({ type: 'cells', records: [makeCellRecord()] })
    );
    expect(result.kind).toBe('message');
    expect(model.cells.length).toBe(1);
    expect(changes).toContain('cells');
  });

  it('reports a malformed cell message as a note and on the console, never throws', () => {
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeHello()));
    expect(() =>
      model.ingest({ type: 'cells', records: [{ record_id: 'x' }] })
    ).not.toThrow();
    expect(model.cells.length).toBe(0);
    expect(model.notes.find(n => n.id === 'helper-problem')!.text).toContain(
      'cells.records[0].record_id'
    );
    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining('cells.records[0].record_id')
    );
    warn.mockRestore();
  });

  it('keeps records when the same helper says hello again (reconnect)', () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeHello()));
    model.ingest(
      wire({ type: 'cells', records: [makeCellRecord({ record_id: 1 })] })
    );
    model.startKernelSession();
    model.ingest(wire(makeHello()));
    // The history reply repeats record 1: still one record.
    model.cells.merge([makeCellRecord({ record_id: 1 })]);
    expect(model.cells.length).toBe(1);
  });

  it('starts a new record session when the record series changes, even with the same pid', () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeHello()));
    model.ingest(
      wire({ type: 'cells', records: [makeCellRecord({ record_id: 1 })] })
    );
    model.startKernelSession();
    model.ingest(wire(makeHello({ record_series: 'series-2' })));
    model.ingest(
      wire({ type: 'cells', records: [makeCellRecord({ record_id: 1 })] })
    );
    expect(model.cells.length).toBe(2);
  });
});
