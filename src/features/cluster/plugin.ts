/**
 * The cluster feature's plugin: the memory of the Dask or Ray cluster a
 * kernel drives, followed per kernel (a part loaded later), its section on
 * the Memory tab, and the commands that act across the cluster's workers.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';

import { IVramCore } from '../../monitor/IVramCore';
import { IVramSidebar } from '../../sidebar/IVramSidebar';
import { NO_SIDEBAR } from '../../sidebar/panelLayout';
import { trans } from '../../text/translation';
import { PALETTE_CATEGORY } from '../../ui/commandIds';
import { notifyInJupyterLab } from '../../ui/notify';
import { registerClusterCommands } from './clusterCommands';
import { addClusterToSidebar } from './clusterSidebar';
import {
  CLUSTER_TRACKING,
  clustersFor,
  currentClusters
} from './clusterTrackingPart';

/** The cluster plugin. */
export const clusterPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-vram:cluster',
  description:
    'The memory of the Dask or Ray cluster a notebook drives: workers, events, actions.',
  autoStart: true,
  requires: [IVramCore],
  optional: [IVramSidebar, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    core: IVramCore,
    sidebar: IVramSidebar | null,
    palette: ICommandPalette | null
  ): void => {
    const { monitor } = core;
    monitor.addPartKind(CLUSTER_TRACKING);
    if (sidebar) {
      addClusterToSidebar(sidebar, {
        monitor,
        execute: core.execute,
        partsChanged: monitor.partsChanged,
        trackerFor: model => clustersFor(monitor, model)
      });
    }
    registerClusterCommands({
      app,
      trans,
      sidebar: sidebar ?? NO_SIDEBAR,
      palette,
      category: trans.__(PALETTE_CATEGORY),
      current: () => currentClusters(monitor),
      units: () => monitor.settings.units,
      notify: notifyInJupyterLab
    });
  }
};
