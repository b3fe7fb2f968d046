/**
 * Every command of jupyterlab-vram: the ids are in ui/commandIds.ts; this file
 * registers the panel's and the cell history's commands and the Kernels tab's,
 * and the other features' through their own files (features/cleanup/cleanupCommands.ts,
 * features/snippets/snippetCommands.ts, features/allocations/allocationCommands.ts, features/cleanup/graphFixCommand.ts).
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';

import { ILinePanel, registerAllocationCommands } from './features/allocations/allocationCommands';
import { registerCleanupCommands } from './features/cleanup/cleanupCommands';
import type { Notify } from './ui/notify';
import { CommandIDs, SNIPPET_COMMANDS } from './ui/commandIds';
import { registerGraphFixCommand } from './features/cleanup/graphFixCommand';
import type { DeletePlan } from './features/cleanup/deletePlan';
import { errorText } from './text/errorText';
import { MemoryMonitor } from './monitor/MemoryMonitor';
import { SETTING_LIMITS, VramSettings } from './settings/settings';
import { ISnippetPanel, registerSnippetCommands } from './features/snippets/snippetCommands';
import type { SnippetLibrary } from './features/snippets/SnippetLibrary';
import type { ClearHistoryRequest } from './features/cells/ClearHistoryDialog';
import type { ShutdownKernelRequest } from './features/kernels/ShutdownKernelDialog';
import { SIDEBAR_ID, SIDEBAR_TABS, SidebarHost, SidebarTab } from './sidebar/SidebarHost';
import { vramIcon } from './ui/icons';
import { currentActions } from './features/cleanup/cleanupActionsPart';
import { currentAllocations } from './features/allocations/allocationRecordingPart';

export { CommandIDs, SNIPPET_COMMANDS };

/**
 * Palette category of our commands. The palette searches categories too:
 * "VRAM" lets a user who types the extension's name find every command.
 */
export const PALETTE_CATEGORY = 'GPU memory (VRAM)';

function defaultNotify(
  type: 'info' | 'success' | 'warning' | 'error',
  message: string
): void {
  // Notification messages are plain text (kernel text stays text).
  Notification.emit(message, type, {
    autoClose: type === 'error' ? false : 6000
  });
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
  /** Defaults to the clear-history confirmation dialog (tests answer directly). */
  confirmClear?: (request: ClearHistoryRequest) => Promise<boolean>;
}): void {
  const { app, monitor, trans, palette, sidebar } = options;
  // What a command needs only once it runs loads then, not with the page.
  const confirmClear =
    options.confirmClear ??
    (async (request: ClearHistoryRequest) =>
      (await import('./features/cells/ClearHistoryDialog')).confirmClearHistoryDialog(request));

  app.commands.addCommand(CommandIDs.openSidebar, {
    label: trans.__('Show GPU Memory'),
    caption: trans.__('Show the GPU and host memory of the active kernel'),
    icon: vramIcon,
    // `tab`: the sidebar tab to show ("kernels" from the out-of-memory assistant)
    execute: args => {
      if (typeof args.tab === 'string' && SIDEBAR_TABS.includes(args.tab as SidebarTab)) {
        sidebar.showTab(args.tab as SidebarTab);
      }
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

  app.commands.addCommand(CommandIDs.setTimelineWindow, {
    label: args =>
      typeof args.minutes === 'number'
        ? trans.__('Show the Last %1 Minutes of Memory History', args.minutes)
        : trans.__('Set the Timeline Span'),
    caption: trans.__('How much history the memory timeline shows: {"minutes": 60}'),
    execute: async args => {
      const minutes = Number(args.minutes);
      const { min, max } = SETTING_LIMITS.timelineWindowMinutes;
      if (!Number.isFinite(minutes)) {
        throw new Error(`The timeline span must be a number of minutes, not ${String(args.minutes)}.`);
      }
      await options.setSetting('timelineWindowMinutes', Math.min(max, Math.max(min, minutes)));
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
    execute: async args => {
      const model = monitor.current;
      if (!model || model.cells.length === 0) {
        return null;
      }
      const format = args.format === 'json' ? 'json' : 'csv';
      const path = options.currentNotebookPath();
      const entries = model.cells.entries;
      const [{ cellHistoryToCsv, cellHistoryToJson, exportFileName }, { downloadText }] =
        await Promise.all([import('./features/cells/cellExport'), import('./ui/download')]);
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
    execute: async () => {
      const model = monitor.current;
      if (!model || model.cells.length === 0) {
        return false;
      }
      const confirmed = await confirmClear({
        records: model.cells.length,
        path: options.currentNotebookPath()
      });
      if (confirmed) {
        model.cells.clear();
      }
      return confirmed;
    }
  });

  const notify = options.notify ?? defaultNotify;
  registerCleanupCommands({
    app,
    monitor,
    trans,
    sidebar,
    notify,
    confirmDelete: options.confirmDelete
  });

  // -------------------------------------------------------------------------
  // Kernels tab

  const confirmShutdown =
    options.confirmShutdown ??
    (async (request: ShutdownKernelRequest) =>
      (await import('./features/kernels/ShutdownKernelDialog')).confirmShutdownKernelDialog(request));

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
      // Named as its row in the Kernels tab names it.
      const { kernelRows, kernelSourceOf } = await import('./features/kernels/KernelsOverview');
      const [row] = kernelRows(sessions.map(kernelSourceOf));
      // The server's other sessions on that kernel lose it too: named as well.
      const others: string[] = [];
      for (const session of app.serviceManager?.sessions?.running?.() ?? []) {
        if (session.kernel?.id === kernelId && !row.paths.includes(session.path)) {
          others.push(
            session.type === 'console'
              ? `the console \u201c${session.name || session.path}\u201d`
              : `\u201c${session.path}\u201d`
          );
        }
      }
      const confirmed = await confirmShutdown({
        kernelId,
        kernelName: row.displayName ?? row.kernelName,
        paths: row.paths,
        ...(others.length ? { others } : {})
      });
      if (!confirmed) {
        return false;
      }
      // The notebooks on it may have changed while the dialog was open: shut
      // down only a kernel that the notebooks it named still share.
      const now = monitor
        .sessionsOfKernel(kernelId)
        .filter(s => s.sessionContext.session?.kernel?.id === kernelId);
      if (!now.length) {
        notify('info', 'That kernel is not running in an open notebook any more: nothing was shut down.');
        return false;
      }
      const [nowRow] = kernelRows(now.map(kernelSourceOf));
      if (nowRow.paths.some(path => !row.paths.includes(path))) {
        notify(
          'warning',
          'Another notebook uses that kernel now, which the question did not name: nothing was shut down. Ask again.'
        );
        return false;
      }
      const context = now[0].sessionContext;
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

  registerSnippetCommands({
    app,
    monitor,
    trans,
    palette,
    category: trans.__(PALETTE_CATEGORY),
    notify,
    snippets: options.snippets,
    currentNotebook: options.currentNotebook
  });

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
  }

  registerGraphFixCommand({
    app,
    trans,
    actions: () => currentActions(monitor),
    notebook: () => options.currentNotebook?.() ?? null
  });

  registerAllocationCommands({
    app,
    trans,
    palette,
    category: trans.__(PALETTE_CATEGORY),
    sidebar,
    monitor,
    current: () => currentAllocations(monitor),
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
