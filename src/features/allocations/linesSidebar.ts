/**
 * The Lines tab of the memory panel: the memory still held, by the notebook
 * line that allocated it, while allocation recording is on.
 */
import type { IDisposable } from '@lumino/disposable';

import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { trans } from '../../text/translation';
import { TAB_RANKS, TABS } from '../../sidebar/panelLayout';
import type { ILinesSidebarOptions } from './linesViewsLazy';

/** Adds the Lines tab; disposing removes it. */
export function addLinesToSidebar(
  sidebar: IVramSidebar,
  options: ILinesSidebarOptions
): IDisposable {
  return sidebar.addTab({
    id: TABS.lines,
    label: trans.__('Lines'),
    rank: TAB_RANKS.lines,
    load: () =>
      import('./linesViewsLazy').then(module =>
        module.createAllocationSitesView(options)
      )
  });
}
