/**
 * The Processes tab of the memory panel: every process the active kernel
 * started, with its memory and a Stop button.
 */
import type { IDisposable } from '@lumino/disposable';

import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { trans } from '../../text/translation';
import { TAB_RANKS, TABS } from '../../sidebar/panelLayout';
import type { IProcessesSidebarOptions } from './processesViewsLazy';

/** Adds the Processes tab; disposing removes it. */
export function addProcessesToSidebar(
  sidebar: IVramSidebar,
  options: IProcessesSidebarOptions
): IDisposable {
  return sidebar.addTab({
    id: TABS.processes,
    label: trans.__('Processes'),
    rank: TAB_RANKS.processes,
    load: () =>
      import('./processesViewsLazy').then(module =>
        module.createProcessesView(options)
      )
  });
}
