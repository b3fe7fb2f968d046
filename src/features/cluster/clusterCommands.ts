/**
 * The cluster feature's commands, whose ids are in ui/commandIds.ts: gc,
 * empty_cache and restart across the workers of the cluster the active
 * kernel drives, each after asking, and reading their allocators, which
 * changes nothing and does not ask. They are in the palette. Their steps
 * and dialog (clusterActionLazy.ts, ClusterActionDialog.ts) load with the
 * first use, not with the page.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { ICommandPalette } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';

import type { ClusterActionName, ClusterState } from '../../protocol/cluster';
import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { SIDEBAR_ID } from '../../sidebar/SidebarHost';
import { TABS } from '../../sidebar/panelLayout';
import type { ByteUnits } from '../../text/format';
import type { Notify } from '../../ui/notify';
import { CLUSTER_ACTION_COMMANDS } from './clusterCommandIds';
import type { ClusterTracker } from './ClusterTracker';

/** What the cluster commands act on, as the feature's plugin hands it to them. */
export interface IClusterCommandOptions {
  app: Pick<JupyterFrontEnd, 'commands' | 'shell'>;
  trans: TranslationBundle;
  sidebar: Pick<IVramSidebar, 'showTab'>;
  palette?: Pick<ICommandPalette, 'addItem'> | null;
  category?: string;
  /** The active kernel's cluster tracking; null without one. */
  current: () => ClusterTracker | null;
  units: () => ByteUnits;
  notify: Notify;
  /** Defaults to the action dialog; tests answer directly. */
  confirm?: (
    cluster: ClusterState,
    action: ClusterActionName
  ) => Promise<boolean>;
}

/** The palette labels of the actions. */
function labels(trans: TranslationBundle): Record<ClusterActionName, string> {
  return {
    gc: trans.__('Cluster: Collect Garbage on Every Worker\u2026'),
    empty_cache: trans.__(
      'Cluster: Empty the CUDA Cache on Every Worker\u2026'
    ),
    restart: trans.__('Cluster: Restart Every Worker\u2026'),
    read_allocators: trans.__("Cluster: Read the Workers' Allocators")
  };
}

/** Registers the four cluster commands. */
export function registerClusterCommands(options: IClusterCommandOptions): void {
  const { app, trans, sidebar, palette, category } = options;
  // The outcome stays in the Cluster section of the Memory tab.
  const showCluster = () => {
    sidebar.showTab(TABS.memory);
    app.shell.activateById(SIDEBAR_ID);
  };
  const label = labels(trans);
  for (const [action, id] of Object.entries(CLUSTER_ACTION_COMMANDS) as [
    ClusterActionName,
    string
  ][]) {
    app.commands.addCommand(id, {
      label: label[action],
      isEnabled: () => {
        const tracker = options.current();
        return (
          !!tracker && tracker.clusters.some(c => c.actions.includes(action))
        );
      },
      execute: async args =>
        (await import('./clusterActionLazy')).runClusterAction(action, args, {
          ...options,
          showCluster,
          confirm:
            options.confirm ??
            (async (cluster, a) =>
              (await import('./ClusterActionDialog')).confirmClusterAction(
                cluster,
                a
              ))
        })
    });
    if (palette && category) {
      palette.addItem({ command: id, category });
    }
  }
}
