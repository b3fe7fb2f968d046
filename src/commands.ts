/**
 * Every command of jupyterlab-vram: ids in one place, and their registration.
 * Features add their ids to `CommandIDs` and their handlers below.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { DisposableSet } from '@lumino/disposable';

import {
  cellHistoryToCsv,
  cellHistoryToJson,
  exportFileName
} from './model/cellExport';
import { FreeAction } from './cleanupProtocol';
import { DeletePlan } from './model/deletePlan';
import { kernelRows, kernelSourceOf } from './model/KernelsOverview';
import { ActionOutcome, errorText } from './model/MemoryActions';
import { IMonitoredNotebook, MemoryMonitor } from './model/MemoryMonitor';
import { DEFAULT_SNIPPETS } from './snippets/defaultSnippets';
import { insertCodeCell, ISnippetNotebook } from './snippets/insertSnippet';
import { fetchNotebookNames } from './snippets/notebookNames';
import {
  renderSnippet,
  restartNeeded,
  runtimeFlagsOfSample,
  Snippet
} from './snippets/snippet';
import { SnippetLibrary } from './snippets/SnippetLibrary';
import { VramSettings } from './settings';
import {
  confirmShutdownKernelDialog,
  ShutdownKernelRequest
} from './views/ShutdownKernelDialog';
import { downloadText } from './views/download';
import { SIDEBAR_ID, SidebarHost } from './views/SidebarHost';
import { vramIcon } from './views/icons';
import { CommandIDs, SNIPPET_COMMANDS } from './commandIds';
import { ILinePanel, registerAllocationCommands } from './allocationCommands';
import { registerGraphFixCommand } from './graphFixCommand';

export { CommandIDs, SNIPPET_COMMANDS };

/** How long a snippet command waits for the kernel's names (then placeholders). */
export const NOTEBOOK_NAMES_TIMEOUT_MS = 3000;

/** A notebook panel a snippet can go into (NotebookPanel in the app). */
export interface ISnippetPanel extends IMonitoredNotebook {
  readonly id: string;
  readonly content: ISnippetNotebook;
}

/** What the snippet commands return when they inserted a cell. */
export interface SnippetInsertion {
  id: string;
  /** Index of the new cell. */
  index: number;
  code: string;
  /** True when the kernel must restart for the snippet to take effect. */
  restartNeeded: boolean;
  /** True when the kernel answered with its names (else placeholders). */
  namesFound: boolean;
}

/** Palette category of our commands. */
export const PALETTE_CATEGORY = 'GPU memory';

/** How a command tells the user something (a JupyterLab notification). */
export type Notify = (
  type: 'info' | 'success' | 'warning' | 'error',
  message: string
) => void;

/** Notifications show at most 140 characters: the gist first. */
const NOTIFICATION_LIMIT = 140;

export function notificationText(lines: readonly string[]): string {
  const all = lines.join('. ');
  if (all.length <= NOTIFICATION_LIMIT || lines.length <= 1) {
    return all;
  }
  const more = `${lines[0]} (details in the GPU memory panel)`;
  return more.length <= NOTIFICATION_LIMIT ? more : lines[0];
}

function defaultNotify(
  type: 'info' | 'success' | 'warning' | 'error',
  message: string
): void {
  // Notification messages are plain text (kernel text stays text).
  Notification.emit(message, type, {
    autoClose: type === 'error' ? false : 6000
  });
}

function stringArray(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((v): v is string => typeof v === 'string')
    : [];
}

