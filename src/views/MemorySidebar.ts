/**
 * The right-sidebar panel: state banner, GPU cards, host RAM card and the
 * timeline of the active notebook's kernel. It follows the monitor's current
 * model and hands it to its child views; they render on change, when visible.
 */
import { TranslationBundle } from '@jupyterlab/translation';
import { Panel } from '@lumino/widgets';

import { IKernelMemoryModel, IVramMonitor } from '../tokens';
import { VramSettings } from '../settings';
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
    this.banner = new StateBanner(settings);
    this.gpus = new GpuDeviceList(settings);
    this.host = new HostMemoryCard(settings);
    this.timeline = new MemoryTimeline(settings);
    this._views = [this.banner, this.gpus, this.host, this.timeline];
    for (const view of this._views) {
      this.addWidget(view);
    }

    this._monitor = monitor;
    monitor.currentChanged.connect(this._onCurrentChanged, this);
    monitor.settingsChanged.connect(this._onSettingsChanged, this);
    this._onCurrentChanged(monitor, monitor.current);
  }

  readonly banner: StateBanner;
  readonly gpus: GpuDeviceList;
  readonly host: HostMemoryCard;
  readonly timeline: MemoryTimeline;

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

  private _monitor: IVramMonitor;
  private _views: ModelView[];
}

export namespace MemorySidebar {
  export interface IOptions {
    monitor: IVramMonitor;
    trans?: TranslationBundle;
  }
}
