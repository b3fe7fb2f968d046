/**
 * The "Lines" tab shows live memory grouped by the notebook line that
 * allocated it, per device and largest first. Host memory is traced by
 * tracemalloc and each GPU's by PyTorch's allocator history. A toggle turns
 * recording on and off and says what it costs; clicking the row of a
 * notebook line activates that cell and puts the cursor on the line; the GPU
 * snapshot and the host sites can be downloaded. The tab renders an
 * AllocationRecorder. File names, code and reasons come from the kernel, so
 * they go into the DOM as text only.
 *
 * Test hooks: root `[data-vram-role="sites-view"]`;
 * `[data-vram-role="record-allocations"]` (the checkbox),
 * `[data-vram-role="recording-status"]`, `[data-vram-role="sites-refresh"]`,
 * `[data-vram-role="export-gpu-snapshot"]`, `[data-vram-role="export-host-csv"]`,
 * `[data-vram-role="sites-error"]`;
 * `[data-vram-role="site-device"][data-vram-device="host"]`;
 * `[data-vram-role="site-row"]` with `data-vram-device`, `data-vram-bytes`,
 * `data-vram-cell-id`, `data-vram-execution-count`, `data-vram-line`;
 * `[data-vram-role="site-fold"]` (a `<details>` of the small sites outside
 * the notebook, with `data-vram-device` and `data-vram-bytes`).
 */
