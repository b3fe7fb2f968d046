/**
 * The load part of a GPU card: how busy the GPU is (SM and memory-bandwidth
 * utilisation), its power draw against its limit, temperature, clocks,
 * throttle reasons, PCIe traffic, and this kernel's share of the activity.
 *
 * Each figure is on a row of its own, so that an unavailable one says so,
 * with the wire's reason, and leaves the others as they are. On a MIG
 * instance, a figure the driver only gives for the whole card is labelled
 * so. It is a plain DOM component that GpuDeviceCard owns.
 *
 * Test hooks: each value has `data-vram-role="gpu-load-<figure>"`, its number
 * in `data-vram-value` and, when unavailable, the reason's code in
 * `data-vram-unavailable`.
 */
import type { GpuLoad } from '../../protocol/load';
import {
  formatCelsius,
  formatLoadPercent,
  formatMhz,
  formatPcieRate,
  formatWatts,
  throttleReasonsText,
  unavailableText
} from '../../text/gpuLoadText';
import { trans } from '../../text/translation';
import { element, figureRow, setData, setHidden, setText } from '../../ui/dom';
import { kernelShareText } from './gpuLoadShare';

/** A figure of the wire's `load` object that can be unavailable. */
type LoadFigure = keyof GpuLoad['unavailable'];

/** The rows of the section, each a figure of its own. */
type RowKey =
  | 'sm'
  | 'bandwidth'
  | 'power'
  | 'temperature'
  | 'clocks'
  | 'throttle'
  | 'pcie'
  | 'share';

/**
 * The share row's tooltip while there is no per-process list. It is a
 * function because text is translated when it is shown, not when the module
 * loads.
 */
const SHARE_TITLE = (): string =>
  trans.__(
    "This kernel's share of the GPU's activity, from the driver's per-process utilisation"
  );

/** The load rows of one GPU card. */
export class GpuLoadSection {
  constructor() {
    this.node = element('div', 'jp-vram-Figures jp-vram-GpuLoad', {
      role: 'gpu-load'
    });
    this._scope = element('div', 'jp-vram-GpuLoad-scope', {
      role: 'gpu-load-scope'
    });
    this.node.appendChild(this._scope);
    const row = (key: RowKey, label: string, title: string) =>
      figureRow(this.node, label, `gpu-load-${key}`, title);
    this._values = {
      sm: row(
        'sm',
        trans.__('SM busy'),
        trans.__(
          "Share of the driver's last sample period in which a kernel ran on the GPU (NVML utilisation)"
        )
      ),
      bandwidth: row(
        'bandwidth',
        trans.__('Memory bandwidth'),
        trans.__(
          "Share of the driver's last sample period in which device memory was read or written"
        )
      ),
      power: row(
        'power',
        trans.__('Power'),
        trans.__('Power draw against the limit the driver enforces')
      ),
      temperature: row(
        'temperature',
        trans.__('Temperature'),
        trans.__('GPU core temperature')
      ),
      clocks: row(
        'clocks',
        trans.__('Clocks'),
        trans.__('SM and memory clocks')
      ),
      throttle: row(
        'throttle',
        trans.__('Held back by'),
        trans.__(
          'Why the clocks are below their maximum now (clocks event or throttle reasons)'
        )
      ),
      pcie: row(
        'pcie',
        trans.__('PCIe'),
        trans.__('PCIe traffic sent (TX) and received (RX), over 20 ms')
      ),
      share: row('share', trans.__('This kernel'), SHARE_TITLE())
    };
  }

  readonly node: HTMLElement;
  /** The pids of the kernel's own processes, as the last render was given them. */
  private _children: ReadonlySet<number> = new Set();

  /**
   * Shows `load`. An undefined load, from an older helper that sends none,
   * hides the section; a null load means that NVML does not know the device,
   * and the section says so. `children` holds the pids of the kernel's own
   * processes, whose share of the activity is given apart from the others'.
   */
  render(
    load: GpuLoad | null | undefined,
    children: ReadonlySet<number> = new Set()
  ): void {
    this._children = children;
    setHidden(this.node, load === undefined);
    if (load === undefined) {
      return;
    }
    for (const value of Object.values(this._values)) {
      setHidden(value.parentElement!, load === null);
    }
    if (load === null) {
      setText(
        this._scope,
        trans.__('Load: unavailable (NVML does not know this device)')
      );
      setHidden(this._scope, false);
      return;
    }
    this._renderScope(load);
    this._percent('sm', load, 'sm_percent');
    this._percent('bandwidth', load, 'memory_bandwidth_percent');
    this._renderPower(load);
    this._figure('temperature', load, 'temperature_c', formatCelsius);
    this._renderClocks(load);
    this._renderThrottle(load);
    this._renderPcie(load);
    this._renderShare(load);
  }

  private _renderScope(load: GpuLoad): void {
    const mig = load.scope === 'mig_instance';
    setText(
      this._scope,
      mig
        ? trans.__(
            "Load of this MIG instance; figures marked (whole GPU) are its parent card's"
          )
        : ''
    );
    setHidden(this._scope, !mig);
    setData(this.node, 'vramScope', load.scope);
  }

