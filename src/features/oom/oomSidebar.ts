/**
 * The out-of-memory diagnosis in the memory panel: a section of the Memory
 * tab, shown after a cell died of running out of GPU memory, with what to
 * do next.
 */
import type { IDisposable } from '@lumino/disposable';

import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { MEMORY_TAB_RANKS, TABS } from '../../sidebar/panelLayout';
import type { IOomSidebarOptions } from './oomViewsLazy';

/** Adds the diagnosis to the Memory tab; disposing removes it. */
export function addOomToSidebar(
  sidebar: IVramSidebar,
  options: IOomSidebarOptions
): IDisposable {
  return sidebar.addSection({
    id: 'oom.diagnosis',
    tabs: [TABS.memory],
    rank: MEMORY_TAB_RANKS.oom,
    load: () =>
      import('./oomViewsLazy').then(module =>
        module.createOomDiagnosisView(options)
      )
  });
}
