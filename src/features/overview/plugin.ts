/**
 * The overview feature's plugin: the Memory tab (state banner, GPU cards,
 * host RAM, timeline), the status bar item and the overview commands
 * (refresh, timeline span).
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IStatusBar } from '@jupyterlab/statusbar';
import { Signal } from '@lumino/signaling';

import { IVramCore } from '../../monitor/IVramCore';
import { trans } from '../../text/translation';
import type { IVramMonitor } from '../../monitor/IVramMonitor';
import { IVramSidebar } from '../../sidebar/IVramSidebar';
import { CommandIDs, PALETTE_CATEGORY } from '../../ui/commandIds';
import { registerOverviewCommands } from './overviewCommands';
import { addOverviewToSidebar } from './overviewSidebar';
import { VramStatusItem } from './VramStatusItem';

/** The plugin that adds the Memory tab, the status bar item and the overview's commands. */
export const overviewPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-vram:overview',
  description:
    'The Memory tab of the GPU memory sidebar, and the status bar item.',
  autoStart: true,
  requires: [IVramCore],
  optional: [IVramSidebar, IStatusBar, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    core: IVramCore,
    sidebar: IVramSidebar | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null
  ): void => {
    const { monitor } = core;
    if (sidebar) {
      addOverviewToSidebar(sidebar, {
        monitor,
        execute: core.execute
      });
    }
    if (statusBar) {
      addStatusItem(app, monitor, statusBar);
    }
    registerOverviewCommands({
      app,
      monitor,
      trans,
      palette,
      category: trans.__(PALETTE_CATEGORY),
      setSetting: core.settings.set
    });
  }
};

/** Adds the status bar's memory figure, which is shown while a notebook's kernel is followed. */
function addStatusItem(
  app: JupyterFrontEnd,
  monitor: IVramMonitor,
  statusBar: IStatusBar
): void {
  // The status bar asks isActive() again only when this signal fires, so it
  // fires whenever the followed kernel changes.
  const activeStateChanged = new Signal<IVramMonitor, void>(monitor);
  monitor.currentChanged.connect(() => activeStateChanged.emit());
  const item = new VramStatusItem({
    monitor,
    onClick: () => void app.commands.execute(CommandIDs.openSidebar)
  });
  statusBar.registerStatusItem('jupyterlab-vram:status', {
    item,
    align: 'left',
    rank: 100,
    isActive: () => monitor.current !== null,
    activeStateChanged
  });
}
