import {
  InspectResult,
  parseDeleteResult,
  parseFreeMemoryResult,
  parseInspectResult
} from './cleanup';
import {
  makeDeleteResult,
  makeEntry,
  makeFreeResult,
  makeListing
} from '../testing/cleanupFixtures';
import { MiB } from '../testing/fixtures';

function json(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

describe('cleanup reply parsers', () => {
  it('read a valid free_memory result', () => {
    const result = makeFreeResult();
    expect(parseFreeMemoryResult(json(result))).toEqual({ value: result });
  });

  it('read gc_collected and empty_cache null or missing as null', () => {
    const raw: any = json(makeFreeResult({ gc_collected: null }));
    delete raw.empty_cache;
    const parsed = parseFreeMemoryResult(raw);
    expect('value' in parsed && parsed.value.gc_collected).toBeNull();
    expect('value' in parsed && parsed.value.empty_cache).toBeNull();
  });

  it.each([
    [null, 'free_memory: expected an object'],
    [[], 'free_memory: expected an object'],
    [
      { ...makeFreeResult(), actions_run: 'gc' },
      'free_memory.actions_run: expected an array'
    ],
    [
      { ...makeFreeResult(), gc_collected: 1.5 },
      'free_memory.gc_collected: expected an integer'
    ],
    [
      { ...makeFreeResult(), before: undefined },
      'free_memory.before: expected an object'
    ],
    [
      { ...makeFreeResult(), after: { host: { rss_bytes: -1 }, gpus: [] } },
      'free_memory.after.host.rss_bytes: expected a non-negative number or null'
    ],
    [
      {
        ...makeFreeResult(),
        after: { host: { rss_bytes: 1 }, gpus: [{ index: 'x' }] }
      },
      'free_memory.after.gpus[0].index: expected an integer'
    ]
  ])('report a malformed free_memory result clearly (%#)', (raw, error) => {
    const parsed = parseFreeMemoryResult(json(raw));
    expect('error' in parsed).toBe(true);
    expect((parsed as { error: string }).error).toContain(error);
  });

  it('read what a shared-storage entry keeps alive, and nothing of it from an older helper', () => {
    const listing = makeListing();
    const b = (parsed: any) =>
      parsed.value.entries.find((e: any) => e.name === 'b');
    expect(b(parseInspectResult(json(listing)))).toMatchObject({
      shared_bytes: 256 * MiB,
      shared_bytes_by_device: { 'cuda:0': 256 * MiB },
      counted_under: ['a']
    });
    const older = json(listing) as any;
    for (const entry of older.entries) {
      delete entry.shared_bytes;
      delete entry.shared_bytes_by_device;
      delete entry.counted_under;
    }
    expect(b(parseInspectResult(older))).toMatchObject({
      shared_bytes: 0,
      shared_bytes_by_device: {},
      counted_under: []
    });
  });

  it('read whether an entry was sized in part (not said by an older helper: no)', () => {
    const raw = json(
      makeListing({
        entries: [
          makeEntry({ name: 'dataset', truncated: true }),
          makeEntry({ name: 'x' })
        ]
      })
    ) as any;
    delete raw.entries[1].truncated;
    const value = (parseInspectResult(raw) as { value: InspectResult }).value;
    expect(value.entries.map(e => [e.name, e.truncated])).toEqual([
      ['dataset', true],
      ['x', false]
    ]);
    raw.entries[1].truncated = 'yes';
    expect((parseInspectResult(raw) as { error: string }).error).toContain(
      'inspect.entries[1].truncated: expected true or false'
    );
  });

  it('read an inspect result and sort entries largest first', () => {
    const listing = makeListing();
    const shuffled = { ...listing, entries: [...listing.entries].reverse() };
    const parsed = parseInspectResult(json(shuffled));
    expect('value' in parsed).toBe(true);
    const value = (parsed as any).value;
    expect(value.entries.map((e: any) => e.name)).toEqual(
      [...listing.entries]
        .sort((a, b) => b.total_bytes - a.total_bytes)
        .map(e => e.name)
    );
    expect(value.hidden).toEqual(listing.hidden);
  });

  it.each([
    [
      { ...makeListing(), listing_id: 3 },
      'inspect.listing_id: expected a string'
    ],
    [
      { ...makeListing(), entries: [makeEntry({ shared_with: [1 as any] })] },
      'inspect.entries[0].shared_with[0]: expected a string'
    ],
    [
      {
        ...makeListing(),
        entries: [{ ...makeEntry(), bytes_by_device: { cpu: 'x' } }]
      },
      'inspect.entries[0].bytes_by_device.cpu'
    ],
    [
      { ...makeListing(), entries: [{ ...makeEntry(), deletable: 'yes' }] },
      'inspect.entries[0].deletable: expected true or false'
    ],
    [
      { ...makeListing(), entries: [{ ...makeEntry(), shared_bytes: -1 }] },
      'inspect.entries[0].shared_bytes'
    ],
    [
      {
        ...makeListing(),
        entries: [{ ...makeEntry(), counted_under: [null] }]
      },
      'inspect.entries[0].counted_under[0]: expected a string'
    ],
    [
      { ...makeListing(), hidden: [{ holder: 'output_cache' }] },
      'inspect.hidden[0].label: expected a string'
    ],
    [{ ...makeListing(), truncated: undefined }, 'inspect.truncated']
  ])('report a malformed inspect result clearly (%#)', (raw, error) => {
    const parsed = parseInspectResult(json(raw));
    expect((parsed as { error: string }).error).toContain(error);
  });

  it('read what another hidden holder holds too, leaving out a malformed overlap', () => {
    const listing = makeListing();
    const overlap = {
      holder: 'last_execution_result',
      bytes_by_device: { cpu: 4096 }
    };
    listing.hidden[0] = { ...listing.hidden[0], held_also_by: [overlap] };
    const raw = json(listing) as any;
    raw.hidden[1].held_also_by = [{ holder: 7 }];
    const parsed = parseInspectResult(raw);
    const value = (parsed as { value: InspectResult }).value;
    expect(value.hidden[0].held_also_by).toEqual([overlap]);
    expect(value.hidden[1].held_also_by).toBeUndefined();
  });

  it('read a delete result, and report a malformed one', () => {
    const result = makeDeleteResult({
      refused: [{ name: 'In', reason: 'IPython internal' }],
      still_alive: [{ name: 'x', reason: 'still referenced by a list' }]
    });
    expect(parseDeleteResult(json(result))).toEqual({ value: result });
    const failures = [
      {
        step: 'empty_cache',
        target: 'GPU 0',
        error: 'RuntimeError: CUDA error'
      }
    ];
    expect(parseDeleteResult(json({ ...result, failures }))).toEqual({
      value: { ...result, failures }
    });
    // A failure's detail never turns a done delete into a failed reply.
    const odd = parseDeleteResult(json({ ...result, failures: [{ step: 3 }] }));
    expect(odd).toEqual({
      value: {
        ...result,
        failures: [
          {
            step: 'unknown',
            target: null,
            error: 'a step failed (the kernel sent no readable detail)'
          }
        ]
      }
    });
    expect(parseDeleteResult(json({ ...result, failures: [] }))).toEqual({
      value: result
    });
    const bad = parseDeleteResult({ ...result, refused: [{ name: 'In' }] });
    expect((bad as { error: string }).error).toContain(
      'delete.refused[0].reason: expected a string'
    );
  });
});
