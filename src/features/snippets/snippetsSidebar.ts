/**
 * Adds "Save memory" to the memory panel: the snippet buttons at the end of
 * the Memory tab, which insert the out-of-memory playbook's code into the
 * notebook. The section's code loads only when the tab shows it.
 */
import type { IDisposable } from '@lumino/disposable';

import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { MEMORY_TAB_RANKS, TABS } from '../../sidebar/panelLayout';
import type { ISnippetsSidebarOptions } from './snippetsViewsLazy';

/** Adds "Save memory" to the Memory tab; disposing removes it. */
export function addSnippetsToSidebar(
  sidebar: IVramSidebar,
  options: ISnippetsSidebarOptions
): IDisposable {
  return sidebar.addSection({
    id: 'snippets.saveMemory',
    tabs: [TABS.memory],
    rank: MEMORY_TAB_RANKS.snippets,
    load: () =>
      import('./snippetsViewsLazy').then(module =>
        module.createSnippetSection(options)
      )
  });
}
