/**
 * Tests for reading the `snippets` setting: its entries, and the built-in
 * snippets, which it keeps in step with the installed version.
 */
import { DEFAULT_SNIPPETS } from './defaultSnippets';
import { parseSnippet, readSnippetSettings } from './snippetSettings';
import { CONTRACT_IDS } from '../../testing/snippetsFixtures';

function snippet(overrides: { [key: string]: unknown } = {}) {
  return {
    id: 'my-snippet',
    title: 'Mine',
    description: 'Something',
    framework: 'torch',
    placement: 'below',
    requiresFresh: null,
    code: ['{{model}}.eval()'],
    ...overrides
  };
}

describe('snippets setting', () => {
  it('reads a valid entry, hidden defaulting to false', () => {
    expect(parseSnippet(snippet())).toEqual({
      snippet: { ...snippet(), hidden: false }
    });
  });

  it.each([
    ['not an object', 'x', 'not an object'],
    ['missing code', { ...snippet(), code: undefined }, 'code'],
    ['a missing field', (() => { const s: any = snippet(); delete s.requiresFresh; return s; })(), 'missing field(s) "requiresFresh"'],
    ['an unknown field', snippet({ colour: 'red' }), 'unknown field(s) "colour"'],
    ['a bad id', snippet({ id: 'My Snippet' }), 'kebab-case'],
    ['an empty title', snippet({ title: ' ' }), 'title'],
    ['a bad framework', snippet({ framework: 'jax' }), 'framework'],
    ['a bad placement', snippet({ placement: 'bottom' }), 'placement'],
    ['a bad requiresFresh', snippet({ requiresFresh: 'gpu' }), 'requiresFresh'],
    ['a non-boolean hidden', snippet({ hidden: 'yes' }), 'hidden'],
    ['code as a string', snippet({ code: 'x = 1' }), 'code'],
    ['empty code', snippet({ code: [] }), 'code'],
    ['code with a non-string', snippet({ code: ['x', 1] }), 'code']
  ])('skips %s with a reason', (_, value, reason) => {
    const parsed = parseSnippet(value);
    expect('error' in parsed && parsed.error).toContain(reason);
  }); // prettier-ignore

  it('skips invalid entries and duplicate ids, keeping the first', () => {
    const read = readSnippetSettings(
      {
        snippets: [
          snippet({ id: 'a', title: 'first a' }),
          snippet({ id: 'bad', placement: 'middle' }),
          snippet({ id: 'a', title: 'second a' }),
          snippet({ id: 'b', hidden: true })
        ]
      },
      DEFAULT_SNIPPETS
    );
    expect(read.all.map(s => [s.id, s.title])).toEqual([
      ['a', 'first a'],
      ['b', 'Mine']
    ]);
    expect(read.visible.map(s => s.id)).toEqual(['a']);
    expect(read.problems).toHaveLength(2);
    expect(read.problems[0]).toContain('"bad"');
    expect(read.problems[1]).toContain(
      'another snippet before it has the id "a"'
    );
  });

  it('keeps a snippet with unknown placeholders, with a note', () => {
    const read = readSnippetSettings(
      {
        snippets: [snippet({ code: ['{{devise}}'] })]
      },
      DEFAULT_SNIPPETS
    );
    expect(read.all).toHaveLength(1);
    expect(read.problems[0]).toContain('{{devise}}');
  });

  it('uses the default list without a snippets array', () => {
    expect(
      readSnippetSettings({}, DEFAULT_SNIPPETS).all.map(s => s.id)
    ).toEqual(CONTRACT_IDS);
    const read = readSnippetSettings({ snippets: 'nope' }, DEFAULT_SNIPPETS);
    expect(read.all).toHaveLength(DEFAULT_SNIPPETS.length);
    expect(read.problems[0]).toContain('not an array');
  });

  it('respects an empty list (the user removed every snippet)', () => {
    expect(readSnippetSettings({ snippets: [] }, DEFAULT_SNIPPETS).all).toEqual(
      []
    );
  });
});

describe('built-in snippets follow the installed version', () => {
  // The Settings Editor leaves the whole default list in the user's settings,
  // as it was at that version; here the evaluation snippet has older code.
  const frozen = () =>
    DEFAULT_SNIPPETS.map(s =>
      s.id === 'no-grad-eval'
        ? { ...s, code: ['for inputs, targets in {{dataloader}}:', '    pass'] }
        : { ...s }
    );
  const code = (read: ReturnType<typeof readSnippetSettings>, id: string) =>
    read.all.find(s => s.id === id)!.code.join('\n');

  it("reads a frozen copy of a built-in as today's, keeping only its hidden flag", () => {
    const copy = frozen();
    copy.find(s => s.id === 'amp')!.hidden = true;
    const read = readSnippetSettings({ snippets: copy }, DEFAULT_SNIPPETS);
    expect(code(read, 'no-grad-eval')).toContain('{{eval_dataloader}}');
    expect(read.all.map(s => s.id)).toEqual(DEFAULT_SNIPPETS.map(s => s.id));
    expect(read.visible.map(s => s.id)).not.toContain('amp');
    expect(read.problems).toEqual([]);
  });

  it('reads a copy from before the mark (same id and title) the same way', () => {
    const legacy = frozen().map(({ builtin: _builtin, ...rest }) => rest);
    expect(
      code(
        readSnippetSettings({ snippets: legacy }, DEFAULT_SNIPPETS),
        'no-grad-eval'
      )
    ).toContain('{{eval_dataloader}}');
  });

  it("keeps the user's own version of a built-in under another title, and their own snippets", () => {
    const mine = {
      ...DEFAULT_SNIPPETS[0],
      title: 'My evaluation',
      code: ['print("mine")']
    };
    delete (mine as any).builtin;
    const own = {
      id: 'my-cell',
      title: 'Mine',
      description: '',
      framework: 'torch',
      placement: 'below',
      requiresFresh: null,
      code: ['x = 1']
    };
    const read = readSnippetSettings(
      { snippets: [mine, own] },
      DEFAULT_SNIPPETS
    );
    expect(read.all.map(s => [s.id, s.code.join('')])).toEqual([
      [DEFAULT_SNIPPETS[0].id, 'print("mine")'],
      ['my-cell', 'x = 1']
    ]);
    // Neither entry counts as a built-in (the first lacks the mark and has
    // another title), so the user's own list replaces the defaults.
  });

  it('adds the built-ins a copy from an older version lacks, and drops those this version no longer has', () => {
    const older = frozen().filter(s => s.id !== 'loss-item');
    older.push({
      ...DEFAULT_SNIPPETS[0],
      id: 'retired-snippet',
      builtin: true
    });
    const read = readSnippetSettings({ snippets: older }, DEFAULT_SNIPPETS);
    expect(read.all.map(s => s.id)).toContain('loss-item');
    expect(read.all.map(s => s.id)).not.toContain('retired-snippet');
    expect(read.problems).toEqual([
      expect.stringContaining('a built-in snippet this version no longer has')
    ]);
  });

  it('refuses a builtin flag that is not a boolean', () => {
    const parsed = parseSnippet({ ...DEFAULT_SNIPPETS[0], builtin: 'yes' });
    expect('error' in parsed && parsed.error).toContain('builtin');
  });
});
