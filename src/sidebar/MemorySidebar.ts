/**
 * The memory panel of the right sidebar, in tabs: "Memory" (state banner,
 * cleanup bar, the out-of-memory diagnosis after a cell died of OOM, GPU
 * cards, host RAM card and the timeline of the active notebook's kernel),
 * "Cells" (the per-cell history), "Holders" (what holds memory, to delete)
 * and "Kernels" (every monitored kernel with its RAM and GPU use, to shut
 * down, and the other GPU processes; it follows all the monitored sessions,
 * not just the current one). It follows the monitor's current model and
 * hands it (and its cleanup actions) to its child views; they render on
 * change, when visible. The cleanup bar, with the result of the latest
 * cleanup, shows on the Memory and Holders tabs; the Memory tab ends with
 * "Save memory" (the snippets).
 *
 * SidebarHost holds it in the sidebar and loads this module when the tab is
 * first shown.
 */
import { DOMUtils } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { Panel, Widget } from '@lumino/widgets';

// The panel's styles travel with it (see style/base.css for what every page has).
import '../../style/sidebar.css';

import { IKernelMemoryModel } from '../model/IKernelMemoryModel';
import type { IVramMonitor } from '../monitor/IVramMonitor';
import { VramSettings } from '../settings/settings';
import { CommandIDs, ExecuteCommand } from '../ui/commandIds';
import { ConsoleCells, IConsoleSource } from '../model/ConsoleCells';
import { IKernelSessionSource } from '../features/kernels/KernelsOverview';
import { MemoryActions } from '../features/cleanup/MemoryActions';
import { deriveNotesWith } from '../model/KernelVisibilityNotes';
import { deriveVisibilityNotes } from '../model/visibilityNotes';
import { SnippetLibrary } from '../features/snippets/SnippetLibrary';
import { AllocationRecorder } from '../features/allocations/AllocationRecorder';
import { GRAPH_FIX_SNIPPET_ID } from '../features/cleanup/graphFix';
import { AllocationSitesView } from '../features/allocations/AllocationSitesView';
import { CellHistoryView } from '../features/cells/CellHistoryView';
import { HoldersView } from '../features/cleanup/HoldersView';
import { KernelsView } from '../features/kernels/KernelsView';
import { MemoryActionsBar } from '../features/cleanup/MemoryActionsBar';
import { button } from '../ui/dom';
import { GpuDeviceList } from '../features/overview/GpuDeviceList';
import { HostMemoryCard } from '../features/overview/HostMemoryCard';
import { MemoryTimeline } from '../features/overview/MemoryTimeline';
import { LazyView } from '../ui/LazyView';
import { ModelView } from '../ui/ModelView';
import { OomDiagnosisView } from '../features/oom/OomDiagnosisView';
import { KernelDeathView } from '../features/kernelDeath/KernelDeathView';
import { SnippetSection } from '../features/snippets/SnippetSection';
import { StateBanner } from '../features/overview/StateBanner';
import type { SidebarTab } from './sidebarTabs';

