/**
 * The ids of every command of jupyterlab-vram. Each feature's plugin
 * registers its own commands; the ids live apart from the handlers so that
 * views can name a command without importing its code.
 */
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

/**
 * The palette category of our commands. The palette searches categories
 * too, so "VRAM" lets a user who types the extension's name find every
 * command.
 */
export const PALETTE_CATEGORY = 'GPU memory (VRAM)';

/**
 * Runs a command by id. It is the app's `commands.execute`, handed to the
 * views that have buttons; a test passes a recorder instead.
 */
export type ExecuteCommand = (
  command: string,
  args?: ReadonlyPartialJSONObject
) => Promise<unknown> | void;

/** The ids of every command of jupyterlab-vram. */
export namespace CommandIDs {
  /** Show and activate the GPU memory sidebar. */
  export const openSidebar = 'jupyterlab-vram:open-sidebar';
  /**
   * Asks the active kernel's helper for a fresh sample, and reconnects if
   * the helper is not live.
   */
  export const refresh = 'jupyterlab-vram:refresh';
  /**
   * Shows or hides the memory badges on executed cells; this is the
   * showCellBadges setting.
   */
  export const toggleCellBadges = 'jupyterlab-vram:toggle-cell-badges';
  /**
   * Sets how much history the timeline shows, with the args `{minutes}`;
   * this is the timelineWindowMinutes setting.
   */
  export const setTimelineWindow = 'jupyterlab-vram:set-timeline-window';
  /** Show the per-cell history tab of the sidebar. */
  export const showCellHistory = 'jupyterlab-vram:show-cell-history';
  /**
   * Downloads the active kernel's cell history, with the args `{format:
   * 'csv' | 'json'}`; the default format is csv. Returns the file name, or
   * null when there is nothing to download.
   */
  export const exportCellHistory = 'jupyterlab-vram:export-cell-history';
  /** Forget the active kernel's cell history in this browser. */
  export const clearCellHistory = 'jupyterlab-vram:clear-cell-history';
  /**
   * Runs gc.collect() in the active kernel; the request is queued while it is
   * busy.
   */
  export const collectGarbage = 'jupyterlab-vram:collect-garbage';
  /**
   * Runs torch.cuda.empty_cache() in the active kernel without ever
   * initialising CUDA.
   */
  export const emptyCache = 'jupyterlab-vram:empty-cache';
  /**
   * Runs gc.collect() and then torch.cuda.empty_cache(); the default
   * shortcut is Ctrl Shift Alt M.
   */
  export const freeMemory = 'jupyterlab-vram:free-memory';
  /** Show the Holders tab and list what holds memory in the active kernel. */
  export const inspectMemory = 'jupyterlab-vram:inspect-memory';
  /**
   * Deletes variables and clears hidden references after a confirmation
   * dialog, with the args `{names?: string[], hidden?: string[], fresh?:
   * boolean}`. By default it deletes what is ticked in the Holders tab;
   * `fresh` lists the kernel's holders anew first. Returns the outcome, or
   * null when nothing was deleted.
   */
  export const deleteVariables = 'jupyterlab-vram:delete-variables';
  /**
   * Inserts a snippet of the `snippets` setting as a code cell without
   * running it, with the args `{id}`. Returns `{id, index, code,
   * restartNeeded, namesFound}`, or null when nothing was inserted.
   */
  export const insertSnippet = 'jupyterlab-vram:insert-snippet';
  /**
   * Will it fit? Asks which model, optimizer, loss and sample batch to use
   * and predicts a training step's peak GPU memory and the largest batch
   * size that fits, without allocating on the GPU. With the args `{model,
   * batch, optimizer?, loss?, batchSizes?, margin?, cardBytes?, realStep?, ask:
   * false}`
   * it runs without the dialog (real steps still ask first). Returns the
   * estimate's state, or null when nothing was asked of the kernel.
   */
  export const estimateMemory = 'jupyterlab-vram:estimate-memory';
  /**
   * Inserts the training cell of one remedy of the last estimate, with the
   * args `{variant}` (plain, amp_bf16, checkpointing, grad_accumulation),
   * its batch size and figures filled in. Returns `{index, code}`, or null.
   */
  export const insertEstimateCell = 'jupyterlab-vram:insert-estimate-cell';
  /** Inserts the `no-grad-eval` snippet, a torch.no_grad evaluation loop. */
  export const insertNoGrad = 'jupyterlab-vram:insert-no-grad';
  /**
   * Inserts the `amp` snippet, which uses torch.amp autocast with a GradScaler.
   */
  export const insertAmp = 'jupyterlab-vram:insert-amp';
  /**
   * Inserts the `tf-memory-growth` snippet as the first cell of the notebook.
   */
  export const insertTfMemoryGrowth = 'jupyterlab-vram:insert-tf-memory-growth';
  /**
   * Shuts down a monitored kernel after a confirmation dialog, with the args
   * `{kernelId}`; the Kernels tab's buttons use it. It shuts the kernel down
   * through its notebook's session context, which leaves the notebook on
   * "No Kernel". Returns true when the kernel was shut down.
   */
  export const shutdownKernel = 'jupyterlab-vram:shutdown-kernel';
  /**
   * Turns allocation recording on or off in the active kernel, with the args
   * `{enabled: boolean}`; without them it toggles. Returns the recording
   * state, or null when the kernel could not be asked.
   */
  export const recordAllocations = 'jupyterlab-vram:record-allocations';
  /** Show the Lines tab and list live memory by notebook line. */
  export const showAllocationSites = 'jupyterlab-vram:show-allocation-sites';
  /**
   * Activates a cell and puts the cursor on a line, with the args `{cellId?,
   * executionCount?, line}`. Returns true when the cell was found.
   */
  export const goToCellLine = 'jupyterlab-vram:go-to-cell-line';
  /**
   * Downloads PyTorch's allocator snapshot as a .pickle file, which
   * pytorch.org/memory_viz can open.
   */
  export const exportAllocationSnapshot =
    'jupyterlab-vram:export-allocation-snapshot';
  /**
   * Inserts a cell below the active one that replaces a graph-holding
   * variable of the Holders listing with its values (`.item()` or
   * `.detach()`), with the args `{name}`. Returns the new cell's index, or
   * null.
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
  /**
   * Release what the active kernel started through an engine (a Ray
   * runtime, a Dask client and cluster, a pool, a DataLoader iterator, a vLLM
   * engine) after a confirmation dialog; args `{kind, name, timeoutS?}` as
   * the kernel lists them. Returns the release's state, or null when nothing
   * was asked of the kernel.
   */
  export const releaseEngine = 'jupyterlab-vram:release-engine';
  /**
   * Runs gc.collect() in every worker of the Dask or Ray cluster the active
   * kernel drives, after a confirmation dialog; args `{cluster?}` (the
   * cluster's name; the only one by default). Returns the action's state,
   * or null when nothing was asked of the kernel.
   */
  export const clusterGc = 'jupyterlab-vram:cluster-gc';
  /**
   * Runs torch.cuda.empty_cache() in every worker of the cluster that
   * imported torch, after a confirmation dialog; args and result as
   * cluster-gc.
   */
  export const clusterEmptyCache = 'jupyterlab-vram:cluster-empty-cache';
  /**
   * Restarts every worker of the cluster (their data is lost), after a
   * confirmation dialog, where the engine offers it; args and result as
   * cluster-gc.
   */
  export const clusterRestart = 'jupyterlab-vram:cluster-restart';
  /**
   * Reads every worker's PyTorch allocator (allocated, reserved, peak),
   * without a dialog: it changes nothing. Args and result as cluster-gc.
   */
  export const clusterReadAllocators =
    'jupyterlab-vram:cluster-read-allocators';
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
