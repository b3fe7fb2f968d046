/**
 * The "Kernels" tab lists every kernel the extension monitors in this window,
 * with its notebooks, state, host RAM and GPU use, and a "Shut down" button
 * that runs the shutdown command, which asks first. Below them it lists the
 * other processes that NVML sees on the same GPUs, or says why they cannot
 * be seen.
 *
 * It follows every monitored model, not just the current one, so it is not
 * a ModelView; like one, it renders at most once per animation frame and
 * not at all while hidden (LazyView). Kernel rows and their GPU figures are
 * kept per key and updated in place, because rebuilding them on every
 * sample (up to 20 a second) would swap the button under the pointer and
 * lose the click. Paths, kernel names and NVML's errors are data, so they go
 * in as text only.
 *
 * Test hooks: root `[data-vram-role="kernels-view"]`;
 * `[data-vram-role="kernels-table"]` with one
 * `[data-vram-role="kernel-row"][data-vram-kernel-id="<id>"]` per kernel
 * (no `data-vram-kernel-id` while a notebook has no kernel), containing
 * `kernel-notebook`, `kernel-name`, `kernel-state` (`data-vram-state`),
 * `kernel-host-rss` (`data-vram-bytes`), `kernel-gpu-use` per GPU
 * (`data-vram-gpu`, `data-vram-bytes`, `data-vram-source`) and the button
 * `kernel-shutdown`; `[data-vram-role="kernels-empty"]`;
 * `[data-vram-role="gpu-processes-note"]` (`data-vram-visibility`);
 * `[data-vram-role="gpu-processes-table"]` with
 * `[data-vram-role="gpu-process"][data-vram-pid][data-vram-gpu]`
 * (`data-vram-bytes`).
 */
import { CommandIDs, ExecuteCommand } from '../../ui/commandIds';
import { ByteUnits, formatBytes } from '../../text/format';
import { VramSettings } from '../../settings/settings';
import {
  describeGpuProcessVisibility,
  IKernelSessionSource,
  KernelGpuUse,
  KernelRow,
  kernelsOverview,
  kernelSourceOf,
  OtherGpuProcess
} from './KernelsOverview';
import { figuresAreCurrent, MonitorState } from '../../model/MonitorState';
import {
  IKernelMemoryModel,
  ModelChange
} from '../../model/IKernelMemoryModel';
import {
  button,
  element,
  setBytes,
  setBytesData,
  setHidden,
  setText,
  setTitle,
  syncKeyedChildren
} from '../../ui/dom';
import { LazyView } from '../../ui/LazyView';
import { trans } from '../../text/translation';

/** The model changes that move a figure or state that this tab shows. */
const RELEVANT: ReadonlySet<ModelChange> = new Set<ModelChange>([
  'state',
  'hello',
  'sample',
  'busy'
]);

const STATE_LABELS = (): Record<MonitorState, string> => ({
  'no-notebook': trans.__('No notebook'),
  'kernel-starting': trans.__('Starting'),
  'non-python': trans.__('Not Python'),
  bootstrapping: trans.__('Connecting'),
  'helper-failed': trans.__('Helper failed'),
  'protocol-mismatch': trans.__('Incompatible helper'),
  overheard: trans.__('Live (another page)'),
  live: trans.__('Live'),
  disconnected: trans.__('Disconnected')
});

/**
 * The state line, such as "Live · busy · pid 4242", or "Not started" for a
 * notebook without a kernel, whose kernel column says so.
 */
function kernelStateText(row: KernelRow): string {
  if (row.kernelId === null) {
    return trans.__('Not started');
  }
  const parts = [STATE_LABELS()[row.state]];
  if (row.state === 'live' && row.busy) {
    parts.push(trans.__('busy'));
  }
  if (row.pid !== null) {
    parts.push(trans.__('pid %1', row.pid));
  }
  return parts.join(' \u00b7 ');
}

/**
 * The sidebar's "Kernels" tab, which lists every monitored kernel with its
 * memory and a button to shut it down.
 */
