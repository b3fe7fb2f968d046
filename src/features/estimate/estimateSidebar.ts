/**
 * "Will it fit?" in the memory panel: its section on the Memory tab, whose
 * view loads the first time the tab is shown.
 */
import type { IDisposable } from '@lumino/disposable';

import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { MEMORY_TAB_RANKS, TABS } from '../../sidebar/panelLayout';
import type { IEstimateSidebarOptions } from './estimateViewsLazy';

/** Adds the "Will it fit?" section; disposing removes it. */
export function addEstimateToSidebar(
  sidebar: IVramSidebar,
  options: IEstimateSidebarOptions
): IDisposable {
  return sidebar.addSection({
    id: 'estimate',
    tabs: [TABS.memory],
    rank: MEMORY_TAB_RANKS.estimate,
    load: () =>
      import('./estimateViewsLazy').then(module =>
        module.createEstimateView(options)
      )
  });
}
