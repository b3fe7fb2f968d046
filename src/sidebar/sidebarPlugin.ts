/**
 * The sidebar's plugin: the GPU memory panel in JupyterLab's right area,
 * and the registry (IVramSidebar) the features add their tabs to, with the
 * command that opens the panel at a tab.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ITranslator } from '@jupyterlab/translation';

import { setTranslator, trans } from '../text/translation';
import { CommandIDs, PALETTE_CATEGORY } from '../ui/commandIds';
import { IVramSidebar } from './IVramSidebar';
import { registerSidebarCommands } from './sidebarCommands';
import { SidebarHost } from './SidebarHost';

/**
 * The rank in the right sidebar, which places the tab after the property
 * inspector and debugger.
 */
const SIDEBAR_RANK = 900;

/** The sidebar plugin. */
export const sidebarPlugin: JupyterFrontEndPlugin<IVramSidebar> = {
  id: 'jupyterlab-vram:sidebar',
  description:
    'The GPU memory panel of the right sidebar, whose tabs the features add.',
  autoStart: true,
  optional: [ILayoutRestorer, ICommandPalette, ITranslator],
  provides: IVramSidebar,
  activate: (
    app: JupyterFrontEnd,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    translator: ITranslator | null
  ): IVramSidebar => {
    // This plugin does not need the core plugin, so it may activate first.
    // It therefore sets the page-wide translation bundle itself (with the
    // same translator) before its caption is worded.
    setTranslator(translator);
    const sidebar = new SidebarHost({ caption: trans.__('GPU memory') });
    app.shell.add(sidebar, 'right', { rank: SIDEBAR_RANK });
    restorer?.add(sidebar, 'jupyterlab-vram-sidebar');
    registerSidebarCommands({ app, trans, sidebar });
    palette?.addItem({
      command: CommandIDs.openSidebar,
      category: trans.__(PALETTE_CATEGORY)
    });
    return sidebar;
  }
};
