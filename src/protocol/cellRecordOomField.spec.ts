/**
 * Tests the `oom` field of a cell record: a diagnosis is parsed, and an
 * absent one reads as null.
 */
import { parseCellRecord } from './cell';
import { makeOomDiagnosis, oomRecord } from '../testing/cellFixtures';

const diagnosis = makeOomDiagnosis;

describe('the oom field of a cell record', () => {
  it('parses a diagnosis and reads an absent one as null', () => {
    const parsed = parseCellRecord(oomRecord({ oom: diagnosis() }));
    expect('record' in parsed && parsed.record.oom?.causes[0].cause).toBe(
      'fragmentation'
    );
    const old = { ...oomRecord() } as any;
    delete old.oom;
    const parsedOld = parseCellRecord(old);
    expect('record' in parsedOld && parsedOld.record.oom).toBeNull();
  });

  it('names the bad field of a malformed diagnosis', () => {
    const bad = oomRecord({
      oom: { ...diagnosis(), requested_bytes: -1 } as any
    });
    expect(parseCellRecord(bad)).toEqual({
      error: expect.stringContaining('record.oom.requested_bytes')
    });
    const badCause = oomRecord({
      oom: { ...diagnosis(), causes: [{ gain_bytes: 1 }] } as any
    });
    expect(parseCellRecord(badCause)).toEqual({
      error: expect.stringContaining('record.oom.causes[0].cause')
    });
  });
});
