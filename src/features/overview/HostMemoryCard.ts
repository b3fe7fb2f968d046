/**
 * The card of the host's RAM and swap. For RAM it shows what the kernel
 * process holds (its RSS) against the RAM it may use, which is its
 * container's limit when one is set and the machine's total otherwise, and
 * what is still available under that limit; a "Kernel + N processes" row
 * adds the processes that the kernel started. For swap it shows how much of
 * the kernel is swapped out, when any of it is, and how much of the swap
 * that its pages may go to is in use.
 */
import {
  ByteUnits,
  formatBytes,
  formatBytesOf,
  formatPercent
} from '../../text/format';
import { hostFigures } from '../../model/hostFigures';
import { SwapFigures, swapFigures } from '../../model/swapFigures';
import { ModelChange } from '../../model/IKernelMemoryModel';
import {
  element,
  figureRow,
  setBytes,
  setBytesData,
  setHidden,
  setSegment,
  setText,
  setTitle
} from '../../ui/dom';
import { ModelView } from '../../ui/ModelView';
import { trans } from '../../text/translation';
import { hostTreeFigures, TreeFigureRow } from './processTreeRows';

const RELEVANT: ReadonlySet<ModelChange> = new Set<ModelChange>([
  'sample',
  'history'
]);

/**
 * The card that shows the kernel's host RAM and swap against what it may use.
 */
export class HostMemoryCard extends ModelView {
  constructor(settings: ConstructorParameters<typeof ModelView>[0]) {
    super(settings);
    this.addClass('jp-vram-Card');
    this.addClass('jp-vram-HostMemoryCard');
    this.node.dataset.vramRole = 'host-card';
    const header = element('div', 'jp-vram-Card-header');
    header.append(
      element('span', 'jp-vram-Card-title', { text: trans.__('Host RAM') }),
      (this._share = element('span', 'jp-vram-Card-subtitle'))
    );
    const bar = element('div', 'jp-vram-Bar');
    this._rssBar = element('div', 'jp-vram-Bar-segment jp-vram-Bar-rss');
    this._othersBar = element('div', 'jp-vram-Bar-segment jp-vram-Bar-others');
    bar.append(this._rssBar, this._othersBar);
    bar.title = trans.__('This kernel (RSS), other use, available');
    const figures = element('div', 'jp-vram-Figures');
    this._rss = figureRow(
      figures,
      trans.__('Kernel (RSS)'),
      'host-rss',
      trans.__('Resident memory of the kernel process')
    );
    this._tree = new TreeFigureRow(this._rss.parentElement!, 'host-tree');
    this._available = figureRow(
      figures,
      trans.__('Available'),
      'host-available'
    );
    this._limit = figureRow(
      figures,
      trans.__('Container limit'),
      'host-container-limit'
    );
    this._total = figureRow(figures, trans.__('Total'), 'host-total');
    this._swapped = figureRow(
      figures,
      trans.__('Swapped out'),
      'host-swapped',
      trans.__(
        "The kernel's own memory in swap (VmSwap): it still holds it, but the RSS leaves it out"
      )
    );
    this._swap = figureRow(figures, trans.__('Swap'), 'host-swap');
    this._swapNote = element('div', 'jp-vram-Note', {
      role: 'host-swap-note',
      text: trans.__(
        'Cells that touch swapped-out memory run slowly: it is read back from swap first.'
      )
    });
    this.node.append(header, bar, figures, this._swapNote);
  }

  protected readonly relevantChanges = RELEVANT;

