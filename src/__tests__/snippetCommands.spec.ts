/**
 * The snippet commands end to end in the frontend: command ->
 * `notebook_names` over the comm (fake kernel) -> rendered code -> a code
 * cell in a real shared notebook model (YNotebook), active, undoable in one
 * step -> restart warning as a notification and in the sidebar. Also the
 * palette items and the toolbar's Memory menu.
 */
import { YNotebook } from '@jupyter/ydoc';
import { CommandRegistry } from '@lumino/commands';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { CommandIDs } from '../commands';
import { SnippetInsertion } from '../snippetCommands';
import { RESTART_MESSAGES } from '../snippets/snippet';
import { DEFAULT_SNIPPETS } from '../snippets/defaultSnippets';
import { SnippetLibrary } from '../snippets/SnippetLibrary';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { readSnippetSettings } from '../snippets/snippetSettings';
import { MemorySidebar } from '../views/MemorySidebar';
import { MemoryToolbarButton } from '../views/MemoryToolbarButton';
import { makeSample, wire } from './fixtures';
import {
  liveMonitorOnFakeKernel,
  registerTestCommands,
  settle
} from './fakeKernel';


// Yjs warns when a cell gets its source before it joins the document, which
// is how @jupyter/ydoc creates every cell (JupyterLab's own inserts too).
const realWarn = console.warn;
beforeAll(() => {
  jest.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
    if (!String(args[0]).startsWith('Invalid access: Add Yjs type')) {
      realWarn(...args);
    }
  });
});
afterAll(() => jest.restoreAllMocks());

function makeNotebook(sources: string[], active: number) {
  const sharedModel = YNotebook.create();
  sharedModel.insertCells(
    0,
    sources.map(source => ({ cell_type: 'code' as const, source }))
  );
  sharedModel.clearUndoHistory();
  return {
    model: { sharedModel },
    activeCellIndex: active,
    deselectAll: jest.fn(),
    scrollToItem: jest.fn(async () => undefined)
  };
}

function sources(notebook: ReturnType<typeof makeNotebook>): string[] {
  return notebook.model.sharedModel.cells.map(c => c.getSource());
}

async function setup(options: { library?: SnippetLibrary } = {}) {
  const notebook = makeNotebook(['a = 1', 'b = 2', 'c = 3'], 1);
  const { kernel, sessionContext, comm, panel, tracker, monitor } = await liveMonitorOnFakeKernel({ id: 'notebook-1', content: notebook });
  expect(monitor.current?.state).toBe('live');

  let library = options.library;
  if (!library) {
    library = SnippetLibrary.withDefaults();
    await library.ready; // the default list loads on demand, after start-up
  }
  const commands = new CommandRegistry();
  const sidebar = new MemorySidebar({
    monitor,
    actionsFor: model => monitor.actionsFor(model),
    execute: (id, args) => void commands.execute(id, args),
    snippets: library
  });
  Widget.attach(sidebar, document.body);
  const paletteItems: any[] = [];
  const palette = {
    addItem: (item: any) => {
      paletteItems.push(item);
      return {
        isDisposed: false,
        dispose: () => paletteItems.splice(paletteItems.indexOf(item), 1)
      };
    }
  } as any;
  const { app, notes } = registerTestCommands(commands, {
    monitor,
    palette,
    sidebar,
    snippets: library,
    currentNotebook: () => tracker.currentWidget
  });
  const q = (selector: string) =>
    sidebar.node.querySelector(selector) as HTMLElement | null;
  /** The kernel answers the last request with `result`. */
  const reply = (result: unknown) => comm.reply(result);
  const namesRequests = () =>
    comm.sent.filter(m => m.type === 'notebook_names');
  return {
    kernel,
    sessionContext,
    comm,
    monitor,
    commands,
    app,
    sidebar,
    library,
    notebook,
    panel,
    notes,
    paletteItems,
    q,
    reply,
    namesRequests,
    render: () => MessageLoop.flush(),
    dispose: () => {
      sidebar.dispose();
      monitor.dispose();
      library.dispose();
    }
  };
}

const RUNTIME_FRESH = {
  torch_imported: true,
  cuda_initialized: false,
  tensorflow_imported: false,
  tensorflow_initialized: false
};