import {
  DeviceSites,
  GpuRecording,
  gpuHistoryReadable,
  HostRecording,
  RecordingState
} from '../../protocol/allocation';
import { clockTime } from '../../text/clockText';
import { seesNoGpu } from '../../model/gpuVisibility';
import { formatBytes, formatCount } from '../../text/format';
import {
  AllocationRecorder,
  AllocationRecorderChange
} from './AllocationRecorder';
import { ConsoleCells } from '../../model/ConsoleCells';
import {
  cellIdsByCount,
  foldSmallSites,
  SiteRow,
  siteRows,
  SMALL_SITE_BYTES,
  SMALL_SITE_SHARE
} from './siteRows';
import { VramSettings } from '../../settings/settings';
import { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import {
  button,
  element,
  makeActivatable,
  setBytesData,
  setHidden,
  setText
} from '../../ui/dom';
import { LazyView } from '../../ui/LazyView';
import { follow } from '../../ui/follow';
import { trans } from '../../text/translation';

/**
 * The sidebar's "Lines" tab, which lists live memory by the notebook line that
 * allocated it.
 */
export class AllocationSitesView extends LazyView {
  constructor(options: AllocationSitesView.IOptions) {
    super(options.settings);
    this._actions = options.actions;
    this._consoleCells = options.consoleCells ?? null;
    this._consoleCells?.changed.connect(this.requestRender, this);
    this.addClass('jp-vram-Sites');
    this.node.dataset.vramRole = 'sites-view';

    const toggleLabel = element('label', 'jp-vram-Sites-toggle');
    this._toggle = document.createElement('input');
    this._toggle.type = 'checkbox';
    this._toggle.dataset.vramRole = 'record-allocations';
    this._toggle.addEventListener('change', () =>
      this._actions.setRecording(this._toggle.checked)
    );
    toggleLabel.append(
      this._toggle,
      document.createTextNode(' ' + trans.__('Record allocations'))
    );
    toggleLabel.title = trans.__(
      "Keep the Python stack of every live allocation in this kernel (tracemalloc; PyTorch's allocator history once CUDA is up), to show which line holds memory. While on, every Python allocation costs tens of microseconds (the stack is walked), so code that allocates a lot runs many times slower; fewer frames (the host stack depth setting) cost less. Off frees it."
    );

    this._status = element('div', 'jp-vram-Sites-status', {
      role: 'recording-status'
    });
    const toolbar = element('div', 'jp-vram-Holders-toolbar');
    this._refresh = button(
      'jp-vram-Button',
      {
        role: 'sites-refresh',
        text: trans.__('Refresh'),
        title: trans.__('Ask the kernel which lines hold memory now')
      },
      () => void this.recorder?.refresh()
    );
    this._exportGpu = button(
      'jp-vram-Button',
      {
        role: 'export-gpu-snapshot',
        text: trans.__('GPU snapshot'),
        title: trans.__(
          "Download PyTorch's allocator snapshot (.pickle) for pytorch.org/memory_viz"
        )
      },
      () => this._actions.exportGpuSnapshot()
    );
    this._exportHost = button(
      'jp-vram-Button',
      {
        role: 'export-host-csv',
        text: trans.__('Host CSV'),
        title: trans.__('Download the host sites as CSV')
      },
      () => this._actions.exportHostCsv()
    );
    toolbar.append(this._refresh, this._exportGpu, this._exportHost);
    this._error = element(
      'div',
      'jp-vram-Holders-status jp-vram-Holders-error',
      {
        role: 'sites-error'
      }
    );
    this._asOf = element('div', 'jp-vram-Sites-status', {
      role: 'sites-as-of'
    });
    this._devices = element('div', 'jp-vram-Sites-devices');
    this.node.append(
      toggleLabel,
      this._status,
      toolbar,
      this._error,
      this._asOf,
      this._devices
    );
    this.renderNow();
  }

  get recorder(): AllocationRecorder | null {
    return this._recorder;
  }

  set recorder(recorder: AllocationRecorder | null) {
    if (recorder === this._recorder) {
      return;
    }
    this._recorder = follow(
      this._recorder,
      recorder,
      this._onRecorderChanged,
      this
    );
    // This is another kernel's listing, and the folds the user opened
    // belonged to the previous one, so they are closed.
    this._openFolds.clear();
    this.requestRender();
  }

  /**
   * The kernel's memory model, whose cell history maps execution counts to
   * cells.
   */
  get model(): IKernelMemoryModel | null {
    return this._model;
  }

  set model(model: IKernelMemoryModel | null) {
    this._model = model;
    this.requestRender();
  }

  /** The rows shown, per device, for tests. */
  get rows(): { device: string; rows: SiteRow[] }[] {
    return this._rows;
  }

  dispose(): void {
    this._consoleCells?.changed.disconnect(this.requestRender, this);
    this._recorder?.changed.disconnect(this._onRecorderChanged, this);
    this._recorder = null;
    super.dispose();
  }

  protected render(): void {
    const recorder = this._recorder;
    // Rendering runs only while the view is shown, so this is where a
    // kernel's unknown state is asked for, once.
    recorder?.ensureKnown();
    const available = recorder?.available ?? false;
    const state = recorder?.recording ?? null;
    const busy = (recorder?.pending ?? 0) > 0;
    if (!busy) {
      // While the kernel has not answered, the box keeps showing what the
      // user asked for.
      this._toggle.checked = state?.enabled ?? false;
    }
    this._toggle.disabled = !available || busy;
    this._refresh.disabled = !available || busy;
    const noGpu = seesNoGpu(
      this._model?.hello ?? null,
      this._model?.latest ?? null
    );
    const gpuVisible = noGpu === null ? null : !noGpu;
    this._exportGpu.disabled =
      !available || !state || !gpuHistoryReadable(state.gpu);
    this._exportGpu.title = this._exportGpu.disabled
      ? gpuVisible === false
        ? trans.__(
            'No GPU is visible to this kernel: there is no GPU snapshot to download'
          )
        : trans.__(
            "Available while PyTorch's allocator history is recording (recording on, and CUDA initialised)"
          )
      : trans.__(
          "Download PyTorch's allocator snapshot (.pickle) for pytorch.org/memory_viz"
        );
    setText(
      this._status,
      statusText(state, available, busy, this.settings, gpuVisible)
    );
    const error = recorder?.error ?? null;
    setHidden(this._error, error === null);
    setText(this._error, error ?? '');

    const listing = recorder?.listing ?? null;
    this._renderAsOf();
    const records = this._model?.cells.entries.map(e => e.record) ?? [];
    const consoleCells = this._consoleCells;
    this._rows = listing
      ? siteRows(
          listing,
          cellIdsByCount(records),
          id => consoleCells?.has(id) ?? false
        )
      : [];
    this._exportHost.disabled = !this._rows.some(
      d => d.device === 'host' && d.rows.length > 0
    );
    this._devices.replaceChildren(
      ...(listing?.devices ?? []).map((device, i) =>
        this._renderDevice(device, this._rows[i].rows)
      )
    );
  }

  /**
   * Called when a cell ran since the listing. Only the line that says so
   * changes, not the listing.
   */
  private _onRecorderChanged(
    _: AllocationRecorder,
    change: AllocationRecorderChange
  ): void {
    if (change === 'since') {
      this._renderAsOf();
    } else {
      this.requestRender();
    }
  }

  private _renderAsOf(): void {
    const recorder = this._recorder;
    const listedAt = recorder?.listedAt ?? null;
    setHidden(this._asOf, listedAt === null);
    setText(
      this._asOf,
      listedAt === null
        ? ''
        : asOfText(listedAt, recorder?.cellsRunSinceListing ?? 0)
    );
  }

  private _renderDevice(sites: DeviceSites, rows: SiteRow[]): HTMLElement {
    const units = this.settings.units;
    const { device, unattributed_bytes: unattributed, truncated } = sites;
    const section = element('section', 'jp-vram-Sites-device', {
      role: 'site-device'
    });
    section.dataset.vramDevice = device;
    const name =
      device === 'host'
        ? trans.__(
            'Host (tracemalloc: Python objects and NumPy arrays, not PyTorch CPU tensors)'
          )
        : trans.__('GPU %1', device);
    // The helper's own allocations are never listed. The heading leaves
    // them out too, so that it adds up to what is listed, and it says what
    // they are.
    const total = Math.max(0, sites.total_bytes - sites.helper_bytes);
    const count = Math.max(0, sites.count - sites.helper_count);
    let heading = trans._n(
      '%2: %3 live in %4 allocation',
      '%2: %3 live in %4 allocations',
      count,
      name,
      formatBytes(total, units),
      formatCount(count)
    );
    if (unattributed > 0) {
      // PyTorch records Python stacks only, and the backward pass allocates
      // the gradients in autograd's own threads, which have none, so some
      // bytes cannot be attributed to a line.
      heading +=
        '; ' +
        (device === 'host'
          ? trans.__(
              '%1 without a stack (allocated before recording)',
              formatBytes(unattributed, units)
            )
          : trans.__(
              '%1 without a stack (allocated before recording, or by the backward pass, which runs outside Python)',
              formatBytes(unattributed, units)
            ));
    }
    if (sites.helper_bytes > 0) {
      heading +=
        '; ' +
        (sites.helper_count > 0
          ? trans._n(
              "not counted: this monitor's own %2 in %3 allocation",
              "not counted: this monitor's own %2 in %3 allocations",
              sites.helper_count,
              formatBytes(sites.helper_bytes, units),
              formatCount(sites.helper_count)
            )
          : trans.__(
              "not counted: this monitor's own %1",
              formatBytes(sites.helper_bytes, units)
            ));
    }
    section.appendChild(
      element('div', 'jp-vram-Holders-heading', { text: heading })
    );
    const { shown, folded, foldedBytes, foldedCount } = foldSmallSites(rows);
    const list = element('ul', 'jp-vram-Holders-list');
    for (const row of shown) {
      list.appendChild(this._renderRow(row));
    }
    if (rows.length === 0) {
      list.appendChild(
        element('li', 'jp-vram-Sites-empty', {
          text: trans.__('No live allocation recorded on this device.')
        })
      );
    }
    section.appendChild(list);
    if (folded.length > 0) {
      section.appendChild(
        this._renderFold(device, folded, foldedBytes, foldedCount)
      );
    }
    if (truncated) {
      section.appendChild(
        element('div', 'jp-vram-Sites-note', {
          text: trans.__('Only the largest sites are listed.')
        })
      );
    }
    return section;
  }

  /**
   * The small sites outside the notebook, behind one line that says what
   * they add up to.
   */
  private _renderFold(
    device: string,
    rows: SiteRow[],
    bytes: number,
    count: number
  ): HTMLElement {
    const fold = element('details', 'jp-vram-Sites-fold', {
      role: 'site-fold'
    });
    fold.dataset.vramDevice = device;
    setBytesData(fold, bytes);
    // A refresh renders anew, and a fold that the user opened stays open.
    fold.open = this._openFolds.has(device);
    fold.addEventListener('toggle', () => {
      if (fold.open) {
        this._openFolds.add(device);
      } else {
        this._openFolds.delete(device);
      }
    });
    const summary = element('summary', 'jp-vram-Sites-foldSummary', {
      text: trans._n(
        '%2 smaller site outside the notebook: %3 in %4',
        '%2 smaller sites outside the notebook: %3 in %4',
        rows.length,
        formatCount(rows.length),
        formatBytes(bytes, this.settings.units),
        trans._n('%2 allocation', '%2 allocations', count, formatCount(count))
      )
    });
    summary.title = trans.__(
      'Each under %1%% of what is listed on this device, or under %2 (library code, not a notebook line)',
      SMALL_SITE_SHARE * 100,
      formatBytes(SMALL_SITE_BYTES, this.settings.units)
    );
    const list = element('ul', 'jp-vram-Holders-list');
    for (const row of rows) {
      list.appendChild(this._renderRow(row));
    }
    fold.append(summary, list);
    return fold;
  }

  private _renderRow(row: SiteRow): HTMLElement {
    const item = element('li', 'jp-vram-Sites-row', { role: 'site-row' });
    item.dataset.vramDevice = row.device;
    item.dataset.vramLine = String(row.line);
    if (row.cellId !== null) {
      item.dataset.vramCellId = row.cellId;
    }
    if (row.executionCount !== null) {
      item.dataset.vramExecutionCount = String(row.executionCount);
    }
    setBytesData(item, row.bytes);
    const head = element('div', 'jp-vram-Sites-rowHead');
    head.append(
      element('span', 'jp-vram-Sites-where', {
        text: row.inNotebook
          ? row.label
          : trans.__('outside the notebook: %1', row.label)
      }),
      element('span', 'jp-vram-Sites-bytes', {
        text: trans._n(
          '%2 · %1 alloc',
          '%2 · %1 allocs',
          row.count,
          formatBytes(row.bytes, this.settings.units)
        )
      })
    );
    item.appendChild(head);
    if (row.code !== null) {
      item.appendChild(
        element('code', 'jp-vram-Sites-code', { text: row.code })
      );
    }
    if (row.library !== null) {
      item.appendChild(
        element('div', 'jp-vram-Sites-library', { text: `↳ ${row.library}` })
      );
    }
    if (row.inConsole) {
      item.dataset.vramConsole = 'true';
      item.title = trans.__('Ran in a console: there is no cell to go to.');
    } else if (
      row.inNotebook &&
      (row.cellId !== null || row.executionCount !== null)
    ) {
      item.classList.add('jp-vram-Sites-jump');
      item.title = trans.__('Go to this line');
      makeActivatable(item, () => this._actions.jumpTo(row));
    }
    return item;
  }

  private _actions: AllocationSitesView.IActions;
  private _consoleCells: ConsoleCells | null;
  private _recorder: AllocationRecorder | null = null;
  private _asOf: HTMLElement;
  private _model: IKernelMemoryModel | null = null;
  private _rows: { device: string; rows: SiteRow[] }[] = [];
  /** The devices whose fold of small sites the user opened. */
  private _openFolds = new Set<string>();
  private _toggle: HTMLInputElement;
  private _status: HTMLElement;
  private _refresh: HTMLButtonElement;
  private _exportGpu: HTMLButtonElement;
  private _exportHost: HTMLButtonElement;
  private _error: HTMLElement;
  private _devices: HTMLElement;
}

/**
 * When the listing was made, and whether cells ran since. The listing
 * changes only on Refresh, so this tells the user how current it is.
 */
export function asOfText(listedAt: number, cellsSince: number): string {
  if (cellsSince === 0) {
    return trans.__('Listed at %1.', clockTime(listedAt));
  }
  return trans._n(
    'Listed at %2. %1 cell has run since: Refresh to see what the lines hold now.',
    'Listed at %2. %1 cells have run since: Refresh to see what the lines hold now.',
    cellsSince,
    clockTime(listedAt)
  );
}

/**
 * What the toggle's state line says: on or off, and what it costs.
 * `gpuVisible` says whether the kernel sees a GPU, or is null when that is
 * not known yet.
 */
export function statusText(
  state: RecordingState | null,
  available: boolean,
  busy: boolean,
  settings: VramSettings,
  gpuVisible: boolean | null = null
): string {
  if (!available) {
    return trans.__('The memory helper is not running in this kernel.');
  }
  const waiting = busy ? ' ' + trans.__('(waiting for the kernel…)') : '';
  if (state === null) {
    return (
      trans.__('Recording state unknown: Refresh asks the kernel.') + waiting
    );
  }
  if (!state.enabled) {
    return (
      trans.__(
        'Recording is off: it costs nothing. Tick "Record allocations" to see which lines hold memory.'
      ) + waiting
    );
  }
  const parts: string[] = [];
  const host = state.host;
  if (host.state === 'recording' || host.state === 'shared') {
    const overhead = formatBytes(host.overhead_bytes, settings.units);
    parts.push(
      host.state === 'shared'
        ? trans.__(
            'host: tracemalloc, %1, started by someone else: left running when off, %2 of traces',
            framesText(host.frames),
            overhead
          )
        : trans.__(
            'host: tracemalloc, %1, %2 of traces',
            framesText(host.frames),
            overhead
          )
    );
  }
  const gpu = state.gpu;
  if (gpu.state === 'recording') {
    // The count is written as the restart sentence beside it writes counts,
    // "200,000" rather than "200000".
    parts.push(
      trans.__(
        "GPU: PyTorch's allocator history, last %1 events",
        gpu.max_entries?.toLocaleString('en-US') ?? '?'
      )
    );
  } else if (gpu.state === 'shared') {
    parts.push(
      trans.__(
        "GPU: PyTorch's allocator history as someone else started it (read as it is, left running when off)"
      )
    );
  } else if (gpuVisible === false && gpu.state === 'waiting') {
    // The helper waits for CUDA, which will never come up without a GPU.
    parts.push(
      trans.__('no GPU is visible to this kernel, so only the host is recorded')
    );
  } else if (gpu.reason) {
    parts.push(trans.__('GPU %1: %2', gpu.state, gpu.reason));
  }
  return (
    trans.__('Recording on: %1.', parts.join('; ')) +
    restartText(state)
      .map(sentence => ` ${sentence}`)
      .join('') +
    waiting
  );
}

/**
 * What restarted while recording, and why, with one sentence per restarted
 * part. A restart loses history, so it is said rather than done silently.
 */
export function restartText(state: RecordingState): string[] {
  const sentences: string[] = [];
  if (state.host.state === 'recording' && state.host.restarted_at !== null) {
    sentences.push(
      hostRestartText(state.host, clockTime(state.host.restarted_at))
    );
  }
  if (state.gpu.state === 'recording' && state.gpu.restarted_at !== null) {
    sentences.push(
      gpuRestartText(state.gpu, clockTime(state.gpu.restarted_at))
    );
  }
  return sentences;
}

/**
 * Formats a stack depth as "16 frames", or "1 frame", which the setting
 * allows, or "? frames" when unknown.
 */
function framesText(frames: number | null): string {
  return frames === null
    ? trans.__('? frames')
    : trans._n('%2 frame', '%2 frames', frames, formatCount(frames));
}

function hostRestartText(host: HostRecording, at: string): string {
  const frames = framesText(host.frames);
  switch (host.restart_reason) {
    case 'symbolizer':
      return trans.__(
        'Host recording restarted at %1 while PyTorch loaded its stack symbolizer (recording that load would have taken minutes); earlier host allocations are not attributed.',
        at
      );
    case 'stopped_elsewhere':
      return trans.__(
        'tracemalloc was stopped outside this panel; host recording started it again with %1 at %2: earlier host allocations are not attributed.',
        frames,
        at
      );
    default:
      return trans.__(
        'Host recording restarted with %1 at %2; earlier host allocations are not attributed.',
        frames,
        at
      );
  }
}

function gpuRestartText(gpu: GpuRecording, at: string): string {
  const entries = (gpu.max_entries ?? 0).toLocaleString('en-US');
  if (gpu.restart_reason === 'stopped_elsewhere') {
    return trans.__(
      "PyTorch's allocator history was switched off outside this panel; GPU recording started it again with %1 events at %2: GPU memory allocated while it was off is not attributed.",
      entries,
      at
    );
  }
  return gpu.restart_kept_stacks
    ? trans.__(
        'GPU history restarted with %1 events at %2: earlier alloc/free events are gone from the snapshot; live memory keeps its lines.',
        entries,
        at
      )
    : trans.__(
        'GPU recording restarted with %1 events at %2; earlier GPU allocations may not be attributed.',
        entries,
        at
      );
}

/** The types that go with AllocationSitesView. */
export namespace AllocationSitesView {
  /** The things the "Lines" tab asks its host to do when the user clicks. */
  export interface IActions {
    /**
     * Turns recording on or off. It runs the command, so that there is only
     * one code path.
     */
    setRecording(enabled: boolean): void;
    /** Activates the row's cell and puts the cursor on its line. */
    jumpTo(row: SiteRow): void;
    exportGpuSnapshot(): void;
    exportHostCsv(): void;
  }

  /** The options a new AllocationSitesView is constructed with. */
  export interface IOptions {
    settings: VramSettings;
    actions: IActions;
    /**
     * The ids of the page's console cells, whose lines are labelled as a
     * console's.
     */
    consoleCells?: ConsoleCells | null;
  }
}