  protected render(): void {
    const f = hostFigures(this.model?.latest?.host);
    const units = this.settings.units;
    setBytes(this._rss, f.rss, units);
    this._tree.show(hostTreeFigures(this.model?.latest?.processes), units);
    setBytes(this._available, f.available, units);
    setBytes(this._limit, f.container ? f.limit : null, units);
    setHidden(this._limit.parentElement!, !f.container);
    setBytes(this._total, f.machineTotal, units);
    const swap = swapFigures(this.model?.latest?.host);
    setTitle(this._limit.parentElement!, limitTitle(swap, units));
    this._renderSwap(swap, units);
    setText(
      this._share,
      f.rss !== null && f.limit !== null
        ? f.container
          ? trans.__(
              'kernel %1 of container limit',
              formatPercent(f.rss, f.limit)
            )
          : trans.__('kernel %1 of total', formatPercent(f.rss, f.limit))
        : ''
    );
    setSegment(this._rssBar, f.rss, f.limit);
    setSegment(this._othersBar, f.others, f.limit);
    // Only a container's limit warns, because the kernel is killed there; the
    // machine's RAM is shared by every process on it, so its use says little
    // about this kernel.
    const warning =
      f.container &&
      f.usedPercent !== null &&
      f.usedPercent >= this.settings.warningThresholdPercent;
    this.node.classList.toggle('jp-vram-warning', warning);
    this.node.dataset.vramLevel = warning ? 'warning' : 'normal';
  }

  private _renderSwap(swap: SwapFigures, units: ByteUnits): void {
    const swapped = swap.kernelSwapped;
    const hasSwapped = swapped !== null && swapped > 0;
    setText(
      this._swapped,
      hasSwapped
        ? trans.__('%1 of this kernel', formatBytes(swapped, units))
        : ''
    );
    setBytesData(this._swapped, swapped);
    setHidden(this._swapped.parentElement!, !hasSwapped);
    setHidden(this._swapNote, !hasSwapped);
    // The swap row shows the swap that the kernel's pages may go to, and is
    // hidden when there is none or its size is unknown.
    const canSwap = swap.limit !== null && swap.limit > 0;
    const row = this._swap.parentElement!;
    setHidden(row, !canSwap);
    setText(
      row.firstElementChild as HTMLElement,
      swap.container ? trans.__('Container swap') : trans.__('Swap')
    );
    setText(
      this._swap,
      canSwap
        ? swap.container
          ? trans.__('%1 in use', formatBytesOf(swap.used, swap.limit, units))
          : trans.__(
              '%1 in use (machine)',
              formatBytesOf(swap.used, swap.limit, units)
            )
        : ''
    );
    setBytesData(this._swap, canSwap ? swap.used : null);
    setTitle(
      row,
      swap.container
        ? trans.__(
            "The container's swap in use, of its swap limit (never more than the machine's swap)"
          )
        : trans.__(
            "The machine's swap in use, of its total: no cgroup limits the kernel's swap"
          )
    );
  }

  private _share: HTMLElement;
  private _rssBar: HTMLElement;
  private _othersBar: HTMLElement;
  private _rss: HTMLElement;
  private _tree: TreeFigureRow;
  private _available: HTMLElement;
  private _limit: HTMLElement;
  private _total: HTMLElement;
  private _swapped: HTMLElement;
  private _swap: HTMLElement;
  private _swapNote: HTMLElement;
}

/**
 * Words the container limit's tooltip, which says when the kernel is killed:
 * at its memory limit where it cannot swap, and only once its swap is full
 * too where it can.
 */
export function limitTitle(swap: SwapFigures, units: ByteUnits): string {
  if (swap.limit === 0) {
    return trans.__(
      "The kernel's cgroup memory limit: the kernel is killed there (it cannot swap)"
    );
  }
  if (swap.limit === null) {
    return trans.__(
      "The kernel's cgroup memory limit: the kernel is killed there, or, where it can swap, once its swap is full too"
    );
  }
  if (swap.free === null) {
    return trans.__(
      "The kernel's cgroup memory limit: past it, the kernel's memory goes to swap, and the kernel is killed once that is full too"
    );
  }
  return trans.__(
    "The kernel's cgroup memory limit: past it, the kernel's memory goes to swap (%1 free), and the kernel is killed once that is full too",
    formatBytes(swap.free, units)
  );
}
