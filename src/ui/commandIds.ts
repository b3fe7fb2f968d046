/**
 * The ids of every command of jupyterlab-vram. Each feature's plugin
 * registers its own commands; the ids live apart from the handlers so that
 * views can name a command without importing its code.
 */
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

/**
 * Palette category of our commands. The palette searches categories too:
 * "VRAM" lets a user who types the extension's name find every command.
 */
export const PALETTE_CATEGORY = 'GPU memory (VRAM)';

/**
 * Runs a command by id: the app's `commands.execute`, handed to the views
 * that have buttons (a test passes a recorder).
 */
export type ExecuteCommand = (
  command: string,
  args?: ReadonlyPartialJSONObject
) => Promise<unknown> | void;

/** The ids of every command of jupyterlab-vram. */
export namespace CommandIDs {
  /** Show and activate the GPU memory sidebar. */
  export const openSidebar = 'jupyterlab-vram:open-sidebar';
  /** Ask the active kernel's helper for a fresh sample (reconnects if it is not live). */
  export const refresh = 'jupyterlab-vram:refresh';
  /** Show or hide the memory badges on executed cells (setting showCellBadges). */
  export const toggleCellBadges = 'jupyterlab-vram:toggle-cell-badges';
  /** How much history the timeline shows; args `{minutes}` (setting timelineWindowMinutes). */
  export const setTimelineWindow = 'jupyterlab-vram:set-timeline-window';
  /** Show the per-cell history tab of the sidebar. */
  export const showCellHistory = 'jupyterlab-vram:show-cell-history';
  /**
   * Download the active kernel's cell history; args `{format: 'csv' | 'json'}`
   * (default csv). Returns the file name, or null when there is nothing.
   */
  export const exportCellHistory = 'jupyterlab-vram:export-cell-history';
  /** Forget the active kernel's cell history in this browser. */
  export const clearCellHistory = 'jupyterlab-vram:clear-cell-history';
  /** Run gc.collect() in the active kernel (queued while it is busy). */
  export const collectGarbage = 'jupyterlab-vram:collect-garbage';
  /** Run torch.cuda.empty_cache() in the active kernel (never initialises CUDA). */
  export const emptyCache = 'jupyterlab-vram:empty-cache';
  /** gc.collect() then torch.cuda.empty_cache() (default shortcut Ctrl Shift Alt M). */
  export const freeMemory = 'jupyterlab-vram:free-memory';
  /** Show the Holders tab and list what holds memory in the active kernel. */
  export const inspectMemory = 'jupyterlab-vram:inspect-memory';
  /**
   * Delete variables and clear hidden references, after a confirmation
   * dialog; args `{names?: string[], hidden?: string[], fresh?: boolean}`
   * (default: what is ticked in the Holders tab; `fresh`: list the kernel's
   * holders anew first). Returns the outcome, or null when nothing
   * was deleted.
   */
  export const deleteVariables = 'jupyterlab-vram:delete-variables';
  /**
   * Insert a snippet of the `snippets` setting as a code cell (not run);
   * args `{id}`. Returns `{id, index, code, restartNeeded, namesFound}`, or
   * null when nothing was inserted.
   */
  export const insertSnippet = 'jupyterlab-vram:insert-snippet';
  /** Insert the `no-grad-eval` snippet (torch.no_grad evaluation loop). */
  export const insertNoGrad = 'jupyterlab-vram:insert-no-grad';
  /** Insert the `amp` snippet (torch.amp autocast + GradScaler). */
  export const insertAmp = 'jupyterlab-vram:insert-amp';
  /** Insert the `tf-memory-growth` snippet (first cell of the notebook). */
  export const insertTfMemoryGrowth = 'jupyterlab-vram:insert-tf-memory-growth';
  /**
   * Shut down a monitored kernel after a confirmation dialog; args
   * `{kernelId}` (the Kernels tab's buttons). Shuts it down through its
   * notebook's session context, which leaves the notebook on "No Kernel".
   * Returns true when it was shut down.
   */
  export const shutdownKernel = 'jupyterlab-vram:shutdown-kernel';
  /**
   * Turn allocation recording on or off in the active kernel; args
   * `{enabled: boolean}` (default: toggle). Returns the recording state,
   * or null when the kernel could not be asked.
   */
  export const recordAllocations = 'jupyterlab-vram:record-allocations';
  /** Show the Lines tab and list live memory by notebook line. */
  export const showAllocationSites = 'jupyterlab-vram:show-allocation-sites';
  /**
   * Activate a cell and put the cursor on a line; args `{cellId?,
   * executionCount?, line}`. Returns true when the cell was found.
   */
  export const goToCellLine = 'jupyterlab-vram:go-to-cell-line';
  /** Download PyTorch's allocator snapshot (.pickle, for pytorch.org/memory_viz). */
  export const exportAllocationSnapshot =
    'jupyterlab-vram:export-allocation-snapshot';
  /**
   * Insert a cell below the active one that replaces a graph-holding
   * variable of the Holders listing by its values (`.item()`/`.detach()`);
   * args `{name}`. Returns the new cell's index, or null.
   */
  export const insertGraphFix = 'jupyterlab-vram:insert-graph-fix';
  /** Download the host allocation sites as CSV. */
  export const exportAllocationSites =
    'jupyterlab-vram:export-allocation-sites';
  /**
   * Stop one process of the active kernel's tree after a confirmation
   * dialog; args `{pid, startTime, timeoutS?}` (SIGTERM, then SIGKILL after
   * `timeoutS`, default 5). Returns the stop's state, or null when nothing
   * was asked of the kernel.
   */
  export const stopProcess = 'jupyterlab-vram:stop-process';
}

/** The snippet each dedicated insert command inserts. */
export const SNIPPET_COMMANDS: ReadonlyArray<{
  command: string;
  snippetId: string;
  label: string;
}> = [
  {
    command: CommandIDs.insertNoGrad,
    snippetId: 'no-grad-eval',
    label: 'Insert Evaluation Cell without Gradients (torch.no_grad)'
  },
  {
    command: CommandIDs.insertAmp,
    snippetId: 'amp',
    label: 'Insert Mixed-Precision Training Cell (torch.amp)'
  },
  {
    command: CommandIDs.insertTfMemoryGrowth,
    snippetId: 'tf-memory-growth',
    label: 'Insert TensorFlow Memory Growth Cell'
  }
];
