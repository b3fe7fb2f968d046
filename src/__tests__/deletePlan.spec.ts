import {
  expectedFreedBytes,
  makeDeletePlan,
  TRACEBACK_WARNING
} from '../model/deletePlan';
import { makeEntry, makeHidden, makeListing } from './cleanupFixtures';
import { GiB, MiB } from './fixtures';

describe('expected freed bytes', () => {
  it('sums the ticked entries, per device, exactly when no alias stays', () => {
    const listing = makeListing();
    const plan = makeDeletePlan(listing, ['model', 'np_arr'], []);
    expect(plan?.expected).toEqual({
      bytes: GiB + 8 * MiB,
      byDevice: { 'cuda:0': GiB, cpu: 8 * MiB },
      atMost: false,
      reasons: []
    });
  });

  it('says "at most" when an unticked name shares storage', () => {
    const plan = makeDeletePlan(makeListing(), ['a'], []);
    expect(plan?.expected.bytes).toBe(256 * MiB);
    expect(plan?.expected.atMost).toBe(true);
    expect(plan?.expected.reasons).toEqual([
      'a shares storage with b, which stays'
    ]);
  });

  it('is exact when every alias is ticked (shared bytes counted once)', () => {
    const plan = makeDeletePlan(makeListing(), ['a', 'b'], []);
    expect(plan?.expected).toMatchObject({ bytes: 256 * MiB, atMost: false });
  });

  it('says "at most" when the output cache is cleared with names it holds', () => {
    const plan = makeDeletePlan(makeListing(), ['a', 'b'], ['output_cache']);
    expect(plan?.expected.bytes).toBe(512 * MiB);
    expect(plan?.expected.atMost).toBe(true);
    expect(plan?.expected.reasons).toContain(
      'the output cache holds some of the same objects'
    );
  });

  it('counts hidden holders alone', () => {
    expect(expectedFreedBytes([], [makeHidden()])).toEqual({
      bytes: MiB,
      byDevice: { cpu: MiB },
      atMost: false,
      reasons: []
    });
  });

  it('an alias outside the listing also makes it "at most"', () => {
    const e = makeEntry({ name: 'v', shared_with: ['gone'] });
    expect(expectedFreedBytes([e], []).atMost).toBe(true);
  });
});

describe('makeDeletePlan', () => {
  it('keeps only deletable listed names and known holders, in listing order', () => {
    const plan = makeDeletePlan(
      makeListing(),
      ['np_arr', 'torch', 'nope', 'model'],
      ['last_traceback', 'bogus']
    );
    expect(plan?.listingId).toBe('L1');
    expect(plan?.entries.map(e => e.name)).toEqual(['model', 'np_arr']);
    expect(plan?.hidden.map(h => h.holder)).toEqual(['last_traceback']);
    expect(plan?.warnings).toEqual([TRACEBACK_WARNING]);
  });

  it('adds the traceback warning when the kernel gives none', () => {
    const listing = makeListing({ hidden: [makeHidden({ warning: null })] });
    const plan = makeDeletePlan(listing, [], ['last_traceback']);
    expect(plan?.warnings).toEqual([TRACEBACK_WARNING]);
  });

  it('is null when nothing deletable is chosen', () => {
    expect(makeDeletePlan(makeListing(), ['torch'], [])).toBeNull();
    expect(makeDeletePlan(makeListing(), [], [])).toBeNull();
  });
});
