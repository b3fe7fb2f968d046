/**
 * The cell history view, loaded the first time the Cells tab is shown. It
 * follows the active notebook's kernel, and its allocation recording (for
 * what each cell still holds) where that feature is on.
 */
import type { ISignal } from '@lumino/signaling';

import { ConsoleCells, IConsoleSource } from '../../model/ConsoleCells';
import { followMonitor } from '../../ui/followMonitor';
import { CellHistoryView } from './CellHistoryView';
import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { IVramMonitor } from '../../monitor/IVramMonitor';
import type { AllocationRecorder } from '../allocations/AllocationRecorder';

/** What the cell history view needs. */
export interface ICellsSidebarOptions {
  /** The monitor whose current kernel the view follows. */
  monitor: IVramMonitor;
  /**
   * A kernel's allocation recording, which gives what each cell still holds.
   * Without it, the Alive column is not shown.
   */
  recorderFor: (model: IKernelMemoryModel | null) => AllocationRecorder | null;
  /**
   * Fires when a kernel's per-kernel parts were made after their code
   * loaded, so that the view asks for them again.
   */
  partsChanged?: ISignal<unknown, unknown>;
  /** What the view's rows and buttons do: go to the cell, export, clear, insert a snippet. */
  actions: CellHistoryView.IActions;
  /** The page's code consoles, whose runs are labelled as such; null when there are none. */
  consoles: IConsoleSource | null;
}

/** Creates the Cells tab's view, which follows the current kernel and its allocation recording. */
export function createCellHistoryView({
  monitor,
  partsChanged,
  actions,
  consoles,
  recorderFor
}: ICellsSidebarOptions): CellHistoryView {
  const consoleCells = consoles ? new ConsoleCells(consoles) : null;
  const view = new CellHistoryView({
    settings: monitor.settings,
    actions,
    consoleCells
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
