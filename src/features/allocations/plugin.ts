/**
 * The allocations feature's plugin. It adds allocation recording, on
 * request, to every kernel; the Lines tab, which shows memory by the line
 * that allocated it; and the commands that record, go to a line and export.
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
import { PALETTE_CATEGORY } from '../../ui/commandIds';
import { notifyInJupyterLab } from '../../ui/notify';
import { activeFirst } from './allocationCommandOptions';
import { registerAllocationCommands } from './allocationCommands';
import {
  ALLOCATION_RECORDING,
  allocationsFor,
  currentAllocations
} from './allocationRecordingPart';
import { addLinesToSidebar } from './linesSidebar';

/** The allocations plugin. */
export const allocationsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-vram:allocations',
  description:
    'Which notebook line holds memory: allocation recording and the Lines tab.',
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
    monitor.addPartKind(ALLOCATION_RECORDING);
    if (sidebar) {
      addLinesToSidebar(sidebar, {
        monitor,
        consoles,
        execute: core.execute,
        partsChanged: monitor.partsChanged,
        recorderFor: model => allocationsFor(monitor, model)
      });
    }
    registerAllocationCommands({
      app,
      trans,
      palette,
      category: trans.__(PALETTE_CATEGORY),
      sidebar: sidebar ?? NO_SIDEBAR,
      monitor,
      current: () => currentAllocations(monitor),
      panels: () => activeFirst(monitor, notebooks.currentWidget),
      currentNotebookPath: () => notebooks.currentWidget?.context.path ?? null,
      records: () => monitor.current?.cells.entries.map(e => e.record) ?? [],
      notify: notifyInJupyterLab
    });
  }
};
