/**
 * The command that shows the memory panel, at one of its tabs.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { TranslationBundle } from '@jupyterlab/translation';

import { CommandIDs } from '../ui/commandIds';
import { vramIcon } from '../ui/icons';
import { SIDEBAR_ID, SidebarHost } from './SidebarHost';
import { SIDEBAR_TABS, SidebarTab } from './sidebarTabs';

/** Registers `open-sidebar` (its `tab` argument picks a tab). */
export function registerSidebarCommands(options: {
  app: JupyterFrontEnd;
  trans: TranslationBundle;
  sidebar: Pick<SidebarHost, 'showTab'>;
}): void {
  const { app, trans, sidebar } = options;
  app.commands.addCommand(CommandIDs.openSidebar, {
    label: trans.__('Show GPU Memory'),
    caption: trans.__('Show the GPU and host memory of the active kernel'),
    icon: vramIcon,
    // `tab`: the sidebar tab to show ("kernels" from the out-of-memory assistant)
    execute: args => {
      if (
        typeof args.tab === 'string' &&
        SIDEBAR_TABS.includes(args.tab as SidebarTab)
      ) {
        sidebar.showTab(args.tab as SidebarTab);
      }
      app.shell.activateById(SIDEBAR_ID);
    }
  });
}
