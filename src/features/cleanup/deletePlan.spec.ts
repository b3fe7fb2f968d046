import {
  expectedFreedBytes,
  makeDeletePlan,
  tracebackWarning
} from './deletePlan';
import {
  makeEntry,
  makeHidden,
  makeListing
} from '../../testing/cleanupFixtures';
import { GiB, MiB } from '../../testing/fixtures';

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

  it('takes off what an unticked alias keeps alive, and still says "at most"', () => {
    const plan = makeDeletePlan(makeListing(), ['a'], []);
    // The unticked b keeps the 256 MiB of a alive, so none of it comes back.
    expect(plan?.expected.bytes).toBe(0);
    expect(plan?.expected.byDevice).toEqual({});
    expect(plan?.expected.atMost).toBe(true);
    expect(plan?.expected.reasons).toEqual([
      'a shares storage with b, which stays'
    ]);
  });

  it('takes off per device the largest of the aliases that keep the same bytes, and only where all owners are ticked', () => {
    const a = makeEntry({
      name: 'a',
      bytes_by_device: { 'cuda:0': 384 * MiB },
      total_bytes: 384 * MiB,
      shared_with: ['b', 'v', 'w']
    });
    const alias = (name: string, bytes: number, owners: string[]) =>
      makeEntry({
        name,
        bytes_by_device: {},
        total_bytes: 0,
        shared_with: ['a'],
        shared_bytes: bytes,
        shared_bytes_by_device: { 'cuda:0': bytes },
        counted_under: owners
      });
    const b = alias('b', 256 * MiB, ['a']);
    // v may or may not share the storage of b; either way, at least 256 MiB
    // stays.
    const v = alias('v', 256 * MiB, ['a']);
    // w is partly counted under a name that is not ticked.
    const w = alias('w', 300 * MiB, ['a', 'elsewhere']);
    const expected = expectedFreedBytes([a], [], [b, v, w]);
    expect(expected.bytes).toBe(128 * MiB);
    expect(expected.byDevice).toEqual({ 'cuda:0': 128 * MiB });
    expect(expected.atMost).toBe(true);
    expect(expected.reasons).toEqual([
      'a shares storage with b, v, w, which stay'
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

  it('counts of a hidden holder only what no listed name holds: the rest comes with the name, or stays with it', () => {
    // The output cache holds a (256 MiB, counted under a) and nothing else.
    const cache = makeHidden({
      holder: 'output_cache',
      bytes_by_device: { 'cuda:0': 256 * MiB },
      total_bytes: 256 * MiB,
      named_bytes_by_device: { 'cuda:0': 256 * MiB }
    });
    const listing = makeListing({ hidden: [cache] });
    // Deleting a and b and clearing the cache gives back exactly 256 MiB,
    // counted once.
    expect(
      makeDeletePlan(listing, ['a', 'b'], ['output_cache'])!.expected
    ).toEqual({
      bytes: 256 * MiB,
      byDevice: { 'cuda:0': 256 * MiB },
      atMost: false,
      reasons: []
    });
    // Clearing the cache alone gives back nothing, because a and b keep it
    // all alive.
    expect(
      makeDeletePlan(listing, [], ['output_cache'])!.expected
    ).toMatchObject({ bytes: 0 });
    // When only part of the cache is shared with names, only the rest comes
    // back from clearing it.
    const half = makeHidden({
      holder: 'output_cache',
      bytes_by_device: { 'cuda:0': 300 * MiB, cpu: 8 * MiB },
      total_bytes: 308 * MiB,
      named_bytes_by_device: { 'cuda:0': 256 * MiB }
    });
    expect(expectedFreedBytes([], [half]).byDevice).toEqual({
      'cuda:0': 44 * MiB,
      cpu: 8 * MiB
    });
  });

  it('says "at most" when two hidden holders are cleared: they may hold the same objects', () => {
    const expected = expectedFreedBytes(
      [],
      [makeHidden({ holder: 'output_cache' }), makeHidden()]
    );
    expect(expected.atMost).toBe(true);
    expect(expected.reasons).toEqual([
      'the hidden references may hold the same objects'
    ]);
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
    expect(plan?.warnings).toEqual([tracebackWarning()]);
  });

  it('adds the traceback warning when the kernel gives none', () => {
    const listing = makeListing({ hidden: [makeHidden({ warning: null })] });
    const plan = makeDeletePlan(listing, [], ['last_traceback']);
    expect(plan?.warnings).toEqual([tracebackWarning()]);
  });

  it('is null when nothing deletable is chosen', () => {
    expect(makeDeletePlan(makeListing(), ['torch'], [])).toBeNull();
    expect(makeDeletePlan(makeListing(), [], [])).toBeNull();
  });

  it('takes off what another, unticked hidden holder holds too, and names it', () => {
    const t = { cpu: 64 * MiB };
    const cache = makeHidden({
      holder: 'output_cache',
      bytes_by_device: t,
      total_bytes: 64 * MiB,
      held_also_by: [{ holder: 'last_execution_result', bytes_by_device: t }]
    });
    const last = makeHidden({
      holder: 'last_execution_result',
      bytes_by_device: t,
      total_bytes: 64 * MiB,
      warning: null,
      held_also_by: [{ holder: 'output_cache', bytes_by_device: t }]
    });
    const listing = makeListing({ entries: [], hidden: [cache, last] });
    const alone = makeDeletePlan(listing, [], ['output_cache'])!.expected;
    expect(alone.bytes).toBe(0);
    expect(alone.atMost).toBe(true);
    expect(alone.reasons).toEqual([
      'the output cache holds some of the same objects as the last execution result, which stays'
    ]);
    // When both holders are ticked, the object comes back and is counted
    // once.
    const both = makeDeletePlan(
      listing,
      [],
      ['output_cache', 'last_execution_result']
    )!.expected;
    expect(both.bytes).toBe(64 * MiB);
    expect(both.byDevice).toEqual({ cpu: 64 * MiB });
  });

  it('takes off what each of two other hidden holders holds too, never promising more than comes back', () => {
    // The traceback shares one object with the output cache and another one
    // with the last result.
    const traceback = makeHidden({
      holder: 'last_traceback',
      bytes_by_device: { cpu: 100 * MiB },
      total_bytes: 100 * MiB,
      held_also_by: [
        { holder: 'output_cache', bytes_by_device: { cpu: 30 * MiB } },
        { holder: 'last_execution_result', bytes_by_device: { cpu: 20 * MiB } }
      ]
    });
    const listing = makeListing({ entries: [], hidden: [traceback] });
    expect(
      makeDeletePlan(listing, [], ['last_traceback'])!.expected.bytes
    ).toBe(50 * MiB);
  });
});
