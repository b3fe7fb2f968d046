/**
 * The command that inserts the fix for a variable that the Holders listing
 * flags for keeping an autograd graph alive. The fix is a cell, inserted
 * below the active cell and not run, that keeps the variable's values with
 * `.item()` or `.detach()`.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { TranslationBundle } from '@jupyterlab/translation';

import { CommandIDs } from '../../ui/commandIds';
import { MemoryActions } from './MemoryActions';
import type { ISnippetNotebook } from '../snippets/insertSnippet';

/**
 * Registers the command that inserts the fix for a variable that keeps an
 * autograd graph alive.
 */
export function registerGraphFixCommand(options: {
  app: JupyterFrontEnd;
  trans: TranslationBundle;
  /** The active kernel's cleanup actions (their latest listing). */
  actions: () => MemoryActions | null;
  /** The active notebook panel. */
  notebook: () => { id: string; content: ISnippetNotebook } | null;
}): void {
  const { app, trans } = options;
  app.commands.addCommand(CommandIDs.insertGraphFix, {
    label: trans.__('Insert a Cell Keeping Values, Not Autograd Graphs'),
    caption: trans.__(
      'Replace a variable that keeps autograd graphs alive by its values (.item() / .detach())'
    ),
    execute: async args => {
      // The fix's code loads when it is first needed rather than at start-up.
      const { graphFixCode } = await import('./graphFix');
      const name = typeof args.name === 'string' ? args.name : null;
      const entry = options
        .actions()
        ?.listing?.entries.find(e => e.name === name && e.graph_holding);
      const panel = options.notebook();
      const code = entry ? graphFixCode(entry) : null;
      if (!panel || code === null) {
        return null;
      }
      const { insertCodeCell } = await import('../snippets/insertSnippet');
      const index = insertCodeCell(panel.content, code, 'below');
      if (index !== null) {
        app.shell.activateById(panel.id);
      }
      return index;
    }
  });
}
