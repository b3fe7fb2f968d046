/**
 * The Processes feature's commands, whose ids are in ui/commandIds.ts: show
 * the Processes tab, and stop one process after asking. The stop's steps
 * and its dialog (stopProcessLazy.ts, StopProcessDialog.ts) load with the
 * first stop, not with the page.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { ICommandPalette } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';

import type { ByteUnits } from '../../text/format';
import { CommandIDs } from '../../ui/commandIds';
import type { Notify } from '../../ui/notify';
import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { SIDEBAR_ID } from '../../sidebar/SidebarHost';
import { TABS } from '../../sidebar/panelLayout';
import type { ProcessTracker } from './ProcessTracker';
import type { StopProcessRequest } from './StopProcessDialog';

/** What the process commands act on, as the feature's plugin hands it to them. */
export interface IProcessCommandOptions {
  app: Pick<JupyterFrontEnd, 'commands' | 'shell'>;
  trans: TranslationBundle;
  palette: ICommandPalette | null;
  category: string;
  sidebar: Pick<IVramSidebar, 'showTab'>;
  /** The active kernel's process tracking; null without one. */
  current: () => ProcessTracker | null;
  units: () => ByteUnits;
  notify: Notify;
  /** Defaults to the stop dialog; tests answer directly. */
  confirm?: (request: StopProcessRequest) => Promise<boolean>;
}

/** Registers `stop-process` and `show-processes`, and puts the latter in the palette. */
export function registerProcessCommands(options: IProcessCommandOptions): void {
  const { app, trans, sidebar } = options;
  const showProcesses = () => {
    sidebar.showTab(TABS.processes);
    app.shell.activateById(SIDEBAR_ID);
  };
  const confirm =
    options.confirm ??
    (async (request: StopProcessRequest) =>
      (await import('./StopProcessDialog')).confirmStopProcess(request));

  app.commands.addCommand(CommandIDs.showProcesses, {
    label: trans.__("Show the Kernel's Processes"),
    caption: trans.__(
      'List the processes the active kernel started (DataLoader workers, pools, subprocesses) with their memory'
    ),
    execute: () => showProcesses()
  });

  app.commands.addCommand(CommandIDs.stopProcess, {
    label: trans.__('Stop Process\u2026'),
    caption: trans.__(
      "Stop one of the kernel's processes (asks first): SIGTERM, then SIGKILL if it has not ended"
    ),
    execute: async args =>
      (await import('./stopProcessLazy')).stopProcess(args, {
        current: options.current,
        units: options.units,
        notify: options.notify,
        showProcesses,
        confirm
      })
  });

  options.palette?.addItem({
    command: CommandIDs.showProcesses,
    category: options.category
  });
}
