/**
 * The right-sidebar panel, in two tabs: "Memory" (state banner, GPU cards,
 * host RAM card and the timeline of the active notebook's kernel) and
 * "Cells" (the per-cell history). It follows the monitor's current model and
 * hands it to its child views; they render on change, when visible.
 */
import { TranslationBundle } from '@jupyterlab/translation';
import { Panel, Widget } from '@lumino/widgets';

import { IKernelMemoryModel, IVramMonitor } from '../tokens';
import { VramSettings } from '../settings';
import { CellHistoryView } from './CellHistoryView';
import { element } from './dom';
import { GpuDeviceList } from './GpuDeviceList';
import { HostMemoryCard } from './HostMemoryCard';
import { MemoryTimeline } from './MemoryTimeline';
import { ModelView } from './ModelView';
import { StateBanner } from './StateBanner';
import { vramIcon } from './icons';

export class MemorySidebar extends Panel {
  /** DOM id of the sidebar (also the id to activate it by). */
  static readonly ID = 'jp-vram-sidebar';

  constructor(options: MemorySidebar.IOptions) {
    super();
    const { monitor, trans } = options;
    this.id = MemorySidebar.ID;
    this.addClass('jp-vram-MemorySidebar');
    this.title.icon = vramIcon;
    this.title.caption = trans ? trans.__('GPU memory') : 'GPU memory';

    const settings = monitor.settings;
    this._tabBar = this._createTabBar();
    this.addWidget(this._tabBar);
    this.banner = new StateBanner(settings);
    this.gpus = new GpuDeviceList(settings);
    this.host = new HostMemoryCard(settings);
    this.timeline = new MemoryTimeline(settings);
    this.cells = new CellHistoryView({
      settings,
      actions: options.cellActions
    });
    this._memoryViews = [this.banner, this.gpus, this.host, this.timeline];
    this._views = [...this._memoryViews, this.cells];
    for (const view of this._views) {
      this.addWidget(view);
    }
    this.showTab('memory');

    this._monitor = monitor;
    monitor.currentChanged.connect(this._onCurrentChanged, this);
    monitor.settingsChanged.connect(this._onSettingsChanged, this);
    this._onCurrentChanged(monitor, monitor.current);
  }

  readonly banner: StateBanner;
  readonly gpus: GpuDeviceList;
  readonly host: HostMemoryCard;
  readonly timeline: MemoryTimeline;
  readonly cells: CellHistoryView;

  /** The tab shown: 'memory' (figures and timeline) or 'cells' (history). */
  get tab(): MemorySidebar.Tab {
    return this._tab;
  }

  showTab(tab: MemorySidebar.Tab): void {
    this._tab = tab;
    for (const view of this._memoryViews) {
      view.setHidden(tab !== 'memory');
    }
    this.cells.setHidden(tab !== 'cells');
    this.toggleClass('jp-vram-MemorySidebar-cellsTab', tab === 'cells');
    for (const [name, button] of this._tabButtons) {
      const selected = name === tab;
      button.setAttribute('aria-selected', String(selected));
      button.tabIndex = selected ? 0 : -1;
      button.classList.toggle('jp-mod-selected', selected);
    }
  }

  dispose(): void {
    this._monitor.currentChanged.disconnect(this._onCurrentChanged, this);
    this._monitor.settingsChanged.disconnect(this._onSettingsChanged, this);
    super.dispose();
  }

  private _onCurrentChanged(
    _: IVramMonitor,
    model: IKernelMemoryModel | null
  ): void {
    for (const view of this._views) {
      view.model = model;
    }
  }

  private _onSettingsChanged(_: IVramMonitor, settings: VramSettings): void {
    for (const view of this._views) {
      view.settings = settings;
    }
  }

  private _createTabBar(): Widget {
    const bar = new Widget();
    bar.addClass('jp-vram-Tabs');
    bar.node.setAttribute('role', 'tablist');
    const tabs: [MemorySidebar.Tab, string, string][] = [
      ['memory', 'Memory', 'memory-tab'],
      ['cells', 'Cells', 'cells-tab']
    ];
    for (const [name, label, role] of tabs) {
      const button = element('button', 'jp-vram-Tab', { role, text: label });
      button.type = 'button';
      button.setAttribute('role', 'tab');
      button.addEventListener('click', () => this.showTab(name));
      this._tabButtons.set(name, button);
      bar.node.appendChild(button);
    }
    return bar;
  }

  private _monitor: IVramMonitor;
  private _views: ModelView[];
  private _memoryViews: ModelView[];
  private _tabBar: Widget;
  private _tabButtons = new Map<MemorySidebar.Tab, HTMLButtonElement>();
  private _tab: MemorySidebar.Tab = 'memory';
}

export namespace MemorySidebar {
  export type Tab = 'memory' | 'cells';

  export interface IOptions {
    monitor: IVramMonitor;
    trans?: TranslationBundle;
    /** What a click in the cell history does (go to cell, export, clear). */
    cellActions?: CellHistoryView.IActions;
  }
}