export class MemorySidebar extends Panel {
  constructor(options: MemorySidebar.IOptions) {
    super();
    const { monitor } = options;
    this.addClass('jp-vram-MemorySidebar');
    // The notes' wording came with this chunk: the models derive them from now on.
    deriveNotesWith(deriveVisibilityNotes);

    const settings = monitor.settings;
    this._tabBar = this._createTabBar();
    this.addWidget(this._tabBar);
    this.banner = new StateBanner(settings);
    const execute = options.execute ?? (() => undefined);
    this._actionsFor = options.actionsFor ?? (() => null);
    this.actionsBar = new MemoryActionsBar({
      buttons: CLEANUP_BUTTONS,
      execute
    });
    this.holders = new HoldersView({
      settings,
      onDelete: () => execute(CommandIDs.deleteVariables),
      onFixGraph: entry =>
        void execute(CommandIDs.insertGraphFix, { name: entry.name }),
      onShowGraphPattern: () =>
        void execute(CommandIDs.insertSnippet, { id: GRAPH_FIX_SNIPPET_ID })
    });
    this.oom = new OomDiagnosisView({
      settings,
      run: async action => {
        // In order: "insert the allocator cell, then restart" must not race.
        for (const step of action.steps) {
          await execute(step.command, step.args);
        }
      }
    });
    this._allocationsFor = options.allocationsFor ?? (() => null);
    this._consoleCells = options.consoles
      ? new ConsoleCells(options.consoles)
      : null;
    this.sites = new AllocationSitesView({
      settings,
      consoleCells: this._consoleCells,
      actions: options.siteActions ?? {
        setRecording: enabled =>
          void execute(CommandIDs.recordAllocations, { enabled }),
        jumpTo: row =>
          void execute(CommandIDs.goToCellLine, {
            cellId: row.cellId,
            executionCount: row.executionCount,
            line: row.line
          }),
        exportGpuSnapshot: () =>
          void execute(CommandIDs.exportAllocationSnapshot),
        exportHostCsv: () => void execute(CommandIDs.exportAllocationSites)
      }
    });
    this.kernels = new KernelsView({
      source: options.kernelSessions ?? null,
      settings,
      execute
    });
    this.death = new KernelDeathView(settings);
    this.gpus = new GpuDeviceList(settings);
    this.host = new HostMemoryCard(settings);
    this.timeline = new MemoryTimeline(
      settings,
      minutes => void execute(CommandIDs.setTimelineWindow, { minutes })
    );
    this.cells = new CellHistoryView({
      settings,
      actions: options.cellActions,
      consoleCells: this._consoleCells
    });
    this.snippets = new SnippetSection({
      library: options.snippets ?? SnippetLibrary.withDefaults(),
      execute
    });
    this._memoryViews = [
      this.banner,
      this.death,
      this.oom,
      this.gpus,
      this.host,
      this.timeline
    ];
    this._views = [...this._memoryViews, this.cells];
    this._settingsViews = [
      ...this._views,
      this.holders,
      this.sites,
      this.kernels
    ];
    this.addWidget(this.banner);
    this.addWidget(this.actionsBar);
    for (const view of this._memoryViews.slice(1)) {
      this.addWidget(view);
    }
    this.addWidget(this.snippets);
    this.addWidget(this.cells);
    this.addWidget(this.holders);
    this.addWidget(this.sites);
    this.addWidget(this.kernels);
    this._linkTabsToPanels({
      memory: [...this._memoryViews, this.snippets],
      cells: [this.cells],
      holders: [this.holders],
      lines: [this.sites],
      kernels: [this.kernels]
    });
    this.showTab('memory');

    this._monitor = monitor;
    monitor.currentChanged.connect(this._onCurrentChanged, this);
    monitor.settingsChanged.connect(this._onSettingsChanged, this);
    this._onCurrentChanged(monitor, monitor.current);
  }

  readonly banner: StateBanner;
  /** The out-of-memory assistant (shown after a cell died of OOM). */
  readonly death: KernelDeathView;
  readonly oom: OomDiagnosisView;
  readonly gpus: GpuDeviceList;
  readonly host: HostMemoryCard;
  readonly timeline: MemoryTimeline;
  readonly cells: CellHistoryView;
  readonly actionsBar: MemoryActionsBar;
  readonly holders: HoldersView;
  /** The Lines tab: live memory by the notebook line that allocated it. */
  readonly sites: AllocationSitesView;
  /** The Kernels tab: every monitored kernel, and other GPU processes. */
  readonly kernels: KernelsView;
  /** "Save memory": the snippet buttons and the restart warning. */
  readonly snippets: SnippetSection;

  /**
   * The tab shown: 'memory' (figures and timeline), 'cells' (history),
   * 'holders' (what holds memory) or 'kernels' (every monitored kernel).
   */
  get tab(): MemorySidebar.Tab {
    return this._tab;
  }

