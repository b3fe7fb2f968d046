/**
 * Tests for SnippetLibrary: the snippet list loads after start-up, and the
 * commands asked for before it has loaded still run.
 */
import { CommandIDs } from '../../ui/commandIds';
import { SnippetInsertion } from './snippetCommands';
import { DEFAULT_SNIPPETS } from './defaultSnippets';
import { SnippetLibrary } from './SnippetLibrary';
import { readSnippetSettings } from './snippetSettings';
import {
  quietYjsCellWarnings,
  setup
} from '../../testing/snippetCommandsFixtures';

quietYjsCellWarnings();

describe('the library, loaded after start-up', () => {
  it('is empty until read, then reads the defaults or the setting, in the order asked', async () => {
    const library = new SnippetLibrary();
    const changes: string[] = [];
    library.changed.connect((_, change) => changes.push(change));
    expect(library.all).toEqual([]);
    expect(library.loadedBuiltin('amp')).toBeNull();

    const mine = {
      ...readSnippetSettings(undefined, DEFAULT_SNIPPETS).all[0],
      id: 'mine',
      title: 'Mine',
      builtin: false
    };
    const defaults = library.read(undefined);
    const own = library.read({ snippets: [mine] });
    await Promise.all([defaults, own]);
    // Both readings apply, in the order they were asked for, so the user's own
    // list, read last, replaces the defaults.
    expect(changes).toEqual(['snippets', 'snippets']);
    expect(library.all.map(s => s.id)).toEqual(['mine']);
    // The defaults still serve the dedicated commands, which name built-in
    // snippets by id.
    expect(library.loadedBuiltin('amp')?.id).toBe('amp');

    await library.read({ snippets: [{ ...mine }] });
    // The same snippets read again signal no change.
    expect(changes).toHaveLength(2);

    // An added duplicate id changes no snippet, because the first one wins, but
    // it is still a problem to report.
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    await library.read({ snippets: [mine, { ...mine, title: 'Mine again' }] });
    expect(library.all.map(s => s.title)).toEqual(['Mine']);
    expect(library.problems).toEqual([
      expect.stringContaining('another snippet before it has the id "mine"')
    ]);
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });

  it("reads the settings registry's default list at once, as the installed version's defaults", () => {
    // This stands for the registry's default of the setting, which is the
    // schema's; here one title has been fixed since the list was frozen.
    const defaults = DEFAULT_SNIPPETS.map(s =>
      s.id === 'amp' ? { ...s, title: 'AMP, fixed' } : s
    );
    const frozen = DEFAULT_SNIPPETS.map(s => ({
      ...s,
      hidden: s.id === 'amp'
    }));
    // `frozen` is the whole list as the Settings Editor wrote it into the
    // user's settings at an earlier version, with amp hidden by the user.
    const library = new SnippetLibrary();
    void library.read({ snippets: frozen }, defaults);
    // The result is there without waiting, so that the palette items come
    // with the settings.
    expect(library.get('amp')?.title).toBe('AMP, fixed');
    expect(library.get('amp')?.hidden).toBe(true);
    expect(library.visible.map(s => s.id)).not.toContain('amp');
    expect(library.loadedBuiltin('amp')?.title).toBe('AMP, fixed');
  });

  it("falls back to the copy in JavaScript where the registry's default does not read whole", async () => {
    const library = new SnippetLibrary();
    // JupyterLab 4.2 gives the default this way: entries without their fields.
    await library.read(
      { snippets: DEFAULT_SNIPPETS },
      DEFAULT_SNIPPETS.map(s => ({ id: s.id }))
    );
    expect(library.visible.map(s => s.id)).toEqual(
      DEFAULT_SNIPPETS.map(s => s.id)
    );
  });

  it('runs a snippet command asked for before the list has loaded', async () => {
    // Nothing has been read into this library yet.
    const library = new SnippetLibrary();
    const t = await setup({ library });
    t.sessionContext.setStatus('busy');
    expect(library.all).toEqual([]);
    const result = (await t.commands.execute(CommandIDs.insertSnippet, {
      id: 'amp'
    })) as SnippetInsertion;
    expect(result.id).toBe('amp');
    t.dispose();
  });

  it('gives a default snippet to a library made from settings without it', async () => {
    const library = new SnippetLibrary(
      readSnippetSettings({ snippets: [] }, DEFAULT_SNIPPETS)
    );
    expect(library.all).toEqual([]);
    expect((await library.builtin('no-grad-eval'))?.title).toBe(
      readSnippetSettings(undefined, DEFAULT_SNIPPETS).all.find(
        s => s.id === 'no-grad-eval'
      )?.title
    );
    expect(await library.builtin('no-such-snippet')).toBeNull();
  });
});