export class KernelsView extends LazyView {
  constructor(options: KernelsView.IOptions) {
    super(options.settings);
    this._source = options.source;
    this._execute = options.execute;
    this.addClass('jp-vram-Kernels');
    this.node.dataset.vramRole = 'kernels-view';

    this._table = element('table', 'jp-vram-Kernels-table', {
      role: 'kernels-table'
    });
    this._table.setAttribute('aria-label', trans.__('Monitored kernels'));
    this._table.appendChild(
      headerRow([trans.__('Kernel'), trans.__('RAM'), trans.__('GPU')])
    );
    this._rowsBody = document.createElement('tbody');
    this._table.appendChild(this._rowsBody);
    this._empty = element('div', 'jp-vram-Kernels-note', {
      role: 'kernels-empty',
      text: trans.__(
        'No kernel is monitored yet. The kernels of the notebooks opened in this window are listed here.'
      )
    });

    const othersHeading = element('div', 'jp-vram-Kernels-heading', {
      text: trans.__('Other GPU processes')
    });
    this._note = element('div', 'jp-vram-Kernels-note', {
      role: 'gpu-processes-note'
    });
    this._note.setAttribute('aria-live', 'polite');
    this._others = element('table', 'jp-vram-Kernels-table', {
      role: 'gpu-processes-table'
    });
    this._others.setAttribute('aria-label', trans.__('Other GPU processes'));
    this._others.appendChild(
      headerRow([trans.__('PID'), trans.__('GPU'), trans.__('Memory')])
    );
    this._othersBody = document.createElement('tbody');
    this._others.appendChild(this._othersBody);

    this.node.append(
      this._table,
      this._empty,
      othersHeading,
      this._note,
      this._others
    );
    this._source?.sessionsChanged.connect(this._followModels, this);
    this._followModels();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._source?.sessionsChanged.disconnect(this._followModels, this);
    for (const model of this._models) {
      model.changed.disconnect(this._onModelChanged, this);
    }
    this._models = [];
    super.dispose();
  }

  /** Listens to the models of the sessions that are monitored at the time. */
  private _followModels(): void {
    for (const model of this._models) {
      model.changed.disconnect(this._onModelChanged, this);
    }
    this._models = (this._source?.sessions() ?? []).map(s => s.model);
    for (const model of this._models) {
      model.changed.connect(this._onModelChanged, this);
    }
    this.requestRender();
  }

  private _onModelChanged(_: IKernelMemoryModel, change: ModelChange): void {
    if (RELEVANT.has(change)) {
      this.requestRender();
    }
  }

  protected render(): void {
    const sources = (this._source?.sessions() ?? []).map(kernelSourceOf);
    const overview = kernelsOverview(sources);
    const units = this.settings.units;

    syncKeyedChildren(
      this._rowsBody,
      this._rows,
      overview.rows,
      row => row.key,
      row => this._createRow(row),
      (nodes, row) => updateRow(nodes, row, units)
    );
    setHidden(this._table, overview.rows.length === 0);
    setHidden(this._empty, overview.rows.length > 0);

    setText(this._note, describeGpuProcessVisibility(overview));
    this._note.dataset.vramVisibility = overview.visibility;
    // Other processes seldom change between samples, so their rows are
    // rebuilt only when something shown changed. These rows have no button
    // that would need to be kept.
    const others = JSON.stringify([units, overview.others]);
    if (others !== this._renderedOthers) {
      this._renderedOthers = others;
      this._othersBody.replaceChildren(
        ...overview.others.map(process => processRow(process, units))
      );
    }
    setHidden(this._others, overview.others.length === 0);
  }

