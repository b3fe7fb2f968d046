/**
 * Tests for the dedicated insert commands, each of which inserts one default
 * snippet, whatever the user's list holds.
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

describe('dedicated insert commands', () => {
  it.each([
    [CommandIDs.insertNoGrad, 'no-grad-eval', 2],
    [CommandIDs.insertAmp, 'amp', 2],
    [CommandIDs.insertTfMemoryGrowth, 'tf-memory-growth', 0]
  ])('%s inserts %s at %d', async (command, id, index) => {
    const t = await setup();
    t.sessionContext.setStatus('busy');
    const result = (await t.commands.execute(command)) as SnippetInsertion;
    expect(result.id).toBe(id);
    expect(result.index).toBe(index);
    t.dispose();
  });

  it('still work when the user list leaves their snippet out', async () => {
    const library = new SnippetLibrary(
      readSnippetSettings({ snippets: [] }, DEFAULT_SNIPPETS)
    );
    const t = await setup({ library });
    t.sessionContext.setStatus('busy');
    const result = (await t.commands.execute(
      CommandIDs.insertAmp
    )) as SnippetInsertion;
    expect(result.id).toBe('amp');
    t.dispose();
  });
});
