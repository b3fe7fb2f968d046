/**
 * The Cells tab of the memory panel: every executed cell's memory change,
 * peak and other figures, as a table that fills the panel and scrolls on
 * its own.
 */
import type { IDisposable } from '@lumino/disposable';

import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { trans } from '../../text/translation';
import { TAB_RANKS, TABS } from '../../sidebar/panelLayout';
import type { ICellsSidebarOptions } from './cellsViewsLazy';

/** Adds the Cells tab; disposing removes it. */
export function addCellsToSidebar(
  sidebar: IVramSidebar,
  options: ICellsSidebarOptions
): IDisposable {
  return sidebar.addTab({
    id: TABS.cells,
    label: trans.__('Cells'),
    rank: TAB_RANKS.cells,
    fill: true,
    load: () =>
      import('./cellsViewsLazy').then(module =>
        module.createCellHistoryView(options)
      )
  });
}
