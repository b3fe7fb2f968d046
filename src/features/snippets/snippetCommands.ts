/**
 * The snippet commands, whose ids are in ui/commandIds.ts. They insert a
 * memory-saving cell from the snippet library, filled in with the names the
 * kernel reports for the user's model, optimizer and the rest, and warn when
 * the snippet needs a kernel restart to take effect. The feature's
 * plugin (plugin.ts) registers them.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { DisposableSet } from '@lumino/disposable';

import type { Notify } from '../../ui/notify';
import { CommandIDs, SNIPPET_COMMANDS } from '../../ui/commandIds';
import { MemoryMonitor } from '../../monitor/MemoryMonitor';
import { IMonitoredNotebook } from '../../monitor/monitoredSession';
import type { ISnippetNotebook } from './insertSnippet';
import type { Snippet } from './snippet';
import { SnippetLibrary } from './SnippetLibrary';

/**
 * How long a snippet command waits for the kernel's names; after that it
 * inserts the cell with the default placeholder names.
 */
export const NOTEBOOK_NAMES_TIMEOUT_MS = 3000;

/** The part of a notebook panel that a snippet goes into; in the app it is a NotebookPanel. */
export interface ISnippetPanel extends IMonitoredNotebook {
  readonly id: string;
  readonly content: ISnippetNotebook;
}

/** What the snippet commands return when they inserted a cell. */
export interface SnippetInsertion {
  id: string;
  /** The index of the new cell. */
  index: number;
  code: string;
  /** True when the kernel must restart for the snippet to take effect. */
  restartNeeded: boolean;
  /**
   * True when the kernel answered with its names; false when the cell got the
   * default placeholder names.
   */
  namesFound: boolean;
}

/**
 * Registers the snippet commands with the app and, when there is one, the
 * command palette.
 */
export function registerSnippetCommands(options: {
  app: JupyterFrontEnd;
  monitor: MemoryMonitor;
  trans: TranslationBundle;
  palette: ICommandPalette | null;
  category: string;
  notify: Notify;
  /** The snippet library; without one, a library of the default list is made. */
  snippets?: SnippetLibrary;
  /** The notebook panel the snippet commands insert into. */
  currentNotebook?: () => ISnippetPanel | null;
}): void {
  const { app, monitor, trans, palette, category, notify } = options;
  const snippets = options.snippets ?? SnippetLibrary.withDefaults();
  const currentNotebook = options.currentNotebook ?? (() => null);
  const hasNotebookPanel = () => currentNotebook() !== null;

  const insert = async (snippet: Snippet): Promise<SnippetInsertion | null> => {
    const panel = currentNotebook();
    if (!panel || panel.isDisposed || !panel.content.model) {
      notify('info', trans.__('Open a notebook to insert the snippet into.'));
      return null;
    }
    // These modules load with the first insertion rather than with the page,
    // which keeps the page's start-up small.
    const [
      { insertCodeCell },
      { fetchNotebookNames },
      { renderSnippet, restartNeeded, runtimeFlagsOfSample }
    ] = await Promise.all([
      import('./insertSnippet'),
      import('./notebookNames'),
      import('./snippet')
    ]);
    const session = monitor.sessionFor(panel);
    const model = session?.model ?? null;
    const connection = session?.connection ?? null;
    // Only ask the kernel when the answer changes the cell or the warning.
    const worthAsking =
      snippet.requiresFresh !== null ||
      snippet.code.some(line => line.includes('{{'));
    const found =
      worthAsking && connection?.requestNotebookNames
        ? await fetchNotebookNames(model, () =>
            connection.requestNotebookNames!(NOTEBOOK_NAMES_TIMEOUT_MS)
          )
        : null;
    if (panel.isDisposed || !panel.content.model) {
      // The notebook was closed while the kernel answered.
      return null;
    }
    const code = renderSnippet(snippet, found?.names);
    const index = insertCodeCell(panel.content, code, snippet.placement);
    if (index === null) {
      return null;
    }
    app.shell.activateById(panel.id);
    const decision = restartNeeded(
      snippet,
      found?.runtime ?? null,
      runtimeFlagsOfSample(model?.latest)
    );
    if (decision) {
      notify('warning', decision.message);
      snippets.setWarning({
        ...decision,
        snippetId: snippet.id,
        snippetTitle: snippet.title,
        model
      });
    } else if (
      snippets.warning?.snippetId === snippet.id &&
      snippets.warning.model === model
    ) {
      // Only this kernel's warning is cleared, because another notebook's
      // kernel may still need its restart.
      snippets.setWarning(null);
    }
    if (model?.state === 'non-python') {
      notify(
        'warning',
        trans.__(
          "This notebook's kernel does not run Python: the inserted cell is Python code."
        )
      );
    }
    return {
      id: snippet.id,
      index,
      code,
      restartNeeded: decision !== null,
      namesFound: found !== null
    };
  };

  app.commands.addCommand(CommandIDs.insertSnippet, {
    label: args => {
      const snippet = snippets.get(String(args.id ?? ''));
      if (!snippet) {
        return trans.__('Insert Memory Snippet');
      }
      // The toolbar menu lists snippets in its "Insert Cell to Save Memory"
      // submenu, so there the label is the title alone.
      return args.menu
        ? snippet.title
        : trans.__('Insert Cell: %1', snippet.title);
    },
    caption: args => snippets.get(String(args.id ?? ''))?.description ?? '',
    isEnabled: hasNotebookPanel,
    execute: async args => {
      const id = String(args.id ?? '');
      await snippets.ready;
      const snippet = snippets.get(id);
      if (!snippet) {
        notify(
          'warning',
          trans.__('There is no snippet "%1" in the GPU memory settings.', id)
        );
        return null;
      }
      return insert(snippet);
    }
  });

  for (const spec of SNIPPET_COMMANDS) {
    app.commands.addCommand(spec.command, {
      label: trans.__(spec.label),
      caption: () =>
        (snippets.get(spec.snippetId) ?? snippets.loadedBuiltin(spec.snippetId))
          ?.description ?? '',
      isEnabled: hasNotebookPanel,
      execute: async () => {
        await snippets.ready;
        // The user's list may leave this id out, and then the default snippet
        // serves.
        const snippet =
          snippets.get(spec.snippetId) ??
          (await snippets.builtin(spec.snippetId));
        return snippet ? insert(snippet) : null;
      }
    });
  }

  if (palette) {
    // One item per visible snippet, following the setting.
    let snippetItems = new DisposableSet();
    const addSnippetItems = () => {
      snippetItems.dispose();
      snippetItems = new DisposableSet();
      for (const snippet of snippets.visible) {
        snippetItems.add(
          palette.addItem({
            command: CommandIDs.insertSnippet,
            category,
            args: { id: snippet.id }
          })
        );
      }
    };
    addSnippetItems();
    snippets.changed.connect((_, change) => {
      if (change === 'snippets') {
        addSnippetItems();
      }
    });
  }

  // The commands are enabled only with a notebook, so the palette and menus
  // must ask again whenever the current notebook changes.
  monitor.currentChanged.connect(() => {
    for (const id of [
      CommandIDs.insertSnippet,
      ...SNIPPET_COMMANDS.map(spec => spec.command)
    ]) {
      app.commands.notifyCommandChanged(id);
    }
  });
}
