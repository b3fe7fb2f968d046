/**
 * The cleanup commands, whose ids are in ui/commandIds.ts. They collect
 * garbage, empty the CUDA cache, list what holds memory, and delete what the
 * user ticked after asking first. The feature's
 * plugin (plugin.ts) registers them. The work itself is done by
 * MemoryActions, which queues the requests while the kernel is busy.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';

import type { FreeAction } from '../../protocol/cleanup';
import { CommandIDs } from '../../ui/commandIds';
import type { Notify } from '../../ui/notify';
import type { DeletePlan } from './deletePlan';
import { ActionOutcome } from './actionOutcome';
import { MemoryMonitor } from '../../monitor/MemoryMonitor';
import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { SIDEBAR_ID } from '../../sidebar/SidebarHost';
import { currentActions } from './cleanupActionsPart';
import type { MemoryActions } from './MemoryActions';
import { trans as pageTrans } from '../../text/translation';

/** How a command tells the user something, as a JupyterLab notification. */

/**
 * Notifications show at most 140 characters, so a result's gist goes first.
 */
const NOTIFICATION_LIMIT = 140;

/**
 * Joins the lines of a cleanup result into a notification's text, keeping only
 * the first line when all of them would be too long.
 */
export function notificationText(lines: readonly string[]): string {
  const all = lines.join('. ');
  if (all.length <= NOTIFICATION_LIMIT || lines.length <= 1) {
    return all;
  }
  const more = pageTrans.__('%1 (details in the GPU memory panel)', lines[0]);
  return more.length <= NOTIFICATION_LIMIT ? more : lines[0];
}

/**
 * Registers the cleanup commands with the app and, when there is one, the
 * command palette.
 */
export function registerCleanupCommands(options: {
  app: JupyterFrontEnd;
  monitor: MemoryMonitor;
  trans: TranslationBundle;
  /** The sidebar, to show its Holders tab. */
  sidebar: Pick<IVramSidebar, 'showTab'>;
  palette: ICommandPalette | null;
  category: string;
  notify: Notify;
  /**
   * Asks the user to confirm a delete. It defaults to the delete
   * confirmation dialog; tests pass a function that answers directly.
   */
  confirmDelete?: (plan: DeletePlan) => Promise<boolean>;
}): void {
  const { app, monitor, trans, sidebar, palette, category, notify } = options;
  const confirmDelete =
    options.confirmDelete ??
    (async (plan: DeletePlan) =>
      // The dialog's view loads when it is first needed rather than at
      // start-up.
      (await import('./DeleteDialogBody')).confirmDeleteDialog(
        plan,
        monitor.settings.units
      ));
  const hasNotebook = () => monitor.current !== null;

  const notifyOutcome = (outcome: ActionOutcome) => {
    const text = notificationText(outcome.lines);
    if (outcome.status === 'failed') {
      notify('error', text);
    } else if (outcome.status === 'cancelled') {
      notify('info', text);
    } else if ((outcome.freedBytes ?? 0) > 0) {
      notify('success', text);
    } else {
      notify('info', text);
    }
  };

  /** Tells the user when a request just made waits behind a running cell. */
  const notifyQueued = (memoryActions: MemoryActions) => {
    if (memoryActions.queue.queuedCount > 0) {
      notify(
        'info',
        trans.__(
          'Queued \u2014 the kernel is busy; it runs when the kernel is idle (cancel it in the GPU memory panel)'
        )
      );
    }
  };

  const runFree = async (
    actions: FreeAction[]
  ): Promise<ActionOutcome | null> => {
    const memoryActions = currentActions(monitor);
    if (!memoryActions) {
      return null;
    }
    const running = memoryActions.free(actions);
    notifyQueued(memoryActions);
    const outcome = await running;
    notifyOutcome(outcome);
    return outcome;
  };

  const showHolders = () => {
    sidebar.showTab('holders');
    app.shell.activateById(SIDEBAR_ID);
  };

  // The three free actions differ only in what the kernel runs.
  const freeCommands: [string, FreeAction[], string, string][] = [
    [
      CommandIDs.collectGarbage,
      ['gc'],
      trans.__('Collect Garbage in the Kernel'),
      trans.__(
        'Run gc.collect() in the active kernel and show what it freed (queued while the kernel is busy)'
      )
    ],
    [
      CommandIDs.emptyCache,
      ['empty_cache'],
      trans.__('Empty the CUDA Cache'),
      trans.__(
        "Run torch.cuda.empty_cache() in the active kernel: give PyTorch's cached GPU memory back (never initialises CUDA)"
      )
    ],
    [
      CommandIDs.freeMemory,
      ['gc', 'empty_cache'],
      trans.__('Free GPU Memory (gc + empty_cache)'),
      trans.__(
        'Run gc.collect() then torch.cuda.empty_cache() in the active kernel and show what came back'
      )
    ]
  ];
  for (const [id, actions, label, caption] of freeCommands) {
    app.commands.addCommand(id, {
      label,
      caption,
      isEnabled: hasNotebook,
      execute: () => runFree(actions)
    });
  }

  app.commands.addCommand(CommandIDs.inspectMemory, {
    label: trans.__('Show What Holds Memory'),
    caption: trans.__(
      'List the variables and hidden references (Out[], the last traceback) that hold memory in the active kernel'
    ),
    isEnabled: hasNotebook,
    execute: async () => {
      const memoryActions = currentActions(monitor);
      showHolders();
      if (!memoryActions) {
        return null;
      }
      return memoryActions.inspect();
    }
  });

  app.commands.addCommand(CommandIDs.deleteVariables, {
    label: trans.__('Delete Variables Holding Memory\u2026'),
    caption: trans.__(
      'Delete the variables and hidden references ticked in the Holders tab (asks first), then free memory'
    ),
    isEnabled: hasNotebook,
    execute: async args => {
      const memoryActions = currentActions(monitor);
      if (!memoryActions) {
        return null;
      }
      // Only one delete runs at a time, from its planning to its result, so
      // that a double click, or a second click while the first delete waits
      // behind a cell, asks the user only once.
      if (!memoryActions.beginDelete()) {
        notify(
          'info',
          trans.__(
            'A delete is under way already: its question or its result comes first.'
          )
        );
        return null;
      }
      try {
        // The delete's flow loads with the first delete rather than with the
        // page.
        const { deleteVariables } = await import('./cleanupCommandsLazy');
        return await deleteVariables(memoryActions, args, {
          notify,
          notifyOutcome,
          showHolders,
          confirmDelete
        });
      } finally {
        memoryActions.endDelete();
      }
    }
  });

  const commands = [
    CommandIDs.collectGarbage,
    CommandIDs.emptyCache,
    CommandIDs.freeMemory,
    CommandIDs.inspectMemory,
    CommandIDs.deleteVariables
  ];
  // The commands are enabled only with a notebook, so the palette and menus
  // are told to ask again when the current notebook changes.
  monitor.currentChanged.connect(() => {
    for (const id of commands) {
      app.commands.notifyCommandChanged(id);
    }
  });
  for (const command of commands) {
    palette?.addItem({ command, category });
  }
}
