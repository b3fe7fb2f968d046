/**
 * Host RAM: what the kernel process holds (RSS) against the RAM it may use
 * (its container's limit when one is set, else the machine's total) and what
 * is still available under it.
 */
import { formatPercent } from '../format';
import { hostFigures } from '../model/hostFigures';
import { ModelChange } from '../tokens';
import {
  element,
  figureRow,
  setBytes,
  setHidden,
  setSegment,
  setText
} from './dom';
import { ModelView } from './ModelView';

const RELEVANT: ReadonlySet<ModelChange> = new Set<ModelChange>([
  'sample',
  'history'
]);

export class HostMemoryCard extends ModelView {
  constructor(settings: ConstructorParameters<typeof ModelView>[0]) {
    super(settings);
    this.addClass('jp-vram-Card');
    this.addClass('jp-vram-HostMemoryCard');
    this.node.dataset.vramRole = 'host-card';
    const header = element('div', 'jp-vram-Card-header');
    header.append(
      element('span', 'jp-vram-Card-title', { text: 'Host RAM' }),
      (this._share = element('span', 'jp-vram-Card-subtitle'))
    );
    const bar = element('div', 'jp-vram-Bar');
    this._rssBar = element('div', 'jp-vram-Bar-segment jp-vram-Bar-rss');
    this._othersBar = element('div', 'jp-vram-Bar-segment jp-vram-Bar-others');
    bar.append(this._rssBar, this._othersBar);
    bar.title = 'This kernel (RSS), other use, available';
    const figures = element('div', 'jp-vram-Figures');
    this._rss = figureRow(
      figures,
      'Kernel (RSS)',
      'host-rss',
      'Resident memory of the kernel process'
    );
    this._available = figureRow(figures, 'Available', 'host-available');
    this._limit = figureRow(
      figures,
      'Container limit',
      'host-container-limit',
      "The kernel's cgroup memory limit: the kernel is killed there"
    );
    this._total = figureRow(figures, 'Total', 'host-total');
    this.node.append(header, bar, figures);
  }

  protected readonly relevantChanges = RELEVANT;

  protected render(): void {
    const f = hostFigures(this.model?.latest?.host);
    const units = this.settings.units;
    setBytes(this._rss, f.rss, units);
    setBytes(this._available, f.available, units);
    setBytes(this._limit, f.container ? f.limit : null, units);
    setHidden(this._limit.parentElement!, !f.container);
    setBytes(this._total, f.machineTotal, units);
    setText(
      this._share,
      f.rss !== null && f.limit !== null
        ? `kernel ${formatPercent(f.rss, f.limit)} of ${f.container ? 'container limit' : 'total'}`
        : ''
    );
    setSegment(this._rssBar, f.rss, f.limit);
    setSegment(this._othersBar, f.others, f.limit);
    // Only a container's limit warns: the machine's RAM is shared by all.
    const warning =
      f.container &&
      f.usedPercent !== null &&
      f.usedPercent >= this.settings.warningThresholdPercent;
    this.node.classList.toggle('jp-vram-warning', warning);
    this.node.dataset.vramLevel = warning ? 'warning' : 'normal';
  }

  private _share: HTMLElement;
  private _rssBar: HTMLElement;
  private _othersBar: HTMLElement;
  private _rss: HTMLElement;
  private _available: HTMLElement;
  private _limit: HTMLElement;
  private _total: HTMLElement;
}
