/**
 * The Kernels tab of the memory panel, which lists every monitored kernel
 * with its RAM and GPU use and a way to shut it down, and the other
 * processes on the GPUs.
 */
import type { IDisposable } from '@lumino/disposable';

import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { trans } from '../../text/translation';
import { TAB_RANKS, TABS } from '../../sidebar/panelLayout';
import type { IKernelsSidebarOptions } from './kernelsViewsLazy';

/** Adds the Kernels tab; disposing of the result removes it. */
export function addKernelsToSidebar(
  sidebar: IVramSidebar,
  options: IKernelsSidebarOptions
): IDisposable {
  return sidebar.addTab({
    id: TABS.kernels,
    label: trans.__('Kernels'),
    rank: TAB_RANKS.kernels,
    load: () =>
      import('./kernelsViewsLazy').then(module =>
        module.createKernelsView(options)
      )
  });
}