  /**
   * A row's key names its kernel (`kernel:<id>`), so what depends on the id
   * is set once, here.
   */
  private _createRow(row: KernelRow): KernelRowNodes {
    const { kernelId } = row;
    const node = element('tr', 'jp-vram-Kernels-row', { role: 'kernel-row' });
    if (kernelId !== null) {
      node.dataset.vramKernelId = kernelId;
    }
    const name = element('td', 'jp-vram-Kernels-kernel');
    const notebook = element('div', 'jp-vram-Kernels-notebook', {
      role: 'kernel-notebook'
    });
    const kernel = element('div', 'jp-vram-Kernels-detail', {
      role: 'kernel-name'
    });
    const state = element('div', 'jp-vram-Kernels-detail', {
      role: 'kernel-state'
    });
    // The button goes under the kernel's names rather than in a column of
    // its own, because at the sidebar's default width such a column would
    // leave the names about 60 px, cutting them to "demo/vra…".
    const actions = element('div', 'jp-vram-Kernels-actions');
    name.append(notebook, kernel, state, actions);
    const rss = element('td', 'jp-vram-Kernels-figure', {
      role: 'kernel-host-rss',
      title: trans.__('Host RAM of the kernel process (resident set size)')
    });
    const gpus = element('td', 'jp-vram-Kernels-figure');
    const noGpu = element('div', 'jp-vram-Kernels-detail');
    gpus.appendChild(noGpu);
    const shutdown = button(
      'jp-vram-Button jp-vram-Button-danger',
      { role: 'kernel-shutdown', text: trans.__('Shut down') },
      () => {
        if (kernelId) {
          this._execute(CommandIDs.shutdownKernel, { kernelId });
        }
      }
    );
    shutdown.disabled = kernelId === null;
    actions.appendChild(shutdown);
    node.append(name, rss, gpus);
    return {
      node,
      notebook,
      kernel,
      state,
      rss,
      gpus,
      noGpu,
      gpuUses: new Map(),
      shutdown
    };
  }

  private _source: IKernelSessionSource | null;
  private _execute: ExecuteCommand;
  private _models: IKernelMemoryModel[] = [];
  private _rows = new Map<string, KernelRowNodes>();
  private _renderedOthers: string | null = null;
  private _table: HTMLTableElement;
  private _rowsBody: HTMLTableSectionElement;
  private _empty: HTMLDivElement;
  private _note: HTMLDivElement;
  private _others: HTMLTableElement;
  private _othersBody: HTMLTableSectionElement;
}

/** The elements of one kernel row, kept between renders. */
interface KernelRowNodes {
  node: HTMLTableRowElement;
  notebook: HTMLDivElement;
  kernel: HTMLDivElement;
  state: HTMLDivElement;
  rss: HTMLTableCellElement;
  gpus: HTMLTableCellElement;
  /** The text "no GPU" or "—", shown when the kernel shows no GPU figure. */
  noGpu: HTMLDivElement;
  /** One `kernel-gpu-use` element per GPU index. */
  gpuUses: Map<number, { node: HTMLDivElement }>;
  shutdown: HTMLButtonElement;
}

function updateRow(
  nodes: KernelRowNodes,
  row: KernelRow,
  units: ByteUnits
): void {
  const paths = row.paths.join(', ');
  const notebooks = paths || trans.__('Untitled');
  setText(nodes.notebook, notebooks);
  nodes.notebook.title = notebooks;
  const kernelText = [
    row.displayName ?? row.kernelName ?? trans.__('No kernel'),
    row.kernelId ? row.kernelId.slice(0, 8) : null
  ]
    .filter(Boolean)
    .join(' \u00b7 ');
  setText(nodes.kernel, kernelText);
  nodes.kernel.title = row.kernelId ? trans.__('Kernel %1', row.kernelId) : '';
  setText(nodes.state, kernelStateText(row));
  nodes.state.title = row.stateReason;
  nodes.state.dataset.vramState = row.state;
  setBytes(nodes.rss, row.hostRssBytes, units);
  // For a kernel that died or was cut off, the figures are its last ones,
  // not what it holds now, and the cells say so.
  const last = row.sampled && !figuresAreCurrent(row.state);
  for (const cell of [nodes.rss, nodes.gpus]) {
    cell.classList.toggle('jp-mod-last', last);
    setTitle(cell, last ? trans.__('Last figures: %1', row.stateReason) : '');
  }

  // GPU indices are unique within a sample, so each gets one kept element.
  syncKeyedChildren(
    nodes.gpus,
    nodes.gpuUses,
    row.gpus,
    gpu => gpu.index,
    gpu => {
      const node = element('div', 'jp-vram-Kernels-gpu', {
        role: 'kernel-gpu-use'
      });
      node.dataset.vramGpu = String(gpu.index);
      return { node };
    },
    ({ node }, gpu) => updateGpuUse(node, gpu, units)
  );
  // "no GPU" is shown only where that is known, because without NVML and
  // before CUDA starts, an empty list proves nothing.
  setText(nodes.noGpu, row.seesNoGpu === true ? trans.__('no GPU') : '\u2014');
  nodes.noGpu.title =
    row.seesNoGpu === true
      ? trans.__('This kernel sees no GPU')
      : row.sampled
        ? trans.__(
            "No GPU seen yet: the kernel's GPUs show once PyTorch initialises CUDA"
          )
        : '';
  setHidden(nodes.noGpu, row.gpus.length > 0);

  nodes.shutdown.title = !row.kernelId
    ? trans.__('This notebook has no kernel')
    : paths
      ? trans.__('Shut down the kernel of %1 (asks first)', paths)
      : trans.__('Shut down the kernel of this notebook (asks first)');
  nodes.shutdown.setAttribute(
    'aria-label',
    !row.kernelId
      ? trans.__('No kernel to shut down')
      : paths
        ? trans.__('Shut down the kernel of %1', paths)
        : trans.__('Shut down the kernel of this notebook')
  );
}

