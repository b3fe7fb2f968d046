/**
 * The snippets feature's plugin. It offers the out-of-memory playbook as code
 * to insert (no_grad, AMP, TensorFlow memory growth and the rest) from the
 * notebook toolbar's button, the palette and "Save memory" on the Memory tab.
 * The list of snippets is a setting, and this plugin reads it.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, IToolbarWidgetRegistry } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { IVramCore } from '../../monitor/IVramCore';
import { trans } from '../../text/translation';
import { IVramSidebar } from '../../sidebar/IVramSidebar';
import { PALETTE_CATEGORY } from '../../ui/commandIds';
import { notifyInJupyterLab } from '../../ui/notify';
import { MemoryToolbarButton } from './MemoryToolbarButton';
import { registerSnippetCommands } from './snippetCommands';
import { SnippetLibrary } from './SnippetLibrary';
import { addSnippetsToSidebar } from './snippetsSidebar';

/**
 * The name of the extension's item in the notebook toolbar, as the schema
 * declares it under `jupyter.lab.toolbars`.
 */
const TOOLBAR_ITEM = 'vram-memory';

/** The snippets plugin. */
export const snippetsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-vram:snippets',
  description:
    "Inserts the out-of-memory playbook's code cells: no_grad, AMP, memory growth…",
  autoStart: true,
  requires: [IVramCore, INotebookTracker],
  optional: [IVramSidebar, ICommandPalette, IToolbarWidgetRegistry],
  activate: (
    app: JupyterFrontEnd,
    core: IVramCore,
    notebooks: INotebookTracker,
    sidebar: IVramSidebar | null,
    palette: ICommandPalette | null,
    toolbars: IToolbarWidgetRegistry | null
  ): void => {
    const { monitor } = core;
    const library = new SnippetLibrary();
    // The schema's default is the default list, so it is passed along and the
    // copy in JavaScript need not load.
    const read = () => {
      const raw = core.settings.raw;
      void library.read(raw?.values, raw?.defaultOf('snippets'));
    };
    core.settings.changed.connect(read);
    if (core.settings.raw) {
      read();
    }
    if (sidebar) {
      addSnippetsToSidebar(sidebar, {
        monitor,
        library,
        execute: core.execute
      });
    }
    if (toolbars) {
      addToolbarButton(app, notebooks, toolbars, library);
    }
    registerSnippetCommands({
      app,
      monitor,
      trans,
      palette,
      category: trans.__(PALETTE_CATEGORY),
      notify: notifyInJupyterLab,
      snippets: library,
      currentNotebook: () => notebooks.currentWidget
    });
  }
};

/** Adds the notebook toolbar's memory button, whose menu lists the snippets. */
function addToolbarButton(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker,
  toolbars: IToolbarWidgetRegistry,
  library: SnippetLibrary
): void {
  toolbars.addFactory<NotebookPanel>(
    'Notebook',
    TOOLBAR_ITEM,
    panel =>
      new MemoryToolbarButton({
        commands: app.commands,
        library,
        beforeOpen: () => {
          // The commands act on the current notebook, so this notebook is
          // made the current one first.
          if (notebooks.currentWidget !== panel) {
            app.shell.activateById(panel.id);
          }
        }
      })
  );
}
