/**
 * The Processes feature's commands, whose ids are in ui/commandIds.ts: stop
 * one process, and release what an engine started, each after asking. They
 * are not in the palette: each names one thing (`{pid, startTime}`, or
 * `{kind, name}`), as the Processes tab's buttons and the out-of-memory
 * assistant do. Their steps and dialogs (stopProcessLazy.ts,
 * releaseEngineLazy.ts and their dialogs) load with the first use, not with
 * the page.
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
import type { Releasable } from '../../protocol/release';

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
  /** Defaults to the release dialog; tests answer directly. */
  confirmRelease?: (
    releasable: Releasable,
    units: ByteUnits
  ) => Promise<boolean>;
}

/** Registers `stop-process` and `release-engine`. */
export function registerProcessCommands(options: IProcessCommandOptions): void {
  const { app, trans, sidebar } = options;
  // The outcome stays in the Processes tab.
  const showProcesses = () => {
    sidebar.showTab(TABS.processes);
    app.shell.activateById(SIDEBAR_ID);
  };
  app.commands.addCommand(CommandIDs.releaseEngine, {
    label: trans.__('Release\u2026'),
    execute: async args =>
      (await import('./releaseEngineLazy')).releaseEngine(args, {
        ...options,
        showProcesses,
        confirm:
          options.confirmRelease ??
          (async (releasable, units) =>
            (await import('./ReleaseEngineDialog')).confirmRelease(
              releasable,
              units
            ))
      })
  });
  app.commands.addCommand(CommandIDs.stopProcess, {
    label: trans.__('Stop Process\u2026'),
    execute: async args =>
      (await import('./stopProcessLazy')).stopProcess(args, {
        current: options.current,
        units: options.units,
        notify: options.notify,
        showProcesses,
        confirm:
          options.confirm ??
          (async request =>
            (await import('./StopProcessDialog')).confirmStopProcess(request))
      })
  });
}