  showTab(tab: MemorySidebar.Tab): void {
    this._tab = tab;
    for (const view of this._memoryViews) {
      view.setHidden(tab !== 'memory');
    }
    this.snippets.setHidden(tab !== 'memory');
    this.cells.setHidden(tab !== 'cells');
    this.holders.setHidden(tab !== 'holders');
    this.sites.setHidden(tab !== 'lines');
    this.kernels.setHidden(tab !== 'kernels');
    // The cleanup bar acts on the current kernel: not on the Kernels tab.
    this.actionsBar.setHidden(
      tab === 'cells' || tab === 'kernels' || tab === 'lines'
    );
    this.toggleClass('jp-vram-MemorySidebar-cellsTab', tab === 'cells');
    for (const [name, tabButton] of this._tabButtons) {
      const selected = name === tab;
      tabButton.setAttribute('aria-selected', String(selected));
      tabButton.tabIndex = selected ? 0 : -1;
      tabButton.classList.toggle('jp-mod-selected', selected);
    }
  }

  dispose(): void {
    this._monitor.currentChanged.disconnect(this._onCurrentChanged, this);
    this._monitor.settingsChanged.disconnect(this._onSettingsChanged, this);
    this._consoleCells?.dispose();
    super.dispose();
  }

  private _onCurrentChanged(
    _: IVramMonitor,
    model: IKernelMemoryModel | null
  ): void {
    for (const view of this._views) {
      view.model = model;
    }
    this.snippets.model = model;
    const actions = this._actionsFor(model);
    // Another notebook's result may have been said in units changed since.
    void actions?.redescribe();
    this.actionsBar.actions = actions;
    this.holders.actions = actions;
    this.oom.actions = actions;
    this.sites.model = model;
    this.sites.recorder = this._allocationsFor(model);
    this.cells.recorder = this.sites.recorder;
    this.oom.recorder = this.sites.recorder;
  }

  private _onSettingsChanged(_: IVramMonitor, settings: VramSettings): void {
    for (const view of this._settingsViews) {
      view.settings = settings;
    }
    // The cleanup result is text made when it came: say it in the new units.
    void this.actionsBar.actions?.redescribe();
  }

  private _createTabBar(): Widget {
    const bar = new Widget();
    bar.addClass('jp-vram-Tabs');
    bar.node.setAttribute('role', 'tablist');
    const tabs: [MemorySidebar.Tab, string, string][] = [
      ['memory', 'Memory', 'memory-tab'],
      ['cells', 'Cells', 'cells-tab'],
      ['holders', 'Holders', 'holders-tab'],
      ['lines', 'Lines', 'lines-tab'],
      ['kernels', 'Kernels', 'kernels-tab']
    ];
    for (const [name, label, role] of tabs) {
      const tab = button('jp-vram-Tab', { role, text: label }, () =>
        this.showTab(name)
      );
      tab.setAttribute('role', 'tab');
      this._tabButtons.set(name, tab);
      bar.node.appendChild(tab);
    }
    bar.node.addEventListener('keydown', event => this._onTabKey(event));
    return bar;
  }

  /**
   * The WAI-ARIA tabs pattern: with one tab in the Tab order (the selected
   * one), the arrow keys, Home and End move between tabs, showing each.
   */
  private _onTabKey(event: KeyboardEvent): void {
    const names = Array.from(this._tabButtons.keys());
    const at = names.findIndex(
      name => this._tabButtons.get(name) === event.target
    );
    if (at < 0) {
      return;
    }
    let next: number;
    switch (event.key) {
      case 'ArrowRight':
        next = (at + 1) % names.length;
        break;
      case 'ArrowLeft':
        next = (at - 1 + names.length) % names.length;
        break;
      case 'Home':
        next = 0;
        break;
      case 'End':
        next = names.length - 1;
        break;
      default:
        return;
    }
    event.preventDefault();
    this.showTab(names[next]);
    this._tabButtons.get(names[next])?.focus();
  }