/**
 * Formats a GPU's use as "0: 2 GiB", with the exact bytes and where the figure
 * comes from.
 */
function updateGpuUse(
  node: HTMLElement,
  gpu: KernelGpuUse,
  units: ByteUnits
): void {
  node.dataset.vramSource = gpu.source ?? 'unknown';
  setBytesData(node, gpu.bytes);
  setText(node, `${gpu.index}: ${formatBytes(gpu.bytes, units)}`);
  const device = gpu.name
    ? trans.__('GPU %1 (%2)', gpu.index, gpu.name)
    : trans.__('GPU %1', gpu.index);
  node.title = trans.__(
    '%1: %2',
    device,
    gpu.source === 'nvml'
      ? trans.__('what the driver attributes to the kernel process')
      : gpu.source === 'torch'
        ? trans.__(
            "PyTorch's reserved memory (NVML cannot attribute the process)"
          )
        : gpu.source === 'tensorflow'
          ? trans.__(
              "TensorFlow's memory in use (NVML cannot attribute the process)"
            )
          : trans.__('unknown')
  );
}

function headerRow(labels: string[]): HTMLTableSectionElement {
  const head = document.createElement('thead');
  const tr = document.createElement('tr');
  for (const label of labels) {
    const th = element('th', 'jp-vram-Kernels-th', { text: label });
    th.scope = 'col';
    tr.appendChild(th);
  }
  head.appendChild(tr);
  return head;
}

function processRow(
  process: OtherGpuProcess,
  units: ByteUnits
): HTMLTableRowElement {
  const tr = element('tr', 'jp-vram-Kernels-row', { role: 'gpu-process' });
  tr.dataset.vramPid = String(process.pid);
  tr.dataset.vramGpu = String(process.gpuIndex);
  const pid = element('td', 'jp-vram-Kernels-figure', {
    text: String(process.pid),
    title: trans.__('Process %1 on %2', process.pid, process.hostname)
  });
  const gpu = element('td', 'jp-vram-Kernels-figure', {
    text: String(process.gpuIndex),
    title: process.gpuName ?? trans.__('GPU %1', process.gpuIndex)
  });
  const memory = element('td', 'jp-vram-Kernels-figure');
  setBytes(memory, process.usedBytes, units);
  if (process.usedBytes === null) {
    memory.title = trans.__('NVML gives no figure for this process');
  }
  setBytesData(tr, process.usedBytes);
  tr.append(pid, gpu, memory);
  return tr;
}

/** The types that go with KernelsView. */
export namespace KernelsView {
  /** The options a new KernelsView is constructed with. */
  export interface IOptions {
    /**
     * The monitored sessions, from the MemoryMonitor, or null when there are
     * none to list.
     */
    source: IKernelSessionSource | null;
    settings: VramSettings;
    /** Runs the shutdown command with `{kernelId}`. */
    execute: ExecuteCommand;
  }
}
