/**
 * The cleanup views, loaded the first time the Memory or Holders tab is
 * shown: each follows the cleanup actions of the active notebook's kernel.
 */
import type { ISignal } from '@lumino/signaling';

import { trans } from '../../text/translation';
import { CommandIDs, ExecuteCommand } from '../../ui/commandIds';
import { followMonitor } from '../../ui/followMonitor';
import { GRAPH_FIX_SNIPPET_ID } from './graphFix';
import { HoldersView } from './HoldersView';
import { MemoryActionsBar } from './MemoryActionsBar';
import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { IVramMonitor } from '../../monitor/IVramMonitor';
import type { MemoryActions } from './MemoryActions';

/** What the cleanup views need. */
export interface ICleanupSidebarOptions {
  monitor: IVramMonitor;
  /**
   * The cleanup actions of a kernel's model. When there are none, the
   * buttons are disabled.
   */
  actionsFor: (model: IKernelMemoryModel | null) => MemoryActions | null;
  /**
   * Fires when a kernel's per-kernel parts were made after their code
   * loaded, so that the view asks for them again.
   */
  partsChanged?: ISignal<unknown, unknown>;
  /** Runs a command; every button of the bar and of the Holders tab uses it. */
  execute: ExecuteCommand;
}

/**
 * Creates the cleanup bar. Its latest result is worded again when the units
 * change.
 */
export function createActionsBar({
  monitor,
  partsChanged,
  execute,
  actionsFor
}: ICleanupSidebarOptions): MemoryActionsBar {
  const bar = new MemoryActionsBar({ buttons: cleanupButtons(), execute });
  // The cleanup result is text made when the result came, so it is worded
  // again in the new units.
  const redescribe = () => void bar.actions?.redescribe();
  monitor.settingsChanged.connect(redescribe);
  bar.disposed.connect(() => monitor.settingsChanged.disconnect(redescribe));
  return followMonitor(
    monitor,
    bar,
    model => {
      const actions = actionsFor(model);
      // Another notebook's result may have been worded in units that changed
      // since, so it is worded again.
      void actions?.redescribe();
      bar.actions = actions;
    },
    partsChanged
  );
}

/**
 * Creates the Holders tab, which lists what holds memory for the user to
 * delete, and offers the fixes for autograd graphs kept alive.
 */
export function createHoldersView({
  monitor,
  partsChanged,
  execute,
  actionsFor
}: ICleanupSidebarOptions): HoldersView {
  const holders = new HoldersView({
    settings: monitor.settings,
    onDelete: () => execute(CommandIDs.deleteVariables),
    onFixGraph: entry =>
      void execute(CommandIDs.insertGraphFix, { name: entry.name }),
    onShowGraphPattern: () =>
      void execute(CommandIDs.insertSnippet, { id: GRAPH_FIX_SNIPPET_ID })
  });
  return followMonitor(
    monitor,
    holders,
    model => {
      holders.actions = actionsFor(model);
    },
    partsChanged
  );
}

/**
 * The cleanup bar's buttons in the page's language. Each button runs its
 * command.
 */
function cleanupButtons(): MemoryActionsBar.IButton[] {
  return [
    {
      command: CommandIDs.collectGarbage,
      // This is the name of the Python module, which is code and so is not
      // translated.
      label: 'gc',
      caption: trans.__(
        'Run gc.collect() in the kernel (queued while it is busy)'
      ),
      role: 'action-collect-garbage'
    },
    {
      command: CommandIDs.emptyCache,
      label: trans.__('Empty cache'),
      caption: trans.__(
        "Run torch.cuda.empty_cache(): give PyTorch's cached GPU memory back to the device"
      ),
      role: 'action-empty-cache'
    },
    {
      command: CommandIDs.freeMemory,
      label: trans.__('Free memory'),
      caption: trans.__('gc.collect() then torch.cuda.empty_cache()'),
      role: 'action-free-memory'
    },
    {
      command: CommandIDs.inspectMemory,
      label: trans.__('What holds memory?'),
      caption: trans.__(
        'List the variables and hidden references that hold memory'
      ),
      role: 'action-inspect'
    }
  ];
}
