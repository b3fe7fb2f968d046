/**
 * The Lines tab's view, loaded the first time the tab is shown; it follows
 * the active notebook's kernel and its allocation recording.
 */
import type { ISignal } from '@lumino/signaling';

import { ConsoleCells, IConsoleSource } from '../../model/ConsoleCells';
import { CommandIDs, ExecuteCommand } from '../../ui/commandIds';
import { followMonitor } from '../../ui/followMonitor';
import { AllocationSitesView } from './AllocationSitesView';
import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { IVramMonitor } from '../../monitor/IVramMonitor';
import type { AllocationRecorder } from './AllocationRecorder';

/** What the Lines tab's view needs. */
export interface ILinesSidebarOptions {
  monitor: IVramMonitor;
  /**
   * Returns a kernel's allocation recording. Without one, the tab says that
   * recording is unavailable.
   */
  recorderFor: (model: IKernelMemoryModel | null) => AllocationRecorder | null;
  /**
   * Fires when a kernel's per-kernel parts were made after their code
   * loaded, so that the view asks for them again.
   */
  partsChanged?: ISignal<unknown, unknown>;
  /**
   * Runs a command; by default the toggle, the rows and the export buttons use
   * it.
   */
  execute: ExecuteCommand;
  /** What the toggle, rows and export buttons do, instead of the commands. */
  actions?: AllocationSitesView.IActions;
  /**
   * The page's code consoles, whose lines are labelled as such, or null for
   * none.
   */
  consoles: IConsoleSource | null;
}

/** The view of memory by line. */
export function createAllocationSitesView({
  monitor,
  partsChanged,
  execute,
  actions,
  consoles,
  recorderFor
}: ILinesSidebarOptions): AllocationSitesView {
  const consoleCells = consoles ? new ConsoleCells(consoles) : null;
  const view = new AllocationSitesView({
    settings: monitor.settings,
    consoleCells,
    actions: actions ?? commandActions(execute)
  });
  view.disposed.connect(() => consoleCells?.dispose());
  return followMonitor(
    monitor,
    view,
    model => {
      view.model = model;
      view.recorder = recorderFor(model);
    },
    partsChanged
  );
}

/** The view's buttons and rows, each running its command. */
function commandActions(execute: ExecuteCommand): AllocationSitesView.IActions {
  return {
    setRecording: enabled =>
      void execute(CommandIDs.recordAllocations, { enabled }),
    jumpTo: row =>
      void execute(CommandIDs.goToCellLine, {
        cellId: row.cellId,
        executionCount: row.executionCount,
        line: row.line
      }),
    exportGpuSnapshot: () => void execute(CommandIDs.exportAllocationSnapshot),
    exportHostCsv: () => void execute(CommandIDs.exportAllocationSites)
  };
}
