/**
 * The kernel death notice in the memory panel: a section of the Memory tab
 * that says why the active notebook's kernel died, when it did.
 */
import type { IDisposable } from '@lumino/disposable';

import type { IVramMonitor } from '../../monitor/IVramMonitor';
import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { MEMORY_TAB_RANKS, TABS } from '../../sidebar/panelLayout';

/** Adds the death notice to the Memory tab; disposing removes it. */
export function addKernelDeathToSidebar(
  sidebar: IVramSidebar,
  monitor: IVramMonitor
): IDisposable {
  return sidebar.addSection({
    id: 'kernelDeath.notice',
    tabs: [TABS.memory],
    rank: MEMORY_TAB_RANKS.kernelDeath,
    load: () =>
      import('./kernelDeathViewsLazy').then(module =>
        module.createKernelDeathView(monitor)
      )
  });
}
