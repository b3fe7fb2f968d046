/**
 * The "Will it fit?" feature's plugin: each kernel's estimate (a part
 * loaded later), its section on the Memory tab, and the commands that
 * estimate a training step and insert a remedy's cell with its figures.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';

import { IVramCore } from '../../monitor/IVramCore';
import { IVramSidebar } from '../../sidebar/IVramSidebar';
import { NO_SIDEBAR } from '../../sidebar/panelLayout';
import { PALETTE_CATEGORY } from '../../ui/commandIds';
import { trans } from '../../text/translation';
import { notifyInJupyterLab } from '../../ui/notify';
import { registerEstimateCommands } from './estimateCommands';
import { addEstimateToSidebar } from './estimateSidebar';
import { currentEstimate, estimateFor, MEMORY_ESTIMATE } from './estimatePart';

/** How long the dialog waits for the kernel's names before offering none. */
const NAMES_TIMEOUT_MS = 3000;

/** The "Will it fit?" plugin. */
export const estimatePlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-vram:estimate',
  description:
    "Will it fit? Predicts a training step's peak GPU memory and the largest batch size.",
  autoStart: true,
  requires: [IVramCore, INotebookTracker],
  optional: [IVramSidebar, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    core: IVramCore,
    notebooks: INotebookTracker,
    sidebar: IVramSidebar | null,
    palette: ICommandPalette | null
  ): void => {
    const { monitor } = core;
    monitor.addPartKind(MEMORY_ESTIMATE);
    if (sidebar) {
      addEstimateToSidebar(sidebar, {
        monitor,
        execute: core.execute,
        partsChanged: monitor.partsChanged,
        estimateFor: model => estimateFor(monitor, model)
      });
    }
    registerEstimateCommands({
      app,
      trans,
      sidebar: sidebar ?? NO_SIDEBAR,
      palette,
      category: trans.__(PALETTE_CATEGORY),
      current: () => currentEstimate(monitor),
      notebookNames: async () => {
        const session = monitor.currentSession;
        const ask = session?.connection.requestNotebookNames;
        const model = session?.model;
        if (!ask || !model || model.state !== 'live' || model.kernelBusy) {
          return null;
        }
        return ask.call(session.connection, NAMES_TIMEOUT_MS);
      },
      notebook: () => notebooks.currentWidget,
      units: () => monitor.settings.units,
      notify: notifyInJupyterLab
    });
  }
};
