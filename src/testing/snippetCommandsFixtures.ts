/**
 * The set-up the snippet command specs share: a real shared notebook model
 * (YNotebook), and the commands, the sidebar and the palette on a live monitor
 * of a fake kernel.
 */
import { YNotebook } from '@jupyter/ydoc';
import { CommandRegistry } from '@lumino/commands';
import { MessageLoop } from '@lumino/messaging';

import { SnippetLibrary } from '../features/snippets/SnippetLibrary';
import { loadFullSidebar } from './sidebarFixtures';
import { liveMonitorOnFakeKernel, registerTestCommands } from './fakeKernel';
import { actionsFor } from '../features/cleanup/cleanupActionsPart';

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

export function sources(notebook: ReturnType<typeof makeNotebook>): string[] {
  return notebook.model.sharedModel.cells.map(c => c.getSource());
}

export async function setup(options: { library?: SnippetLibrary } = {}) {
  const notebook = makeNotebook(['a = 1', 'b = 2', 'c = 3'], 1);
  const { kernel, sessionContext, comm, panel, tracker, monitor } =
    await liveMonitorOnFakeKernel({ id: 'notebook-1', content: notebook });
  expect(monitor.current?.state).toBe('live');

  let library = options.library;
  if (!library) {
    library = SnippetLibrary.withDefaults();
    // The default list loads on demand after start-up, so the test waits
    // for it.
    await library.ready;
  }
  const commands = new CommandRegistry();
  const sidebar = await loadFullSidebar({
    monitor,
    actionsFor: model => actionsFor(monitor, model),
    execute: (id, args) => void commands.execute(id, args),
    snippets: library
  });
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
  /** Makes the kernel answer the last request with `result`. */
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

/**
 * Yjs warns when a cell gets its source before it joins the document, which
 * is how @jupyter/ydoc creates every cell, JupyterLab's own inserts
 * included. A spec file that makes notebooks calls this to keep that
 * warning out of the output.
 */
export function quietYjsCellWarnings(): void {
  const realWarn = console.warn;
  beforeAll(() => {
    jest.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      if (!String(args[0]).startsWith('Invalid access: Add Yjs type')) {
        realWarn(...args);
      }
    });
  });
  afterAll(() => jest.restoreAllMocks());
}
