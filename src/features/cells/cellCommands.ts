/**
 * The commands of the per-cell figures: show, export or clear the cell
 * history, and turn the cell badges on or off. The clear confirmation and the
 * export load when first used.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';

import type { MemoryMonitor } from '../../monitor/MemoryMonitor';
import type { SetSetting } from '../../settings/settings';
import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { SIDEBAR_ID } from '../../sidebar/SidebarHost';
import { CommandIDs } from '../../ui/commandIds';
import { vramIcon } from '../../ui/icons';
import type { ClearHistoryRequest } from './ClearHistoryDialog';

/** Registers the cell history's and the badges' commands, and lists them in the palette. */
export function registerCellCommands(options: {
  app: JupyterFrontEnd;
  monitor: MemoryMonitor;
  trans: TranslationBundle;
  palette: ICommandPalette | null;
  category: string;
  /** The sidebar, to show its Cells tab. */
  sidebar: Pick<IVramSidebar, 'showTab'>;
  setSetting: SetSetting;
  /**
   * The active notebook's path, which names the export's file and the notebook
   * in the clear dialog.
   */
  currentNotebookPath: () => string | null;
  /** Asks before a clear; the clear-history dialog by default, while tests answer directly. */
  confirmClear?: (request: ClearHistoryRequest) => Promise<boolean>;
}): void {
  const { app, monitor, trans, palette, category, sidebar } = options;
  // What a command needs only when it runs is loaded then, not with the page.
  const confirmClear =
    options.confirmClear ??
    (async (request: ClearHistoryRequest) =>
      (await import('./ClearHistoryDialog')).confirmClearHistoryDialog(
        request
      ));

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
    execute: async args => {
      const model = monitor.current;
      if (!model || model.cells.length === 0) {
        return null;
      }
      const format = args.format === 'json' ? 'json' : 'csv';
      const path = options.currentNotebookPath();
      const entries = model.cells.entries;
      const [
        { cellHistoryToCsv, cellHistoryToJson, exportFileName },
        { downloadText }
      ] = await Promise.all([
        import('./cellExport'),
        import('../../ui/download')
      ]);
      const fileName = exportFileName(path, format);
      if (format === 'json') {
        downloadText(
          fileName,
          cellHistoryToJson(entries, {
            notebook: path,
            exportedAt: new Date()
          }),
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

  // Export and clear are enabled only while the followed kernel has records,
  // so the menus are told to ask again whenever its records or the followed
  // kernel change.
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
  monitor.currentChanged.connect(follow);
  // The badges' toggle shows the setting, which the settings editor can
  // change too.
  monitor.settingsChanged.connect(() => {
    app.commands.notifyCommandChanged(CommandIDs.toggleCellBadges);
  });

  if (palette) {
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
  }
}
