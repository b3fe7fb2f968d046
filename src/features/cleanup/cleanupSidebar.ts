/**
 * The cleanup feature in the memory panel: the cleanup bar (gc, empty cache,
 * free memory, what holds memory), on the Memory and Holders tabs, and the
 * Holders tab, which lists what holds memory, to delete.
 */
import { DisposableSet, IDisposable } from '@lumino/disposable';

import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { trans } from '../../text/translation';
import { MEMORY_TAB_RANKS, TAB_RANKS, TABS } from '../../sidebar/panelLayout';
import type { ICleanupSidebarOptions } from './cleanupViewsLazy';

/** Adds the cleanup bar and the Holders tab; disposing removes them. */
export function addCleanupToSidebar(
  sidebar: IVramSidebar,
  options: ICleanupSidebarOptions
): IDisposable {
  const views = () => import('./cleanupViewsLazy');
  const added = new DisposableSet();
  added.add(
    sidebar.addSection({
      id: 'cleanup.bar',
      // The bar acts on the current kernel, so it is shown on the Memory and
      // Holders tabs only.
      tabs: [TABS.memory, TABS.holders],
      rank: MEMORY_TAB_RANKS.cleanupBar,
      load: () => views().then(module => module.createActionsBar(options))
    })
  );
  added.add(
    sidebar.addTab({
      id: TABS.holders,
      label: trans.__('Holders'),
      rank: TAB_RANKS.holders,
      load: () => views().then(module => module.createHoldersView(options))
    })
  );
  return added;
}
