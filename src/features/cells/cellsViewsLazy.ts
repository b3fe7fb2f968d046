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
  monitor: IVramMonitor;
  /** A kernel's allocation recording, for what each cell still holds (none: not shown). */
  recorderFor: (model: IKernelMemoryModel | null) => AllocationRecorder | null;
  /** Fires when a kernel's per-kernel parts were made after their code loaded: the view asks for them again. */
  partsChanged?: ISignal<unknown, unknown>;
  /** What a click in the history does (go to the cell, export, clear). */
  actions: CellHistoryView.IActions;
  /** The page's code consoles, whose runs are labelled as such; null: none. */
  consoles: IConsoleSource | null;
}

/** The Cells tab's view. */
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
