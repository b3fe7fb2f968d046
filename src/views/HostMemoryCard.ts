/**
 * Host RAM: what the kernel process holds (RSS) against the machine's total
 * and what is still available.
 */
import { formatPercent } from '../format';
import { ModelChange } from '../tokens';
import { element, figureRow, setBytes, setSegment, setText } from './dom';
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
    this._total = figureRow(figures, 'Total', 'host-total');
    this.node.append(header, bar, figures);
  }

  protected readonly relevantChanges = RELEVANT;

  protected render(): void {
    const host = this.model?.latest?.host ?? null;
    const units = this.settings.units;
    const rss = host?.rss_bytes ?? null;
    const total = host?.total_bytes ?? null;
    const available = host?.available_bytes ?? null;
    setBytes(this._rss, rss, units);
    setBytes(this._available, available, units);
    setBytes(this._total, total, units);
    setText(
      this._share,
      rss !== null && total !== null
        ? `kernel ${formatPercent(rss, total)} of total`
        : ''
    );
    setSegment(this._rssBar, rss, total);
    const othersUsed =
      total !== null && available !== null && rss !== null
        ? Math.max(0, total - available - rss)
        : null;
    setSegment(this._othersBar, othersUsed, total);
  }

  private _share: HTMLElement;
  private _rssBar: HTMLElement;
  private _othersBar: HTMLElement;
  private _rss: HTMLElement;
  private _available: HTMLElement;
  private _total: HTMLElement;
}
