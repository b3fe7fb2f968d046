/**
 * Every command of jupyterlab-vram: ids in one place, and their registration.
 * Features add their ids to `CommandIDs` and their handlers below.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';

import {
  cellHistoryToCsv,
  cellHistoryToJson,
  exportFileName
} from './model/cellExport';
import { MemoryMonitor } from './model/MemoryMonitor';
import { VramSettings } from './settings';
import { downloadText } from './views/download';
import { MemorySidebar } from './views/MemorySidebar';
import { vramIcon } from './views/icons';

export namespace CommandIDs {
  /** Show and activate the GPU memory sidebar. */
  export const openSidebar = 'jupyterlab-vram:open-sidebar';
  /** Ask the active kernel's helper for a fresh sample (reconnects if it is not live). */
  export const refresh = 'jupyterlab-vram:refresh';
  /** Show or hide the memory badges on executed cells (setting showCellBadges). */
  export const toggleCellBadges = 'jupyterlab-vram:toggle-cell-badges';
  /** Show the per-cell history tab of the sidebar. */
  export const showCellHistory = 'jupyterlab-vram:show-cell-history';
  /**
   * Download the active kernel's cell history; args `{format: 'csv' | 'json'}`
   * (default csv). Returns the file name, or null when there is nothing.
   */
  export const exportCellHistory = 'jupyterlab-vram:export-cell-history';
  /** Forget the active kernel's cell history in this browser. */
  export const clearCellHistory = 'jupyterlab-vram:clear-cell-history';
}

/** Palette category of our commands. */
export const PALETTE_CATEGORY = 'GPU memory';

export function registerCommands(options: {
  app: JupyterFrontEnd;
  monitor: MemoryMonitor;
  trans: TranslationBundle;
  palette: ICommandPalette | null;
  /** The sidebar, to show its Cells tab. */
  sidebar: MemorySidebar;
  /** Change one setting (persisted when a setting registry exists). */
  setSetting: <K extends keyof VramSettings>(
    key: K,
    value: VramSettings[K]
  ) => Promise<void>;
  /** Path of the active notebook (for export file names). */
  currentNotebookPath: () => string | null;
}): void {
  const { app, monitor, trans, palette, sidebar } = options;

  app.commands.addCommand(CommandIDs.openSidebar, {
    label: trans.__('Show GPU Memory'),
    caption: trans.__('Show the GPU and host memory of the active kernel'),
    icon: vramIcon,
    execute: () => {
      app.shell.activateById(MemorySidebar.ID);
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
      app.shell.activateById(MemorySidebar.ID);
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
  }
}
