/**
 * The "Will it fit?" section's view, loaded the first time the Memory tab
 * is shown; it follows the active notebook's kernel and its estimate.
 */
import type { ISignal } from '@lumino/signaling';

import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { IVramMonitor } from '../../monitor/IVramMonitor';
import { CommandIDs, ExecuteCommand } from '../../ui/commandIds';
import { followMonitor } from '../../ui/followMonitor';
import { EstimateView } from './EstimateView';
import type { MemoryEstimate } from './MemoryEstimate';

/** What the section's view needs. */
export interface IEstimateSidebarOptions {
  monitor: IVramMonitor;
  /** A kernel's estimate (none yet: the section waits for it). */
  estimateFor: (model: IKernelMemoryModel | null) => MemoryEstimate | null;
  /** Fires when a kernel's per-kernel parts were made after their code loaded. */
  partsChanged?: ISignal<unknown, unknown>;
  /** Runs a command (the section's buttons run theirs). */
  execute: ExecuteCommand;
}

/** The view of the active kernel's estimate. */
export function createEstimateView({
  monitor,
  estimateFor,
  partsChanged,
  execute
}: IEstimateSidebarOptions): EstimateView {
  const view = new EstimateView({
    settings: monitor.settings,
    run: () => void execute(CommandIDs.estimateMemory),
    measureReal: request =>
      void execute(CommandIDs.estimateMemory, {
        model: request.model,
        batch: request.batch,
        optimizer: request.optimizer ?? null,
        loss: request.loss ?? null,
        ...(request.batch_sizes ? { batchSizes: request.batch_sizes } : {}),
        margin: request.margin ?? 0.1,
        ...(request.card_bytes ? { cardBytes: request.card_bytes } : {}),
        realStep: true,
        ask: false
      }),
    insert: variant => void execute(CommandIDs.insertEstimateCell, { variant })
  });
  return followMonitor(
    monitor,
    view,
    model => {
      view.estimate = estimateFor(model);
    },
    partsChanged
  );
}
