/**
 * The Processes feature's command, whose id is in ui/commandIds.ts: stop one
 * process after asking. It is not in the palette: it names one process
 * (`{pid, startTime}`), as the Processes tab's buttons do. The stop's steps
 * and its dialog (stopProcessLazy.ts, StopProcessDialog.ts) load with the
 * first stop, not with the page.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { TranslationBundle } from '@jupyterlab/translation';

import type { ByteUnits } from '../../text/format';
import { CommandIDs } from '../../ui/commandIds';
import type { Notify } from '../../ui/notify';
import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import { SIDEBAR_ID } from '../../sidebar/SidebarHost';
import { TABS } from '../../sidebar/panelLayout';
import type { ProcessTracker } from './ProcessTracker';
import type { StopProcessRequest } from './StopProcessDialog';

/** What the process command acts on, as the feature's plugin hands it to it. */
export interface IProcessCommandOptions {
  app: Pick<JupyterFrontEnd, 'commands' | 'shell'>;
  trans: TranslationBundle;
  sidebar: Pick<IVramSidebar, 'showTab'>;
  /** The active kernel's process tracking; null without one. */
  current: () => ProcessTracker | null;
  units: () => ByteUnits;
  notify: Notify;
  /** Defaults to the stop dialog; tests answer directly. */
  confirm?: (request: StopProcessRequest) => Promise<boolean>;
}

/** Registers `stop-process`. */
export function registerProcessCommands(options: IProcessCommandOptions): void {
  const { app, trans, sidebar } = options;
  app.commands.addCommand(CommandIDs.stopProcess, {
    label: trans.__('Stop Process\u2026'),
    execute: async args =>
      (await import('./stopProcessLazy')).stopProcess(args, {
        current: options.current,
        units: options.units,
        notify: options.notify,
        // The outcome stays in the Processes tab.
        showProcesses: () => {
          sidebar.showTab(TABS.processes);
          app.shell.activateById(SIDEBAR_ID);
        },
        confirm:
          options.confirm ??
          (async request =>
            (await import('./StopProcessDialog')).confirmStopProcess(request))
      })
  });
}
