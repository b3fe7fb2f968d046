/**
 * Tests for the places where the snippets are offered: the palette items, the
 * Memory tab's buttons and the toolbar's Memory menu.
 */
import { Widget } from '@lumino/widgets';

import { CommandIDs } from '../../ui/commandIds';
import { DEFAULT_SNIPPETS } from './defaultSnippets';
import { readSnippetSettings } from './snippetSettings';
import { MemoryToolbarButton } from './MemoryToolbarButton';
import { settle } from '../../testing/fakeKernel';
import { CONTRACT_IDS } from '../../testing/snippetsFixtures';
import {
  quietYjsCellWarnings,
  setup,
  sources
} from '../../testing/snippetCommandsFixtures';

quietYjsCellWarnings();

describe('palette, sidebar and toolbar', () => {
  it('lists one palette item per visible snippet, following the setting', async () => {
    const t = await setup();
    const snippetItems = () =>
      t.paletteItems
        .filter(i => i.command === CommandIDs.insertSnippet)
        .map(i => i.args.id);
    expect(snippetItems()).toEqual(t.library.visible.map(s => s.id));
    expect(snippetItems()).toHaveLength(CONTRACT_IDS.length);
    expect(t.paletteItems.every(i => i.category === 'GPU memory (VRAM)')).toBe(
      true
    );

    t.library.update(
      readSnippetSettings(
        {
          snippets: t.library.all.map(s => ({ ...s, hidden: s.id !== 'amp' }))
        },
        DEFAULT_SNIPPETS
      )
    );
    expect(snippetItems()).toEqual(['amp']);
    t.dispose();
  });

  it('shows a button per visible snippet in the Memory tab', async () => {
    const t = await setup();
    t.render();
    const buttons = Array.from(
      t.sidebar.node.querySelectorAll<HTMLButtonElement>(
        '[data-vram-role="snippet-button"]'
      )
    );
    expect(buttons.map(b => b.dataset.vramSnippet)).toEqual(
      t.library.visible.map(s => s.id)
    );
    expect(buttons.every(b => !b.disabled)).toBe(true);
    expect(t.sidebar.snippets.isHidden).toBe(false);
    t.sidebar.showTab('cells');
    expect(t.sidebar.snippets.isHidden).toBe(true);
    t.sidebar.showTab('memory');

    t.sessionContext.setStatus('busy');
    buttons.find(b => b.dataset.vramSnippet === 'loss-item')!.click();
    await settle();
    expect(sources(t.notebook)[2]).toContain('running_loss');
    t.dispose();
  });

  it('opens a Memory menu with the free-memory actions and the snippets', async () => {
    const t = await setup();
    const beforeOpen = jest.fn();
    const button = new MemoryToolbarButton({
      commands: t.commands,
      library: t.library,
      beforeOpen
    });
    Widget.attach(button, document.body);
    const node = button.node.querySelector(
      '[data-vram-role="toolbar-memory"]'
    ) as HTMLButtonElement;
    expect(node.textContent).toBe('Memory \u25BE');
    node.click();
    expect(beforeOpen).toHaveBeenCalled();
    const menu = button.menu;
    expect(menu.isAttached).toBe(true);
    expect(node.getAttribute('aria-expanded')).toBe('true');
    const commands = menu.items
      .filter(i => i.type === 'command')
      .map(i => i.command);
    expect(commands).toEqual([
      CommandIDs.freeMemory,
      CommandIDs.collectGarbage,
      CommandIDs.emptyCache,
      CommandIDs.inspectMemory,
      CommandIDs.openSidebar
    ]);
    const submenu = menu.items.find(i => i.type === 'submenu')!.submenu!;
    expect(submenu.items.map(i => i.args.id)).toEqual(
      t.library.visible.map(s => s.id)
    );
    expect(submenu.items[0].label).toBe(t.library.visible[0].title);
    menu.close();
    button.dispose();
    t.dispose();
  });
});
