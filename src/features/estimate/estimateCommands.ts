/**
 * The commands of "Will it fit?", whose ids are in ui/commandIds.ts:
 * `estimate-memory` asks which model, optimizer, loss and batch to use and
 * estimates the training step in the active kernel; `insert-estimate-cell`
 * inserts the training cell of one remedy of the last estimate, with its
 * figures filled in. Their steps and dialogs (estimateCommandLazy.ts,
 * EstimateDialog.ts) load with the first use, not with the page.
 */

import { CommandIDs } from '../../ui/commandIds';
import type { IEstimateCommandOptions } from './estimateHost';
import { SIDEBAR_ID } from '../../sidebar/SidebarHost';
import { TABS } from '../../sidebar/panelLayout';

/** Registers `estimate-memory` and `insert-estimate-cell`. */
export function registerEstimateCommands(
  options: IEstimateCommandOptions
): void {
  const { app, trans, sidebar, palette, category } = options;
  // The estimate's progress and answer are shown in the Memory tab.
  const showMemory = () => {
    sidebar.showTab(TABS.memory);
    app.shell.activateById(SIDEBAR_ID);
  };
  const lazy = () => import('./estimateCommandLazy');
  app.commands.addCommand(CommandIDs.estimateMemory, {
    label: trans.__('Will It Fit? Estimate a Training Step\u2026'),
    caption: trans.__(
      "Predict a training step's peak GPU memory and the largest batch size that fits, without allocating on the GPU"
    ),
    execute: async args =>
      (await lazy()).estimateMemory(args, { ...options, showMemory })
  });
  app.commands.addCommand(CommandIDs.insertEstimateCell, {
    label: trans.__('Insert the Estimated Training Cell'),
    execute: async args =>
      (await lazy()).insertEstimateCell(args, { ...options, showMemory })
  });
  palette?.addItem({ command: CommandIDs.estimateMemory, category });
}
