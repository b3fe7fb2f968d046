/**
 * The cleanup feature's plugin: every kernel's cleanup actions (gc, empty
 * cache, what holds memory, delete), the cleanup bar and Holders tab, their
 * commands, and the command that inserts a fix for a tensor holding its
 * autograd graph.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';

import { IVramCore } from '../../monitor/IVramCore';
import { trans } from '../../text/translation';
import { IVramSidebar } from '../../sidebar/IVramSidebar';
import { NO_SIDEBAR } from '../../sidebar/panelLayout';
import { PALETTE_CATEGORY } from '../../ui/commandIds';
import { notifyInJupyterLab } from '../../ui/notify';
import {
  actionsFor,
  CLEANUP_ACTIONS,
  currentActions
} from './cleanupActionsPart';
import { registerCleanupCommands } from './cleanupCommands';
import { addCleanupToSidebar } from './cleanupSidebar';
import { registerGraphFixCommand } from './graphFixCommand';

/** The cleanup plugin. */
export const cleanupPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-vram:cleanup',
  description:
    'Frees GPU memory: gc, empty cache, what holds memory and a safe delete.',
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
    monitor.addPartKind(CLEANUP_ACTIONS);
    if (sidebar) {
      addCleanupToSidebar(sidebar, {
        monitor,
        execute: core.execute,
        partsChanged: monitor.partsChanged,
        actionsFor: model => actionsFor(monitor, model)
      });
    }
    registerCleanupCommands({
      app,
      monitor,
      trans,
      sidebar: sidebar ?? NO_SIDEBAR,
      palette,
      category: trans.__(PALETTE_CATEGORY),
      notify: notifyInJupyterLab
    });
    registerGraphFixCommand({
      app,
      trans,
      actions: () => currentActions(monitor),
      notebook: () => notebooks.currentWidget
    });
  }
};