  /**
   * Tell assistive technology which views each tab shows (aria-controls),
   * and label each view by its tab. The Memory tab shows several views side
   * by side in this panel (its styles lay out the panel's children): each is
   * a tab panel labelled by its tab, but for one with a role and name of
   * its own (the death notice's live region, the out-of-memory diagnosis):
   * taking those would silence the one and rename the other.
   */
  private _linkTabsToPanels(panels: Record<MemorySidebar.Tab, Widget[]>): void {
    for (const [name, tab] of this._tabButtons) {
      tab.id = DOMUtils.createDomID();
      for (const panel of panels[name]) {
        panel.id = DOMUtils.createDomID();
        if (!panel.node.hasAttribute('role')) {
          panel.node.setAttribute('role', 'tabpanel');
          panel.node.setAttribute('aria-labelledby', tab.id);
        }
      }
      tab.setAttribute(
        'aria-controls',
        panels[name].map(panel => panel.id).join(' ')
      );
    }
  }

  private _monitor: IVramMonitor;
  private _consoleCells: ConsoleCells | null;
  private _views: ModelView[];
  /** Every view that shows figures in the user's units: all of them get new settings. */
  private _settingsViews: LazyView[];
  private _memoryViews: ModelView[];
  private _tabBar: Widget;
  private _tabButtons = new Map<MemorySidebar.Tab, HTMLButtonElement>();
  private _tab: MemorySidebar.Tab = 'memory';
  private _actionsFor: (
    model: IKernelMemoryModel | null
  ) => MemoryActions | null;
  private _allocationsFor: (
    model: IKernelMemoryModel | null
  ) => AllocationRecorder | null;
}

/** The cleanup bar's buttons (each runs its command). */
const CLEANUP_BUTTONS: MemoryActionsBar.IButton[] = [
  {
    command: CommandIDs.collectGarbage,
    label: 'gc',
    caption: 'Run gc.collect() in the kernel (queued while it is busy)',
    role: 'action-collect-garbage'
  },
  {
    command: CommandIDs.emptyCache,
    label: 'Empty cache',
    caption:
      "Run torch.cuda.empty_cache(): give PyTorch's cached GPU memory back to the device",
    role: 'action-empty-cache'
  },
  {
    command: CommandIDs.freeMemory,
    label: 'Free memory',
    caption: 'gc.collect() then torch.cuda.empty_cache()',
    role: 'action-free-memory'
  },
  {
    command: CommandIDs.inspectMemory,
    label: 'What holds memory?',
    caption: 'List the variables and hidden references that hold memory',
    role: 'action-inspect'
  }
];

export namespace MemorySidebar {
  export type Tab = SidebarTab;

  export interface IOptions {
    monitor: IVramMonitor;
    /** Translates the sidebar tab's caption (SidebarHost). */
    trans?: TranslationBundle;
    /** What a click in the cell history does (go to cell, export, clear). */
    cellActions?: CellHistoryView.IActions;
    /** The cleanup actions of a kernel's model (none: buttons disabled). */
    actionsFor?: (model: IKernelMemoryModel | null) => MemoryActions | null;
    /** Allocation recording of a kernel's model (none: the Lines tab is disabled). */
    allocationsFor?: (
      model: IKernelMemoryModel | null
    ) => AllocationRecorder | null;
    /** What the Lines tab's toggle, rows and export buttons do (default: the commands). */
    siteActions?: AllocationSitesView.IActions;
    /** Run a command by id (the cleanup and snippet buttons). */
    execute?: ExecuteCommand;
    /** The snippets of the "Save memory" section (default: the default list). */
    snippets?: SnippetLibrary;
    /** The sessions the Kernels tab lists (the MemoryMonitor); none: empty. */
    kernelSessions?: IKernelSessionSource;
    /** The page's code consoles (IConsoleTracker): their runs are labelled as such. */
    consoles?: IConsoleSource | null;
  }
}
