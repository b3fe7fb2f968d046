/**
 * The Processes tab's view, loaded the first time the tab is shown; it
 * follows the active notebook's kernel and its process tracking.
 */
import type { ISignal } from '@lumino/signaling';

import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { IVramMonitor } from '../../monitor/IVramMonitor';
import { CommandIDs, ExecuteCommand } from '../../ui/commandIds';
import { followMonitor } from '../../ui/followMonitor';
import { ProcessesView } from './ProcessesView';
import type { ProcessTracker } from './ProcessTracker';

/** What the Processes tab's view needs. */
export interface IProcessesSidebarOptions {
  monitor: IVramMonitor;
  /** A kernel's process tracking (none yet: the tab waits for it). */
  trackerFor: (model: IKernelMemoryModel | null) => ProcessTracker | null;
  /** Fires when a kernel's per-kernel parts were made after their code loaded. */
  partsChanged?: ISignal<unknown, unknown>;
  /** Runs a command (the Stop and Release buttons run theirs). */
  execute: ExecuteCommand;
}

/** The view of the active kernel's processes. */
export function createProcessesView({
  monitor,
  trackerFor,
  partsChanged,
  execute
}: IProcessesSidebarOptions): ProcessesView {
  const view = new ProcessesView({
    settings: monitor.settings,
    stop: p =>
      void execute(CommandIDs.stopProcess, {
        pid: p.process.pid,
        startTime: p.process.start_time
      }),
    release: r =>
      void execute(CommandIDs.releaseEngine, { kind: r.kind, name: r.name })
  });
  return followMonitor(
    monitor,
    view,
    model => {
      view.model = model;
      view.tracker = trackerFor(model);
    },
    partsChanged
  );
}
