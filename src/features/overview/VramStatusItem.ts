/**
 * The status bar item, which shows one compact figure for the active kernel:
 * "GPU 1.2/80 GiB" for what the kernel holds on its GPUs, or "RAM 512 MiB"
 * when the kernel has no GPU figures. It warns when a GPU, or the kernel's
 * container, is used at or above the threshold set in the settings.
 */
import { formatBytes, formatBytesOf, UNKNOWN_TEXT } from '../../text/format';
import { gpuFigures } from '../../model/gpuFigures';
import { hostFigures } from '../../model/hostFigures';
import { figuresAreCurrent } from '../../model/MonitorState';
import {
  IKernelMemoryModel,
  ModelChange
} from '../../model/IKernelMemoryModel';
import type { IVramMonitor } from '../../monitor/IVramMonitor';
import { VramSettings } from '../../settings/settings';
import { makeActivatable, setTitle } from '../../ui/dom';
import { ModelView } from '../../ui/ModelView';
import { trans } from '../../text/translation';

const RELEVANT: ReadonlySet<ModelChange> = new Set<ModelChange>([
  'sample',
  'state',
  'history'
]);

/**
 * Works out the status item's text, tooltip and warning flag; it is a pure
 * function so that tests can check it without a view.
 */
export function statusSummary(
  model: IKernelMemoryModel | null,
  settings: VramSettings
): { text: string; title: string; warning: boolean } {
  if (!model) {
    return { text: '', title: '', warning: false };
  }
  const sample = model.latest;
  if (!sample) {
    return {
      text: trans.__('GPU %1', UNKNOWN_TEXT),
      title: model.stateReason,
      warning: false
    };
  }
  const summary = currentSummary(model, sample, settings);
  if (figuresAreCurrent(model.state)) {
    return summary;
  }
  // When the kernel died, the connection was lost or the helper failed, the
  // figures are the last ones received, not what the kernel holds now, and
  // the text says so.
  return {
    text: trans.__('last %1', summary.text),
    title: trans.__('%1\nLast figures:\n%2', model.stateReason, summary.title),
    warning: summary.warning
  };
}

/** The summary of the latest sample, worded as if its figures were current. */
function currentSummary(
  model: IKernelMemoryModel,
  sample: NonNullable<IKernelMemoryModel['latest']>,
  settings: VramSettings
): { text: string; title: string; warning: boolean } {
  const units = settings.units;
  const devices = model.hello?.devices ?? [];
  const gpus = sample.gpus.map(g =>
    gpuFigures(
      g,
      devices.find(d => d.index === g.index)
    )
  );
  const known = gpus.filter(g => g.kernelUsed !== null);
  const rss = sample.host.rss_bytes;
  const host = hostFigures(sample.host);
  // In a container the kernel is killed at its limit, or, where it may swap,
  // slows down there and is killed once its swap is full too, so that is
  // worth a warning. Without a container, the machine's RAM is shared with
  // every other process on it, and its use gives no warning.
  const ramWarning =
    host.container &&
    host.usedPercent !== null &&
    host.usedPercent >= settings.warningThresholdPercent;
  const containerText = host.container
    ? '\n' +
      trans.__(
        'Container: %1 of its %2 limit',
        formatBytes(host.used, units),
        formatBytes(host.limit, units)
      )
    : '';
  const ramText = host.container
    ? trans.__('RAM %1', formatBytesOf(rss, host.limit, units))
    : trans.__('RAM %1', formatBytes(rss, units));
  if (known.length === 0) {
    return {
      text: ramText,
      title:
        trans.__('Kernel RSS: %1', formatBytes(rss, units)) + containerText,
      warning: ramWarning
    };
  }
  const used = known.reduce((sum, g) => sum + (g.kernelUsed ?? 0), 0);
  const total = known.every(g => g.total !== null)
    ? known.reduce((sum, g) => sum + (g.total ?? 0), 0)
    : null;
  const warning = gpus.some(
    g =>
      g.usedPercent !== null &&
      g.usedPercent >= settings.warningThresholdPercent
  );
  const usedText = formatBytesOf(used, total, units);
  const details = gpus.map(g =>
    g.deviceUsed !== null
      ? trans.__(
          'GPU %1: this kernel %2, device %3 of %4',
          g.index,
          formatBytes(g.kernelUsed, units),
          formatBytes(g.deviceUsed, units),
          formatBytes(g.total, units)
        )
      : trans.__(
          'GPU %1: this kernel %2 of %3',
          g.index,
          formatBytes(g.kernelUsed, units),
          formatBytes(g.total, units)
        )
  );
  return {
    text:
      known.length > 1
        ? trans.__('GPU\u00d7%1 %2', known.length, usedText)
        : trans.__('GPU %1', usedText),
    title:
      [...details, trans.__('Kernel RSS: %1', formatBytes(rss, units))].join(
        '\n'
      ) + containerText,
    warning: warning || ramWarning
  };
}

/**
 * The status bar item that shows one compact memory figure of the active
 * kernel.
 */
export class VramStatusItem extends ModelView {
  constructor(options: { monitor: IVramMonitor; onClick?: () => void }) {
    super(options.monitor.settings);
    this.addClass('jp-vram-StatusItem');
    this.node.dataset.vramRole = 'status-item';
    const monitor = (this._monitor = options.monitor);
    if (options.onClick) {
      const onClick = options.onClick;
      this.node.setAttribute('role', 'button');
      makeActivatable(this.node, () => onClick());
    }
    monitor.currentChanged.connect(this._onCurrentChanged, this);
    monitor.settingsChanged.connect(this._onSettingsChanged, this);
    this.model = monitor.current;
  }

  protected readonly relevantChanges = RELEVANT;

  dispose(): void {
    this._monitor.currentChanged.disconnect(this._onCurrentChanged, this);
    this._monitor.settingsChanged.disconnect(this._onSettingsChanged, this);
    super.dispose();
  }

  protected render(): void {
    const { text, title, warning } = statusSummary(this.model, this.settings);
    if (this.node.textContent !== text) {
      this.node.textContent = text;
    }
    setTitle(this.node, title);
    this.node.classList.toggle('jp-vram-warning', warning);
    this.node.dataset.vramLevel = warning ? 'warning' : 'normal';
  }

  private _onCurrentChanged(
    _: IVramMonitor,
    model: IKernelMemoryModel | null
  ): void {
    this.model = model;
  }

  private _onSettingsChanged(_: IVramMonitor, settings: VramSettings): void {
    this.settings = settings;
  }

  private _monitor: IVramMonitor;
}