describe('insert-snippet', () => {
  it('asks the kernel for names and inserts the cell below the active one', async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.insertSnippet, {
      id: 'no-grad-eval'
    });
    await settle();
    expect(t.namesRequests()).toEqual([
      { type: 'notebook_names', request_id: expect.any(String) }
    ]);
    t.reply({
      model: ['net'],
      optimizer: [],
      dataloader: ['val_loader'],
      loss: [],
      scaler: [],
      runtime: RUNTIME_FRESH
    });
    const result = (await running) as SnippetInsertion;
    expect(result).toMatchObject({
      id: 'no-grad-eval',
      index: 2,
      restartNeeded: false,
      namesFound: true
    });
    const cells = sources(t.notebook);
    expect(cells).toHaveLength(4);
    expect(cells[2]).toBe(result.code);
    expect(cells[2]).toContain('net.to(device).eval()');
    expect(cells[2]).toContain('for inputs, targets in val_loader:');
    expect(cells[2]).not.toContain('{{');
    const cell = t.notebook.model.sharedModel.cells[2];
    expect(cell.cell_type).toBe('code');
    expect((cell as any).execution_count).toBe(null);
    expect(t.notebook.activeCellIndex).toBe(2);
    expect(t.notebook.deselectAll).toHaveBeenCalled();
    expect(t.app.shell.activateById).toHaveBeenCalledWith('notebook-1');
    // Inserted, not run: only the helper's bootstrap was executed.
    expect(t.kernel.executed.map(e => e.content.code)).toEqual(['BOOTSTRAP']);
    expect(t.notes).toEqual([]);
    t.dispose();
  });

  it('one undo removes exactly the inserted cell', async () => {
    const t = await setup();
    const shared = t.notebook.model.sharedModel;
    // The user just added a cell (within the undo manager's merge window).
    shared.insertCell(3, { cell_type: 'code', source: 'user = 1' });
    t.kernel.status = 'busy';
    t.sessionContext.setStatus('busy'); // no names asked: no waiting
    await t.commands.execute(CommandIDs.insertSnippet, { id: 'loss-item' });
    expect(sources(t.notebook)).toHaveLength(5);
    shared.undo();
    expect(sources(t.notebook)).toEqual(['a = 1', 'b = 2', 'c = 3', 'user = 1']);
    shared.redo();
    expect(sources(t.notebook)[2]).toContain('running_loss += batch_loss.item()');
    t.dispose();
  });

  it('uses the placeholders at once while the kernel is busy', async () => {
    const t = await setup();
    t.sessionContext.setStatus('busy');
    const result = (await t.commands.execute(CommandIDs.insertSnippet, {
      id: 'amp'
    })) as SnippetInsertion;
    expect(t.namesRequests()).toEqual([]);
    expect(result.namesFound).toBe(false);
    expect(result.code).toContain('scaler = torch.amp.GradScaler(device');
    expect(result.code).toContain('batch_loss = criterion(model(inputs), targets)');
    expect(result.code.split('\n')[0]).toBe(
      '# TODO: the kernel did not say which names it has (busy or not connected): ' +
        '`model`, `train_loader`, `optimizer`, `criterion` stand in for your own below'
    );
    expect(result.code).toContain('for inputs, targets in train_loader:');
    t.dispose();
  });

  it('uses the placeholders when the helper answers with an error or junk', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const t = await setup();
    let running = t.commands.execute(CommandIDs.insertSnippet, { id: 'amp' });
    await settle();
    t.comm.replyError('unknown_request', 'no such request');
    let result = (await running) as SnippetInsertion;
    expect(result.namesFound).toBe(false);
    expect(result.code).toContain('model(inputs)');
    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining('no notebook names, using placeholders'),
      expect.anything()
    );
    warn.mockRestore();

    running = t.commands.execute(CommandIDs.insertSnippet, { id: 'amp' });
    await settle();
    t.reply({ model: 'net', runtime: 'yes' });
    result = (await running) as SnippetInsertion;
    expect(result.namesFound).toBe(true);
    expect(result.code).toContain('model(inputs)');
    t.dispose();
  });

  it('does not ask when the snippet has no placeholders and no requirement', async () => {
    const t = await setup();
    await t.commands.execute(CommandIDs.insertSnippet, { id: 'memory-summary' });
    expect(t.namesRequests()).toEqual([]);
    expect(sources(t.notebook)[2]).toContain('torch.cuda.memory_summary');
    t.dispose();
  });

  it('puts a "top" snippet first and warns when CUDA is initialised', async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.insertSnippet, {
      id: 'allocator-config'
    });
    await settle();
    t.reply({ runtime: { ...RUNTIME_FRESH, cuda_initialized: true } });
    const result = (await running) as SnippetInsertion;
    expect(result.index).toBe(0);
    expect(result.restartNeeded).toBe(true);
    expect(sources(t.notebook)[0]).toContain('PYTORCH_CUDA_ALLOC_CONF');
    expect(t.notebook.activeCellIndex).toBe(0);
    expect(t.notes).toEqual([['warning', RESTART_MESSAGES.cuda]]);

    t.render();
    const warning = t.q('[data-vram-role="restart-warning"]')!;
    expect(warning.hidden).toBe(false);
    expect(warning.textContent).toContain(
      'Restart the kernel for this to take effect: CUDA is already initialised in this kernel'
    );
    expect(warning.dataset.vramSnippet).toBe('allocator-config');
    expect(warning.dataset.vramReason).toBe('cuda');

    // Dismissed by hand.
    t.q('[data-vram-role="dismiss-restart-warning"]')!.click();
    t.render();
    expect(t.q('[data-vram-role="restart-warning"]')!.hidden).toBe(true);
    t.dispose();
  });

  it('says so when the notebook\'s kernel does not run Python, and still inserts the cell', async () => {
    const t = await setup();
    (t.monitor.current as KernelMemoryModel).setState('non-python', 'This notebook runs R.');
    const result = (await t.commands.execute(CommandIDs.insertSnippet, { id: 'no-grad-eval' })) as SnippetInsertion;
    expect(sources(t.notebook)[result.index]).toContain('torch.no_grad()');
    expect(t.notes).toEqual([
      ['warning', "This notebook's kernel does not run Python: the inserted cell is Python code."]
    ]);
    t.dispose();
  });

  it('keeps another kernel\'s restart warning when the snippet goes into a fresh one', async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.insertSnippet, { id: 'allocator-config' });
    await settle();
    t.reply({ runtime: { ...RUNTIME_FRESH, cuda_initialized: true } });
    await running;
    const warned = t.library.warning;
    expect(warned?.snippetId).toBe('allocator-config');
    // The same snippet inserted for another kernel that needs no restart.
    t.library.setWarning({ ...warned!, model: new KernelMemoryModel({ historyCapacity: 10 }) });
    const again = t.commands.execute(CommandIDs.insertSnippet, { id: 'allocator-config' });
    await settle();
    t.reply({ runtime: RUNTIME_FRESH });
    await again;
    expect(t.library.warning).not.toBeNull();
    t.dispose();
  });

  it('does not warn when the kernel has not initialised CUDA', async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.insertSnippet, {
      id: 'allocator-config'
    });
    await settle();
    t.reply({ runtime: RUNTIME_FRESH });
    expect(((await running) as SnippetInsertion).restartNeeded).toBe(false);
    expect(t.notes).toEqual([]);
    t.render();
    expect(t.q('[data-vram-role="restart-warning"]')!.hidden).toBe(true);
    t.dispose();
  });

  it('warns from the latest sample when the kernel cannot answer', async () => {
    const t = await setup();
    t.comm.receive(
      wire(
        makeSample({
          tensorflow: { imported: true, gpus_initialized: true }
        })
      )
    );
    t.sessionContext.setStatus('busy');
    const result = (await t.commands.execute(
      CommandIDs.insertTfMemoryGrowth
    )) as SnippetInsertion;
    expect(result).toMatchObject({
      id: 'tf-memory-growth',
      index: 0,
      restartNeeded: true
    });
    expect(t.notes).toEqual([['warning', RESTART_MESSAGES.tensorflow]]);
    t.render();
    const warning = t.q('[data-vram-role="restart-warning"]')!;
    expect(warning.hidden).toBe(false);
    expect(warning.dataset.vramReason).toBe('tensorflow');

    // Restarting the kernel is what the warning asked for: it goes away.
    t.sessionContext.setStatus('restarting');
    t.render();
    expect(t.library.warning).toBe(null);
    expect(t.q('[data-vram-role="restart-warning"]')!.hidden).toBe(true);
    t.dispose();
  });

  it('refuses an unknown id with a notification', async () => {
    const t = await setup();
    expect(
      await t.commands.execute(CommandIDs.insertSnippet, { id: 'nope' })
    ).toBe(null);
    expect(t.notes[0][0]).toBe('warning');
    expect(t.notes[0][1]).toContain('"nope"');
    expect(sources(t.notebook)).toHaveLength(3);
    t.dispose();
  });

  it('labels the command with the snippet title', async () => {
    const t = await setup();
    const title = t.library.get('amp')!.title;
    expect(t.commands.label(CommandIDs.insertSnippet, { id: 'amp' })).toBe(
      `Insert Cell: ${title}`
    );
    expect(
      t.commands.label(CommandIDs.insertSnippet, { id: 'amp', menu: true })
    ).toBe(title);
    expect(t.commands.isEnabled(CommandIDs.insertSnippet, { id: 'amp' })).toBe(
      true
    );
    t.dispose();
  });
});

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

