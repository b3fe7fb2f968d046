/**
 * The processes feature's plugin: every process a kernel started, followed
 * per kernel (a part loaded later), the Processes tab, and the command that
 * stops a process.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';

import { IVramCore } from '../../monitor/IVramCore';
import { IVramSidebar } from '../../sidebar/IVramSidebar';
import { NO_SIDEBAR } from '../../sidebar/panelLayout';
import { trans } from '../../text/translation';
import { notifyInJupyterLab } from '../../ui/notify';
import { registerProcessCommands } from './processCommands';
import { addProcessesToSidebar } from './processesSidebar';
import {
  currentProcesses,
  PROCESS_TRACKING,
  processesFor
} from './processTrackingPart';

/** The processes plugin. */
export const processesPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-vram:processes',
  description: 'The processes a kernel started: memory, cell, Stop.',
  autoStart: true,
  requires: [IVramCore],
  optional: [IVramSidebar],
  activate: (
    app: JupyterFrontEnd,
    core: IVramCore,
    sidebar: IVramSidebar | null
  ): void => {
    const { monitor } = core;
    monitor.addPartKind(PROCESS_TRACKING);
    if (sidebar) {
      addProcessesToSidebar(sidebar, {
        monitor,
        execute: core.execute,
        partsChanged: monitor.partsChanged,
        trackerFor: model => processesFor(monitor, model)
      });
    }
    registerProcessCommands({
      app,
      trans,
      sidebar: sidebar ?? NO_SIDEBAR,
      current: () => currentProcesses(monitor),
      units: () => monitor.settings.units,
      notify: notifyInJupyterLab
    });
  }
};
