/**
 * Registers every feature's commands over one monitor and sidebar, as the
 * feature plugins do each for their own, so that a command spec can drive
 * commands of several features together (insert, then run, then clean up).
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';

import type { MemoryMonitor } from '../monitor/MemoryMonitor';
import type { SetSetting } from '../settings/settings';
import type { IVramSidebar } from '../sidebar/IVramSidebar';
import { registerSidebarCommands } from '../sidebar/sidebarCommands';
import { PALETTE_CATEGORY, CommandIDs } from '../ui/commandIds';
import { notifyInJupyterLab, type Notify } from '../ui/notify';
import { registerAllocationCommands } from '../features/allocations/allocationCommands';
import {
  activeFirst,
  ILinePanel
} from '../features/allocations/allocationCommandOptions';
import { currentAllocations } from '../features/allocations/allocationRecordingPart';
import { registerCellCommands } from '../features/cells/cellCommands';
import type { ClearHistoryRequest } from '../features/cells/ClearHistoryDialog';
import { currentActions } from '../features/cleanup/cleanupActionsPart';
import { registerCleanupCommands } from '../features/cleanup/cleanupCommands';
import type { DeletePlan } from '../features/cleanup/deletePlan';
import { registerGraphFixCommand } from '../features/cleanup/graphFixCommand';
import { registerKernelCommands } from '../features/kernels/kernelCommands';
import type { ShutdownKernelRequest } from '../features/kernels/ShutdownKernelDialog';
import { registerOverviewCommands } from '../features/overview/overviewCommands';
import {
  ISnippetPanel,
  registerSnippetCommands
} from '../features/snippets/snippetCommands';
import type { SnippetLibrary } from '../features/snippets/SnippetLibrary';

/** What the commands act on, and the dialogs a test answers directly. */
export interface IRegisterCommandsOptions {
  app: JupyterFrontEnd;
  monitor: MemoryMonitor;
  trans: TranslationBundle;
  palette: ICommandPalette | null;
  /** The sidebar, used to show one of its tabs. */
  sidebar: Pick<IVramSidebar, 'showTab'>;
  /** Changes one setting, and persists it when a setting registry exists. */
  setSetting: SetSetting;
  /** Returns the path of the active notebook, for export file names. */
  currentNotebookPath: () => string | null;
  /**
   * How to notify; it defaults to JupyterLab notifications, and tests pass a
   * recorder.
   */
  notify?: Notify;
  /**
   * The delete confirmation; it defaults to the dialog, and tests answer
   * directly.
   */
  confirmDelete?: (plan: DeletePlan) => Promise<boolean>;
  /** The snippets; defaults to the default list. */
  snippets?: SnippetLibrary;
  /** The notebook panel the snippet commands insert into. */
  currentNotebook?: () => ISnippetPanel | null;
  /**
   * The shutdown confirmation; it defaults to the dialog, and tests answer
   * directly.
   */
  confirmShutdown?: (request: ShutdownKernelRequest) => Promise<boolean>;
  /**
   * The clear-history confirmation; it defaults to the dialog, and tests answer
   * directly.
   */
  confirmClear?: (request: ClearHistoryRequest) => Promise<boolean>;
}

/** Registers the commands of every feature, and their palette items. */
export function registerCommands(options: IRegisterCommandsOptions): void {
  const { app, monitor, trans, palette, sidebar, setSetting } = options;
  const category = trans.__(PALETTE_CATEGORY);
  const notify = options.notify ?? notifyInJupyterLab;
  const currentNotebook = options.currentNotebook ?? (() => null);

  registerSidebarCommands({ app, trans, sidebar });
  palette?.addItem({ command: CommandIDs.openSidebar, category });
  registerOverviewCommands({
    app,
    monitor,
    trans,
    palette,
    category,
    setSetting
  });
  registerCellCommands({
    app,
    monitor,
    trans,
    palette,
    category,
    sidebar,
    setSetting,
    currentNotebookPath: options.currentNotebookPath,
    confirmClear: options.confirmClear
  });
  registerCleanupCommands({
    app,
    monitor,
    trans,
    sidebar,
    palette,
    category,
    notify,
    confirmDelete: options.confirmDelete
  });
  registerGraphFixCommand({
    app,
    trans,
    actions: () => currentActions(monitor),
    notebook: currentNotebook
  });
  registerKernelCommands({
    app,
    monitor,
    trans,
    notify,
    confirmShutdown: options.confirmShutdown
  });
  registerSnippetCommands({
    app,
    monitor,
    trans,
    palette,
    category,
    notify,
    snippets: options.snippets,
    currentNotebook
  });
  registerAllocationCommands({
    app,
    trans,
    palette,
    category,
    sidebar,
    monitor,
    current: () => currentAllocations(monitor),
    panels: () => activeFirst(monitor, currentNotebook() as ILinePanel | null),
    currentNotebookPath: options.currentNotebookPath,
    records: () => monitor.current?.cells.entries.map(e => e.record) ?? [],
    notify
  });
}