describe('palette, sidebar and toolbar', () => {
  it('lists one palette item per visible snippet, following the setting', async () => {
    const t = await setup();
    const snippetItems = () =>
      t.paletteItems
        .filter(i => i.command === CommandIDs.insertSnippet)
        .map(i => i.args.id);
    expect(snippetItems()).toEqual(t.library.visible.map(s => s.id));
    expect(snippetItems()).toHaveLength(16);
    expect(
      t.paletteItems.every(i => i.category === 'GPU memory (VRAM)')
    ).toBe(true);

    t.library.update(
      readSnippetSettings({
        snippets: t.library.all.map(s => ({ ...s, hidden: s.id !== 'amp' }))
      }, DEFAULT_SNIPPETS)
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

describe('the library, loaded after start-up', () => {
  it('is empty until read, then reads the defaults or the setting, in the order asked', async () => {
    const library = new SnippetLibrary();
    const changes: string[] = [];
    library.changed.connect((_, change) => changes.push(change));
    expect(library.all).toEqual([]);
    expect(library.loadedBuiltin('amp')).toBeNull();

    const mine = { ...readSnippetSettings(undefined, DEFAULT_SNIPPETS).all[0], id: 'mine', title: 'Mine', builtin: false };
    const defaults = library.read(undefined);
    const own = library.read({ snippets: [mine] });
    await Promise.all([defaults, own]);
    // Both applied, the later one last: the user's own list replaces the defaults.
    expect(changes).toEqual(['snippets', 'snippets']);
    expect(library.all.map(s => s.id)).toEqual(['mine']);
    // The defaults still serve the dedicated commands.
    expect(library.loadedBuiltin('amp')?.id).toBe('amp');

    await library.read({ snippets: [{ ...mine }] });
    expect(changes).toHaveLength(2); // the same snippets: no change signalled

    // A duplicate id added changes no snippet (the first wins), but is a problem to say.
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    await library.read({ snippets: [mine, { ...mine, title: 'Mine again' }] });
    expect(library.all.map(s => s.title)).toEqual(['Mine']);
    expect(library.problems).toEqual([expect.stringContaining('another snippet before it has the id "mine"')]);
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });

  it("reads the settings registry's default list at once, as the installed version's defaults", () => {
    // The registry's default of the setting: the schema's, here with a fix of one title.
    const defaults = DEFAULT_SNIPPETS.map(s => (s.id === 'amp' ? { ...s, title: 'AMP, fixed' } : s));
    const frozen = DEFAULT_SNIPPETS.map(s => ({ ...s, hidden: s.id === 'amp' })); // written by an older Settings Editor
    const library = new SnippetLibrary();
    void library.read({ snippets: frozen }, defaults);
    // No wait: the palette items come with the settings.
    expect(library.get('amp')?.title).toBe('AMP, fixed');
    expect(library.get('amp')?.hidden).toBe(true);
    expect(library.visible.map(s => s.id)).not.toContain('amp');
    expect(library.loadedBuiltin('amp')?.title).toBe('AMP, fixed');
  });

  it("falls back to the copy in JavaScript where the registry's default does not read whole", async () => {
    const library = new SnippetLibrary();
    // As an older JupyterLab gives it: entries without their fields.
    await library.read({ snippets: DEFAULT_SNIPPETS }, DEFAULT_SNIPPETS.map(s => ({ id: s.id })));
    expect(library.visible.map(s => s.id)).toEqual(DEFAULT_SNIPPETS.map(s => s.id));
  });

  it('runs a snippet command asked for before the list has loaded', async () => {
    const library = new SnippetLibrary(); // nothing read yet
    const t = await setup({ library });
    t.sessionContext.setStatus('busy');
    expect(library.all).toEqual([]);
    const result = (await t.commands.execute(CommandIDs.insertSnippet, { id: 'amp' })) as SnippetInsertion;
    expect(result.id).toBe('amp');
    t.dispose();
  });

  it('gives a default snippet to a library made from settings without it', async () => {
    const library = new SnippetLibrary(readSnippetSettings({ snippets: [] }, DEFAULT_SNIPPETS));
    expect(library.all).toEqual([]);
    expect((await library.builtin('no-grad-eval'))?.title).toBe(
      readSnippetSettings(undefined, DEFAULT_SNIPPETS).all.find(s => s.id === 'no-grad-eval')?.title
    );
    expect(await library.builtin('no-such-snippet')).toBeNull();
  });
});
