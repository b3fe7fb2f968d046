/**
 * The command that shows the memory panel, at one of its tabs.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { TranslationBundle } from '@jupyterlab/translation';

import { CommandIDs } from '../ui/commandIds';
import { vramIcon } from '../ui/icons';
import type { IVramSidebar } from './IVramSidebar';
import { SIDEBAR_ID } from './SidebarHost';

/** Registers `open-sidebar`, whose `tab` argument picks a tab by id. */
export function registerSidebarCommands(options: {
  app: JupyterFrontEnd;
  trans: TranslationBundle;
  sidebar: Pick<IVramSidebar, 'showTab'>;
}): void {
  const { app, trans, sidebar } = options;
  app.commands.addCommand(CommandIDs.openSidebar, {
    label: trans.__('Show GPU Memory'),
    caption: trans.__('Show the GPU and host memory of the active kernel'),
    icon: vramIcon,
    // The optional `tab` argument names the sidebar tab to show; the
    // out-of-memory assistant passes "kernels", for example.
    execute: args => {
      if (typeof args.tab === 'string') {
        sidebar.showTab(args.tab);
      }
      app.shell.activateById(SIDEBAR_ID);
    }
  });
}
