/** processOrigin: which cell started a process, from when it was first seen. */
import { processOrigin } from './processOrigin';

const record = (record_id: number, started: number, duration_s: number) => ({
  record_id,
  execution_count: record_id + 10,
  cell_id: `cell-${record_id}`,
  started,
  duration_s
});

const records = [record(1, 100, 5), record(2, 110, 0.01)];

describe('processOrigin', () => {
  it('names the cell during which the process was first seen', () => {
    const origin = processOrigin(
      { at: 103, busy: true, preexisting: false },
      records
    );
    expect(origin).toEqual({ record: records[0], during: true });
  });

  it('names the last cell that started before it, when first seen after that cell ended', () => {
    // A Popen in a cell that returned at once: the next tree reading comes later.
    const origin = processOrigin(
      { at: 110.9, busy: false, preexisting: false },
      records
    );
    expect(origin).toEqual({ record: records[1], during: false });
  });

  it('says the running cell while that cell has no record yet', () => {
    const origin = processOrigin(
      { at: 120, busy: true, preexisting: false },
      records
    );
    expect(origin).toEqual({ record: null, during: true });
  });

  it('names none for a process there before this page watched, or before any cell', () => {
    expect(
      processOrigin({ at: 103, busy: false, preexisting: true }, records)
    ).toBeNull();
    expect(
      processOrigin({ at: 50, busy: false, preexisting: false }, records)
    ).toBeNull();
  });
});
