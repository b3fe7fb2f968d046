/**
 * The memory panel as the plugins make it, for the specs: every feature's
 * tab and sections registered through the same functions the plugins call,
 * on a monitor the spec gives, with every tab loaded and the views at hand.
 */
import { Widget } from '@lumino/widgets';

import type { AllocationRecorder } from '../features/allocations/AllocationRecorder';
import type { AllocationSitesView } from '../features/allocations/AllocationSitesView';
import { addLinesToSidebar } from '../features/allocations/linesSidebar';
import type { CellHistoryView } from '../features/cells/CellHistoryView';
import { addCellsToSidebar } from '../features/cells/cellsSidebar';
import { addCleanupToSidebar } from '../features/cleanup/cleanupSidebar';
import type { HoldersView } from '../features/cleanup/HoldersView';
import type { MemoryActions } from '../features/cleanup/MemoryActions';
import type { MemoryActionsBar } from '../features/cleanup/MemoryActionsBar';
import { addKernelDeathToSidebar } from '../features/kernelDeath/kernelDeathSidebar';
import type { KernelDeathView } from '../features/kernelDeath/KernelDeathView';
import type { IKernelSessionSource } from '../features/kernels/KernelsOverview';
import { addKernelsToSidebar } from '../features/kernels/kernelsSidebar';
import type { KernelsView } from '../features/kernels/KernelsView';
import { addOomToSidebar } from '../features/oom/oomSidebar';
import type { OomDiagnosisView } from '../features/oom/OomDiagnosisView';
import type { GpuDeviceList } from '../features/overview/GpuDeviceList';
import type { HostMemoryCard } from '../features/overview/HostMemoryCard';
import type { MemoryTimeline } from '../features/overview/MemoryTimeline';
import { addOverviewToSidebar } from '../features/overview/overviewSidebar';
import type { StateBanner } from '../features/overview/StateBanner';
import type { SnippetSection } from '../features/snippets/SnippetSection';
import { SnippetLibrary } from '../features/snippets/SnippetLibrary';
import { addSnippetsToSidebar } from '../features/snippets/snippetsSidebar';
import type { IConsoleSource } from '../model/ConsoleCells';
import type { IKernelMemoryModel } from '../model/IKernelMemoryModel';
import type { IVramMonitor } from '../monitor/IVramMonitor';
import type { IVramSidebar } from '../sidebar/IVramSidebar';
import { MemorySidebar } from '../sidebar/MemorySidebar';
import { SidebarRegistry } from '../sidebar/SidebarRegistry';
import type { ExecuteCommand } from '../ui/commandIds';

/** What the spec gives. What it leaves out does nothing or is absent. */
export interface IFullSidebarOptions {
  monitor: IVramMonitor;
  execute?: ExecuteCommand;
  actionsFor?: (model: IKernelMemoryModel | null) => MemoryActions | null;
  allocationsFor?: (
    model: IKernelMemoryModel | null
  ) => AllocationRecorder | null;
  cellActions?: CellHistoryView.IActions;
  siteActions?: AllocationSitesView.IActions;
  snippets?: SnippetLibrary;
  kernelSessions?: IKernelSessionSource;
  consoles?: IConsoleSource | null;
  /**
   * Whether to attach the panel to the document; most specs look at rendered
   * nodes.
   */
  attach?: boolean;
}

/** The panel's views by name, as the specs know them. */
export interface IFullSidebarViews {
  banner: StateBanner;
  actionsBar: MemoryActionsBar;
  death: KernelDeathView;
  oom: OomDiagnosisView;
  gpus: GpuDeviceList;
  host: HostMemoryCard;
  timeline: MemoryTimeline;
  snippets: SnippetSection;
  cells: CellHistoryView;
  holders: HoldersView;
  sites: AllocationSitesView;
  kernels: KernelsView;
}

/** The memory panel, with its views by name. */
export type FullSidebar = MemorySidebar & IFullSidebarViews;

/** The ids of the parts behind each view name. */
const PARTS: Record<keyof IFullSidebarViews, string> = {
  banner: 'overview.banner',
  actionsBar: 'cleanup.bar',
  death: 'kernelDeath.notice',
  oom: 'oom.diagnosis',
  gpus: 'overview.gpus',
  host: 'overview.host',
  timeline: 'overview.timeline',
  snippets: 'snippets.saveMemory',
  cells: 'cells',
  holders: 'holders',
  sites: 'lines',
  kernels: 'kernels'
};

/**
 * Registers every feature's part, makes the panel and loads every tab,
 * leaving the Memory tab shown.
 */
export async function loadFullSidebar(
  options: IFullSidebarOptions
): Promise<FullSidebar> {
  const registry = fullRegistry(options);
  const sidebar = new MemorySidebar({ registry });
  if (options.attach !== false) {
    Widget.attach(sidebar, document.body);
  }
  for (const tab of registry.tabs) {
    await sidebar.whenLoaded(tab.id);
  }
  const views = {} as Record<string, Widget>;
  for (const [name, id] of Object.entries(PARTS)) {
    const widget = sidebar.widgetOf(id);
    if (!widget) {
      throw new Error(`the sidebar part ${id} did not load`);
    }
    views[name] = widget;
  }
  return Object.assign(sidebar, views as unknown as IFullSidebarViews);
}

/** A registry with every feature's tab and sections, as the plugins add them. */
export function fullRegistry(options: IFullSidebarOptions): SidebarRegistry {
  const registry = new SidebarRegistry();
  addEveryFeature(registry, options);
  return registry;
}

/** Adds every feature's tab and sections to `registry`, as the plugins do. */
export function addEveryFeature(
  registry: IVramSidebar,
  options: IFullSidebarOptions
): void {
  const { monitor } = options;
  const execute = options.execute ?? (() => undefined);
  const actionsFor = options.actionsFor ?? (() => null);
  const recorderFor = options.allocationsFor ?? (() => null);
  const consoles = options.consoles ?? null;
  addOverviewToSidebar(registry, { monitor, execute });
  addCleanupToSidebar(registry, { monitor, execute, actionsFor });
  addKernelDeathToSidebar(registry, monitor);
  addOomToSidebar(registry, { monitor, execute, actionsFor, recorderFor });
  addSnippetsToSidebar(registry, {
    monitor,
    execute,
    library: options.snippets ?? SnippetLibrary.withDefaults()
  });
  addCellsToSidebar(registry, {
    monitor,
    actions: options.cellActions ?? {},
    consoles,
    recorderFor
  });
  addLinesToSidebar(registry, {
    monitor,
    execute,
    actions: options.siteActions,
    consoles,
    recorderFor
  });
  addKernelsToSidebar(registry, {
    monitor,
    sessions: options.kernelSessions ?? null,
    execute
  });
}