  private _percent(key: RowKey, load: GpuLoad, figure: LoadFigure): void {
    this._figure(key, load, figure, formatLoadPercent);
  }

  /** Writes the row of one figure: its text, or that it is unavailable and why. */
  private _figure(
    key: RowKey,
    load: GpuLoad,
    figure: LoadFigure,
    format: (value: number) => string
  ): void {
    const value = load[figure] as number | null;
    this._show(
      key,
      load,
      [figure],
      value === null ? null : format(value),
      value === null ? null : String(value)
    );
  }

  private _renderPower(load: GpuLoad): void {
    const watts = load.power_watts;
    const limit = load.power_limit_watts;
    let text: string | null = null;
    if (watts !== null) {
      text =
        limit !== null && limit > 0
          ? trans.__(
              '%1 of %2 (%3)',
              formatWatts(watts),
              formatWatts(limit),
              formatLoadPercent((watts / limit) * 100)
            )
          : trans.__(
              '%1 (limit %2)',
              formatWatts(watts),
              unavailableText(load.unavailable.power_limit_watts)
            );
    }
    this._show(
      'power',
      load,
      ['power_watts', 'power_limit_watts'],
      text,
      watts === null ? null : String(watts)
    );
  }

  private _renderClocks(load: GpuLoad): void {
    const sm = load.sm_clock_mhz;
    const memory = load.memory_clock_mhz;
    const part = (mhz: number | null, figure: LoadFigure) =>
      mhz === null ? unavailableText(load.unavailable[figure]) : formatMhz(mhz);
    const text =
      sm === null && memory === null
        ? null
        : trans.__(
            'SM %1 · memory %2',
            part(sm, 'sm_clock_mhz'),
            part(memory, 'memory_clock_mhz')
          );
    this._show(
      'clocks',
      load,
      ['sm_clock_mhz', 'memory_clock_mhz'],
      text,
      sm === null ? null : String(sm)
    );
  }

  private _renderThrottle(load: GpuLoad): void {
    const reasons = load.throttle_reasons;
    this._show(
      'throttle',
      load,
      ['throttle_reasons'],
      reasons === null ? null : throttleReasonsText(reasons),
      reasons === null ? null : reasons.join(' ')
    );
    const value = this._values.throttle;
    // The clocks of an idle GPU are low for no fault, so idle alone is no
    // slowdown worth a warning; any other reason is.
    value.classList.toggle(
      'jp-vram-warning',
      !!reasons?.some(reason => reason !== 'gpu_idle')
    );
  }

  private _renderPcie(load: GpuLoad): void {
    const tx = load.pcie_tx_kb_per_s;
    const rx = load.pcie_rx_kb_per_s;
    // A card or MIG instance that has no PCIe counters gets no row at all,
    // rather than a row that would always say they are unavailable.
    const absent =
      tx === null &&
      rx === null &&
      load.unavailable.pcie_tx_kb_per_s === 'not_supported';
    setHidden(this._values.pcie.parentElement!, absent);
    const part = (rate: number | null, figure: LoadFigure) =>
      rate === null
        ? unavailableText(load.unavailable[figure])
        : formatPcieRate(rate);
    this._show(
      'pcie',
      load,
      ['pcie_tx_kb_per_s', 'pcie_rx_kb_per_s'],
      tx === null && rx === null
        ? null
        : trans.__(
            'TX %1 · RX %2',
            part(tx, 'pcie_tx_kb_per_s'),
            part(rx, 'pcie_rx_kb_per_s')
          ),
      tx === null ? null : String(tx)
    );
  }

  private _renderShare(load: GpuLoad): void {
    const share = kernelShareText(load.processes, this._children);
    this._show(
      'share',
      load,
      ['processes'],
      share?.text ?? null,
      share && share.smPercent !== null ? String(share.smPercent) : null
    );
    // The per-process list, with the kernel marked, is the row's tooltip.
    const row = this._values.share.parentElement!;
    row.title = share?.title ?? SHARE_TITLE();
  }

  /**
   * Writes one row: `text`, or, when it is null, that the figure is
   * unavailable, with the reason the wire gave for the first of `figures`
   * that has one. On a MIG instance, a figure that the parent card gave is
   * marked "(whole GPU)".
   */
  private _show(
    key: RowKey,
    load: GpuLoad,
    figures: LoadFigure[],
    text: string | null,
    value: string | null
  ): void {
    const node = this._values[key];
    const reason =
      text === null
        ? (figures.map(f => load.unavailable[f]).find(r => r) ?? null)
        : null;
    const parent = figures.some(f =>
      (load.parent_figures as string[]).includes(f)
    );
    const shown = text ?? unavailableText(reason ?? undefined);
    setText(node, parent ? trans.__('%1 (whole GPU)', shown) : shown);
    setData(node, 'vramValue', value);
    setData(node, 'vramUnavailable', text === null ? (reason ?? '') : null);
    setData(node, 'vramParent', parent ? 'true' : null);
    node.classList.toggle('jp-vram-GpuLoad-unavailable', text === null);
  }

  private _scope: HTMLElement;
  private _values: Record<RowKey, HTMLElement>;
}