export function registerCommands(options: {
  app: JupyterFrontEnd;
  monitor: MemoryMonitor;
  trans: TranslationBundle;
  palette: ICommandPalette | null;
  /** The sidebar, to show one of its tabs. */
  sidebar: Pick<SidebarHost, 'showTab'>;
  /** Change one setting (persisted when a setting registry exists). */
  setSetting: <K extends keyof VramSettings>(
    key: K,
    value: VramSettings[K]
  ) => Promise<void>;
  /** Path of the active notebook (for export file names). */
  currentNotebookPath: () => string | null;
  /** Defaults to JupyterLab notifications (tests pass a recorder). */
  notify?: Notify;
  /** Defaults to the delete confirmation dialog (tests answer directly). */
  confirmDelete?: (plan: DeletePlan) => Promise<boolean>;
  /** The snippets; defaults to the default list. */
  snippets?: SnippetLibrary;
  /** The notebook panel the snippet commands insert into. */
  currentNotebook?: () => ISnippetPanel | null;
  /** Defaults to the shutdown confirmation dialog (tests answer directly). */
  confirmShutdown?: (request: ShutdownKernelRequest) => Promise<boolean>;
}): void {
  const { app, monitor, trans, palette, sidebar } = options;

  app.commands.addCommand(CommandIDs.openSidebar, {
    label: trans.__('Show GPU Memory'),
    caption: trans.__('Show the GPU and host memory of the active kernel'),
    icon: vramIcon,
    execute: () => {
      app.shell.activateById(SIDEBAR_ID);
    }
  });

  app.commands.addCommand(CommandIDs.refresh, {
    label: trans.__('Refresh GPU Memory'),
    caption: trans.__(
      'Ask the active kernel for fresh memory figures (restarts the helper if it stopped)'
    ),
    isEnabled: () => monitor.current !== null,
    execute: async () => {
      const model = monitor.current;
      if (!model) {
        return null;
      }
      if (model.state !== 'live') {
        monitor.reconnect();
        return null;
      }
      try {
        return await monitor.refresh();
      } catch (reason) {
        // Shown in the panel when it matters (timeouts while a cell runs are normal).
        console.warn('jupyterlab-vram: refresh failed', reason);
        return null;
      }
    }
  });

  app.commands.addCommand(CommandIDs.toggleCellBadges, {
    label: trans.__('Show Cell Memory Badges'),
    caption: trans.__(
      'Show on every executed cell its memory change, peak and duration'
    ),
    isToggled: () => monitor.settings.showCellBadges,
    execute: async () => {
      await options.setSetting(
        'showCellBadges',
        !monitor.settings.showCellBadges
      );
    }
  });

  app.commands.addCommand(CommandIDs.showCellHistory, {
    label: trans.__('Show Cell Memory History'),
    caption: trans.__('Show which cells used how much memory'),
    icon: vramIcon,
    execute: () => {
      sidebar.showTab('cells');
      app.shell.activateById(SIDEBAR_ID);
    }
  });

  const hasRecords = () => (monitor.current?.cells.length ?? 0) > 0;

  app.commands.addCommand(CommandIDs.exportCellHistory, {
    label: args =>
      args.format === 'json'
        ? trans.__('Export Cell Memory History as JSON')
        : trans.__('Export Cell Memory History as CSV'),
    caption: trans.__("Download the active kernel's per-cell memory records"),
    isEnabled: hasRecords,
    execute: args => {
      const model = monitor.current;
      if (!model || model.cells.length === 0) {
        return null;
      }
      const format = args.format === 'json' ? 'json' : 'csv';
      const path = options.currentNotebookPath();
      const entries = model.cells.entries;
      const fileName = exportFileName(path, format);
      if (format === 'json') {
        downloadText(
          fileName,
          cellHistoryToJson(entries, { notebook: path, exportedAt: new Date() }),
          'application/json'
        );
      } else {
        downloadText(fileName, cellHistoryToCsv(entries), 'text/csv');
      }
      return fileName;
    }
  });

  app.commands.addCommand(CommandIDs.clearCellHistory, {
    label: trans.__('Clear Cell Memory History'),
    caption: trans.__(
      'Forget the per-cell records in this browser (badges included); the kernel keeps its own'
    ),
    isEnabled: hasRecords,
    execute: () => {
      monitor.current?.cells.clear();
    }
  });

  // -------------------------------------------------------------------------
  // Cleanup

  const notify = options.notify ?? defaultNotify;
  const confirmDelete =
    options.confirmDelete ??
    (async (plan: DeletePlan) =>
      // The dialog's view loads when it is first needed (not at start-up).
      (await import('./views/DeleteDialogBody')).confirmDeleteDialog(plan, monitor.settings.units));
  const hasNotebook = () => monitor.current !== null;

  const notifyOutcome = (outcome: ActionOutcome) => {
    const text = notificationText(outcome.lines);
    if (outcome.status === 'failed') {
      notify('error', text);
    } else if (outcome.status === 'cancelled') {
      notify('info', text);
    } else if ((outcome.freedBytes ?? 0) > 0) {
      notify('success', text);
    } else {
      notify('info', text);
    }
  };

  const runFree = async (
    actions: FreeAction[]
  ): Promise<ActionOutcome | null> => {
    const memoryActions = monitor.currentActions;
    if (!memoryActions) {
      return null;
    }
    const running = memoryActions.free(actions);
    if (memoryActions.queue.queuedCount > 0) {
      notify(
        'info',
        `Queued \u2014 the kernel is busy; it runs when the kernel is idle (cancel it in the GPU memory panel)`
      );
    }
    const outcome = await running;
    notifyOutcome(outcome);
    return outcome;
  };

  const showHolders = () => {
    sidebar.showTab('holders');
    app.shell.activateById(SIDEBAR_ID);
  };

  // The three free actions differ only in what the kernel runs.
  const freeCommands: [string, FreeAction[], string, string][] = [
    [
      CommandIDs.collectGarbage,
      ['gc'],
      trans.__('Collect Garbage in the Kernel'),
      trans.__(
        'Run gc.collect() in the active kernel and show what it freed (queued while the kernel is busy)'
      )
    ],
    [
      CommandIDs.emptyCache,
      ['empty_cache'],
      trans.__('Empty the CUDA Cache'),
      trans.__(
        "Run torch.cuda.empty_cache() in the active kernel: give PyTorch's cached GPU memory back (never initialises CUDA)"
      )
    ],
    [
      CommandIDs.freeMemory,
      ['gc', 'empty_cache'],
      trans.__('Free GPU Memory (gc + empty_cache)'),
      trans.__(
        'Run gc.collect() then torch.cuda.empty_cache() in the active kernel and show what came back'
      )
    ]
  ];
  for (const [id, actions, label, caption] of freeCommands) {
    app.commands.addCommand(id, {
      label,
      caption,
      isEnabled: hasNotebook,
      execute: () => runFree(actions)
    });
  }

  app.commands.addCommand(CommandIDs.inspectMemory, {
    label: trans.__('Show What Holds Memory'),
    caption: trans.__(
      'List the variables and hidden references (Out[], the last traceback) that hold memory in the active kernel'
    ),
    isEnabled: hasNotebook,
    execute: async () => {
      const memoryActions = monitor.currentActions;
      showHolders();
      if (!memoryActions) {
        return null;
      }
      return memoryActions.inspect();
    }
  });

  app.commands.addCommand(CommandIDs.deleteVariables, {
    label: trans.__('Delete Variables Holding Memory\u2026'),
    caption: trans.__(
      'Delete the variables and hidden references ticked in the Holders tab (asks first), then free memory'
    ),
    isEnabled: hasNotebook,
    execute: async args => {
      const memoryActions = monitor.currentActions;
      if (!memoryActions) {
        return null;
      }
      let plan: DeletePlan | null;
      if (Array.isArray(args.names) || Array.isArray(args.hidden)) {
        // `fresh`: the names come from elsewhere (the OOM diagnosis), not from
        // the listing on screen, so they are looked up in a new listing.
        if (!memoryActions.listing || args.fresh === true) {
          await memoryActions.inspect();
        }
        plan = memoryActions.planFor(
          stringArray(args.names),
          stringArray(args.hidden)
        );
      } else {
        plan = memoryActions.planSelection();
      }
      if (!plan) {
        showHolders();
        if (!memoryActions.listing && !memoryActions.inspecting) {
          void memoryActions.inspect();
        }
        notify(
          'info',
          'Nothing to delete: tick variables or hidden references in the Holders tab of the GPU memory panel first.'
        );
        return null;
      }
      if (!(await confirmDelete(plan))) {
        return null;
      }
      const outcome = await memoryActions.deleteHolders(plan);
      notifyOutcome(outcome);
      return outcome;
    }
  });

  // -------------------------------------------------------------------------
  // Kernels tab

  const confirmShutdown = options.confirmShutdown ?? confirmShutdownKernelDialog;

  app.commands.addCommand(CommandIDs.shutdownKernel, {
    label: trans.__('Shut Down Kernel\u2026'),
    caption: trans.__(
      "Shut down a notebook's kernel (asks first); the notebook stays open with no kernel"
    ),
    execute: async args => {
      const kernelId = typeof args.kernelId === 'string' ? args.kernelId : '';
      const sessions = kernelId ? monitor.sessionsOfKernel(kernelId) : [];
      if (!sessions.length) {
        notify('info', 'That kernel is not running in an open notebook any more.');
        return false;
      }
      const context = sessions[0].sessionContext;
      // Named as its row in the Kernels tab names it.
      const [row] = kernelRows(sessions.map(kernelSourceOf));
      const confirmed = await confirmShutdown({
        kernelId,
        kernelName: row.displayName ?? row.kernelName,
        paths: row.paths
      });
      // The user may have changed the kernel while the dialog was open.
      if (!confirmed || context.session?.kernel?.id !== kernelId) {
        return false;
      }
      try {
        // What the notebook's own "Shut Down Kernel" does: the session ends
        // and the notebook shows "No Kernel", ready to start another.
        await context.shutdown();
      } catch (reason) {
        notify(
          'error',
          `Could not shut down the kernel: ${errorText(reason)}`
        );
        return false;
      }
      return true;
    }
  });

  // -------------------------------------------------------------------------
  // Snippets

  const snippets = options.snippets ?? new SnippetLibrary();
  const currentNotebook = options.currentNotebook ?? (() => null);
  const hasNotebookPanel = () => currentNotebook() !== null;

  const insert = async (
    snippet: Snippet
  ): Promise<SnippetInsertion | null> => {
    const panel = currentNotebook();
    if (!panel || panel.isDisposed || !panel.content.model) {
      notify('info', 'Open a notebook to insert the snippet into.');
      return null;
    }
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
      return null; // closed while the kernel answered
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
    } else if (snippets.warning?.snippetId === snippet.id) {
      snippets.setWarning(null);
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
      // The toolbar menu groups snippets under "Insert cell": titles only.
      return args.menu
        ? snippet.title
        : trans.__('Insert Cell: %1', snippet.title);
    },
    caption: args => snippets.get(String(args.id ?? ''))?.description ?? '',
    isEnabled: hasNotebookPanel,
    execute: async args => {
      const id = String(args.id ?? '');
      const snippet = snippets.get(id);
      if (!snippet) {
        notify('warning', `There is no snippet "${id}" in the GPU memory settings.`);
        return null;
      }
      return insert(snippet);
    }
  });

  for (const spec of SNIPPET_COMMANDS) {
    app.commands.addCommand(spec.command, {
      label: trans.__(spec.label),
      caption: () =>
        (snippets.get(spec.snippetId) ?? defaultSnippet(spec.snippetId))
          ?.description ?? '',
      isEnabled: hasNotebookPanel,
      execute: () => {
        // The user's list may leave this id out: the default still serves.
        const snippet =
          snippets.get(spec.snippetId) ?? defaultSnippet(spec.snippetId);
        return snippet ? insert(snippet) : null;
      }
    });
  }

  const notifyCellCommands = () => {
    app.commands.notifyCommandChanged(CommandIDs.exportCellHistory);
    app.commands.notifyCommandChanged(CommandIDs.clearCellHistory);
  };
  let watched: MemoryMonitor['current'] = null;
  const follow = () => {
    watched?.cells.changed.disconnect(notifyCellCommands);
    watched = monitor.current;
    watched?.cells.changed.connect(notifyCellCommands);
    notifyCellCommands();
  };
  follow();

  monitor.currentChanged.connect(() => {
    app.commands.notifyCommandChanged(CommandIDs.refresh);
    for (const id of [
      CommandIDs.collectGarbage,
      CommandIDs.emptyCache,
      CommandIDs.freeMemory,
      CommandIDs.inspectMemory,
      CommandIDs.deleteVariables,
      CommandIDs.insertSnippet,
      ...SNIPPET_COMMANDS.map(spec => spec.command)
    ]) {
      app.commands.notifyCommandChanged(id);
    }
    follow();
  });
  monitor.settingsChanged.connect(() => {
    app.commands.notifyCommandChanged(CommandIDs.toggleCellBadges);
  });

  if (palette) {
    const category = trans.__(PALETTE_CATEGORY);
    palette.addItem({ command: CommandIDs.openSidebar, category });
    palette.addItem({ command: CommandIDs.refresh, category });
    palette.addItem({ command: CommandIDs.toggleCellBadges, category });
    palette.addItem({ command: CommandIDs.showCellHistory, category });
    palette.addItem({
      command: CommandIDs.exportCellHistory,
      category,
      args: { format: 'csv' }
    });
    palette.addItem({
      command: CommandIDs.exportCellHistory,
      category,
      args: { format: 'json' }
    });
    palette.addItem({ command: CommandIDs.clearCellHistory, category });
    palette.addItem({ command: CommandIDs.collectGarbage, category });
    palette.addItem({ command: CommandIDs.emptyCache, category });
    palette.addItem({ command: CommandIDs.freeMemory, category });
    palette.addItem({ command: CommandIDs.inspectMemory, category });
    palette.addItem({ command: CommandIDs.deleteVariables, category });

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

  registerGraphFixCommand({
    app,
    trans,
    actions: () => monitor.currentActions,
    notebook: () => options.currentNotebook?.() ?? null
  });

  registerAllocationCommands({
    app,
    trans,
    palette,
    category: trans.__(PALETTE_CATEGORY),
    sidebar,
    current: () => monitor.currentAllocations,
    panels: () => {
      const model = monitor.current;
      const panels = (model ? monitor.panelsOf(model) : []) as ILinePanel[];
      const active = options.currentNotebook?.() as ILinePanel | null;
      // The notebook the user works in first.
      return active && panels.includes(active)
        ? [active, ...panels.filter(p => p !== active)]
        : panels;
    },
    currentNotebookPath: options.currentNotebookPath,
    records: () => monitor.current?.cells.entries.map(e => e.record) ?? [],
    notify
  });
}

function defaultSnippet(id: string): Snippet | null {
  return DEFAULT_SNIPPETS.find(s => s.id === id) ?? null;
}
