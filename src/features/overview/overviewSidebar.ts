/**
 * The Memory tab of the memory panel, which this feature owns, and the
 * overview's sections on it: the state banner first, then the GPU cards,
 * the host RAM card and the timeline. Other features put their sections
 * between (the cleanup bar, the kernel death notice, the out-of-memory
 * diagnosis) and after (the snippets) by rank.
 */
import { DisposableSet, IDisposable } from '@lumino/disposable';

import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { trans } from '../../text/translation';
import { MEMORY_TAB_RANKS, TAB_RANKS, TABS } from '../../sidebar/panelLayout';
import type { IOverviewSidebarOptions } from './overviewViewsLazy';

/** Adds the Memory tab and the overview's sections; disposing removes them. */
export function addOverviewToSidebar(
  sidebar: IVramSidebar,
  options: IOverviewSidebarOptions
): IDisposable {
  const views = () => import('./overviewViewsLazy');
  const added = new DisposableSet();
  added.add(
    sidebar.addTab({
      id: TABS.memory,
      label: trans.__('Memory'),
      rank: TAB_RANKS.memory
    })
  );
  const sections = {
    'overview.banner': [MEMORY_TAB_RANKS.banner, 'createStateBanner'],
    'overview.gpus': [MEMORY_TAB_RANKS.gpus, 'createGpuDeviceList'],
    'overview.host': [MEMORY_TAB_RANKS.host, 'createHostMemoryCard'],
    'overview.timeline': [MEMORY_TAB_RANKS.timeline, 'createMemoryTimeline']
  } as const;
  for (const [id, [rank, create]] of Object.entries(sections)) {
    added.add(
      sidebar.addSection({
        id,
        tabs: [TABS.memory],
        rank,
        load: () => views().then(module => module[create](options))
      })
    );
  }
  return added;
}
