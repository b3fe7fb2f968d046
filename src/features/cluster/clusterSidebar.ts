/**
 * The Cluster section in the memory panel: its place on the Memory tab,
 * whose view loads the first time the tab is shown.
 */
import type { IDisposable } from '@lumino/disposable';

import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { MEMORY_TAB_RANKS, TABS } from '../../sidebar/panelLayout';
import type { IClusterSidebarOptions } from './clusterViewsLazy';

/** Adds the Cluster section; disposing removes it. */
export function addClusterToSidebar(
  sidebar: IVramSidebar,
  options: IClusterSidebarOptions
): IDisposable {
  return sidebar.addSection({
    id: 'cluster',
    tabs: [TABS.memory],
    rank: MEMORY_TAB_RANKS.cluster,
    load: () =>
      import('./clusterViewsLazy').then(module =>
        module.createClusterView(options)
      )
  });
}
