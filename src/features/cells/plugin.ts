/**
 * The per-cell memory feature's plugin: the badges on the cells, the Cells
 * tab (the history of every executed cell) and its commands (show the
 * history, export it, clear it, badges on or off).
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IConsoleTracker } from '@jupyterlab/console';
import { INotebookTracker } from '@jupyterlab/notebook';

import { IVramCore } from '../../monitor/IVramCore';
import { trans } from '../../text/translation';
import { IVramSidebar } from '../../sidebar/IVramSidebar';
import { NO_SIDEBAR } from '../../sidebar/panelLayout';
import { CommandIDs, PALETTE_CATEGORY } from '../../ui/commandIds';
import { allocationsFor } from '../allocations/allocationRecordingPart';
import { addCellBadges } from './cellBadges';
import { registerCellCommands } from './cellCommands';
import { addCellsToSidebar } from './cellsSidebar';
import { revealCell } from './revealCell';

/** The plugin that adds the memory badges on cells, the Cells tab and their commands. */
export const cellsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-vram:cells',
  description:
    "Each executed cell's memory delta and peak, on the cell and in a history.",
  autoStart: true,
  requires: [IVramCore, INotebookTracker],
  optional: [IVramSidebar, ICommandPalette, IConsoleTracker],
  activate: (
    app: JupyterFrontEnd,
    core: IVramCore,
    notebooks: INotebookTracker,
    sidebar: IVramSidebar | null,
    palette: ICommandPalette | null,
    consoles: IConsoleTracker | null
  ): void => {
    const { monitor } = core;
    addCellBadges(monitor, notebooks.currentWidget);
    if (sidebar) {
      addCellsToSidebar(sidebar, {
        monitor,
        // A console's runs are labelled as such in the Cells tab.
        consoles,
        partsChanged: monitor.partsChanged,
        recorderFor: model => allocationsFor(monitor, model),
        actions: {
          revealCell: entry => revealCell(app, notebooks, monitor, entry),
          exportHistory: format =>
            void app.commands.execute(CommandIDs.exportCellHistory, { format }),
          clearHistory: () =>
            void app.commands.execute(CommandIDs.clearCellHistory),
          insertSnippet: id =>
            void app.commands.execute(CommandIDs.insertSnippet, { id })
        }
      });
    }
    registerCellCommands({
      app,
      monitor,
      trans,
      palette,
      category: trans.__(PALETTE_CATEGORY),
      sidebar: sidebar ?? NO_SIDEBAR,
      setSetting: core.settings.set,
      currentNotebookPath: () => notebooks.currentWidget?.context.path ?? null
    });
  }
};
