/**
 * Puts a memory badge on the executed code cells of one notebook panel, and
 * keeps each badge in step with its cell's latest record.
 *
 * Notebooks may be windowed. JupyterLab creates a widget per cell, but an
 * off-screen cell may still be a placeholder without DOM (`inputArea` is
 * null until `cell.ready` resolves), and in 'full' windowing mode a rendered
 * cell's children are detached while it is out of the viewport. Therefore:
 *   - the badge goes inside the cell's input wrapper, so that it travels
 *     with the wrapper when the cell is detached and attached again. It is
 *     never a direct child of the cell node, because JupyterLab's layout
 *     relies on that node's first child;
 *   - a cell that is not ready yet gets its badge when `ready` resolves;
 *   - cells are found by their model id (the record's `cell_id`), never by
 *     index, so that a moved cell keeps its badge. The map from id to widget
 *     is rebuilt lazily after the cell list changed.
 * A new record updates only its own cell's badge, with one map lookup and a
 * few DOM writes, whatever the notebook's size.
 *
 * The cell that was running when the kernel died gets a "kernel died" mark
 * beside its badge, because its record never comes, until the death is
 * cleared when the kernel restarts or is changed.
 */
import { processesAlongside } from './cellProcessFigures';
import { clusterAlongside } from './cellClusterFigures';
import type { AllocationRecorder } from '../allocations/AllocationRecorder';
import { cellAliveText } from './cellAlive';
import { IDisposable } from '@lumino/disposable';
import { ISignal } from '@lumino/signaling';

import { formatExecutionCount, formatOutcome } from './cellFormat';
import { cellHints } from './cellHints';
import { cellLoadOf } from './cellLoad';
import { describeCellWithLoad } from './cellLoadText';
import {
  cellTotalsOf,
  cellWarningLevel,
  CellTotals
} from '../../model/cellFigures';
import {
  CellHistory,
  CellHistoryChange,
  CellHistoryEntry
} from '../../model/CellHistory';
import {
  CELL_METADATA_KEY,
  readSavedFigures,
  sameSavedFigures,
  savedFiguresOf,
  summaryOfSaved
} from './cellMetadata';
import { VramSettings } from '../../settings/settings';
import {
  IKernelMemoryModel,
  ModelChange
} from '../../model/IKernelMemoryModel';
import { formatBytes } from '../../text/format';
import { kernelDeathText } from '../../model/lazyKernelDeath';
import { MonitorState } from '../../model/MonitorState';
import {
  CellBadgeContent,
  createCellBadgeNode,
  renderCellBadge
} from './CellBadge';
import { element, setTitle } from '../../ui/dom';
import { trans } from '../../text/translation';

/** What the badges need of a cell widget; JupyterLab's Cell fits. */
export interface IBadgeCell {
  readonly model: {
    readonly id: string;
    readonly type: string;
    getMetadata(key: string): unknown;
    setMetadata(key: string, value: any): void;
  };
  readonly node: HTMLElement;
  /** Null while the cell is a placeholder in a windowed notebook. */
  readonly inputArea: { readonly node: HTMLElement } | null;
  readonly ready: Promise<void>;
  readonly isDisposed: boolean;
}

/** What the badges need of a notebook widget; JupyterLab's Notebook fits. */
export interface IBadgeNotebook {
  readonly widgets: ReadonlyArray<IBadgeCell>;
  readonly model: {
    readonly cells: { readonly changed: ISignal<any, any> };
  } | null;
  readonly modelChanged: ISignal<any, void>;
  readonly isDisposed: boolean;
}

/**
 * The states of a kernel from which no record can come, so that any badge
 * shown then is an earlier kernel's.
 */
const NO_RECORDS_STATES: ReadonlySet<MonitorState> = new Set<MonitorState>([
  'non-python',
  'helper-failed',
  'protocol-mismatch'
]);

/**
 * The tooltip's note on an earlier kernel's badge; a function so that it is
 * translated when shown.
 */
const EARLIER_KERNEL_NOTE = (): string =>
  trans.__(
    "From an earlier kernel process: this cell has no figures from the notebook's kernel now."
  );

/** JupyterLab's class of a cell's input wrapper, which holds the badge. */
const INPUT_WRAPPER_CLASS = 'jp-Cell-inputWrapper';
/** The class added to the element that holds a badge, for the stylesheet. */
const HOST_CLASS = 'jp-vram-CellBadge-host';

/** Keeps a memory badge on every executed code cell of one notebook panel. */
export class NotebookCellBadges implements IDisposable {
  constructor(options: NotebookCellBadges.IOptions) {
    this._notebook = options.notebook;
    this._model = options.model;
    this._settings = options.settings;
    this._notebook.modelChanged.connect(this._onNotebookModelChanged, this);
    this._connectCells();
    this._model.cells.changed.connect(this._onRecords, this);
    this._model.changed.connect(this._onModelChanged, this);
    this._alive = options.alive ?? null;
    this._alive?.changed.connect(this._onAliveChanged, this);
    this.refreshAll();
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  get settings(): VramSettings {
    return this._settings;
  }

  set settings(settings: VramSettings) {
    const old = this._settings;
    this._settings = settings;
    if (
      old.showCellBadges !== settings.showCellBadges ||
      old.units !== settings.units ||
      old.warningThresholdPercent !== settings.warningThresholdPercent
    ) {
      this.refreshAll();
    }
  }

  /** The number of cells that have a badge now, for tests and benchmarks. */
  get badgeCount(): number {
    let count = 0;
    for (const cell of this._notebook.widgets) {
      if (this._badges.has(cell)) {
        count++;
      }
    }
    return count;
  }

  /** Brings the badge of one cell, found by its model id, up to date. */
  updateCell(cellId: string): void {
    const cell = this._cellById(cellId);
    if (cell) {
      this._render(cell, this._model.cells.latestForCell(cellId));
    }
  }

  /**
   * Renders or removes the badge of every code cell, and the death mark. It
   * runs when the settings, the kernel or the whole history changed.
   */
  refreshAll(): void {
    this._noRecords = this._kernelSendsNoRecords();
    const cells = this._model.cells;
    for (const cell of this._notebook.widgets) {
      if (cell.model.type === 'code') {
        this._render(cell, cells.latestForCell(cell.model.id));
      }
    }
    this._renderDeath();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._notebook.modelChanged.disconnect(this._onNotebookModelChanged, this);
    this._cellList?.changed.disconnect(this._onCellsChanged, this);
    this._model.cells.changed.disconnect(this._onRecords, this);
    this._model.changed.disconnect(this._onModelChanged, this);
    this._alive?.changed.disconnect(this._onAliveChanged, this);
    for (const cell of this._notebook.widgets) {
      this._removeBadge(cell);
    }
    this._deathMark?.node.remove();
    this._deathMark = null;
  }

  // -------------------------------------------------------------------------

  private _onRecords(_: CellHistory, change: CellHistoryChange): void {
    if (change.kind !== 'added') {
      // The history was cleared, or saved records were restored, so any
      // cell's latest record may differ.
      this.refreshAll();
      return;
    }
    const cells = this._model.cells;
    const seen = new Set<string>();
    // The entries are read newest first, because a batch, such as a history
    // reply, may hold several runs of one cell, and only the latest counts.
    for (let i = change.entries.length - 1; i >= 0; i--) {
      const cellId = change.entries[i].record.cell_id;
      if (cellId === null || seen.has(cellId)) {
        continue;
      }
      seen.add(cellId);
      const cell = this._cellById(cellId);
      if (!cell) {
        continue; // The cell is in another notebook on this kernel, or was deleted.
      }
      const latest = cells.latestForCell(cellId);
      if (latest && this._settings.storeRecordsInNotebookMetadata) {
        this._save(cell, latest);
      }
      this._render(cell, latest);
    }
  }

  private _onAliveChanged(_: unknown, change: string): void {
    if (change === 'alive') {
      this.refreshAll(); // The tooltips say what each cell still holds.
    }
  }

  private _onModelChanged(_: IKernelMemoryModel, change: ModelChange): void {
    if (change === 'hello') {
      // The device totals may have changed, and the warning levels with them;
      // and a new kernel process makes the records before it earlier ones.
      this.refreshAll();
    } else if (
      change === 'state' &&
      this._noRecords !== this._kernelSendsNoRecords()
    ) {
      // The kernel now sends no records, or sends them again, so every badge
      // is, or is no longer, an earlier kernel's.
      this.refreshAll();
    } else if (change === 'death') {
      // The cell that the dead kernel was running gets its mark, and its
      // badge leaves out the outcome that the mark shows (see _liveContent).
      this.refreshAll();
    }
  }

  /** Marks the cell that the dead kernel was running, or drops the old mark. */
  private _renderDeath(): void {
    const death = this._model.death;
    const cellId = death?.runningCell?.cellId ?? null;
    const cell = cellId !== null ? this._cellById(cellId) : undefined;
    const old = this._deathMark;
    if (old && (old.cell !== cell || !death)) {
      old.node.remove();
      this._deathMark = null;
    }
    if (!death || !cell || cell.isDisposed || !cell.inputArea) {
      return;
    }
    let mark = this._deathMark;
    if (!mark || !mark.node.parentElement) {
      const node = element('div', 'jp-vram-CellBadge jp-vram-CellBadge-died', {
        role: 'cell-death-badge',
        text: trans.__('kernel died')
      });
      const host = badgeHost(cell);
      host.classList.add(HOST_CLASS);
      host.appendChild(node);
      mark = this._deathMark = { cell, node };
    }
    // The mark shows at once, and its tooltip explains the death once the
    // code that words the explanation has loaded.
    const text = kernelDeathText(() => {
      if (!this.isDisposed) {
        this._renderDeath();
      }
    });
    if (!text) {
      return;
    }
    const explanation = text.explainKernelDeath(death, this._settings.units);
    const title = [explanation.summary, ...explanation.details].join('\n');
    setTitle(mark.node, title);
    mark.node.dataset.vramVerdict = explanation.verdict;
  }

  private _onNotebookModelChanged(): void {
    this._connectCells();
    this.refreshAll();
  }

  private _connectCells(): void {
    this._cellList?.changed.disconnect(this._onCellsChanged, this);
    this._cellList = this._notebook.model?.cells ?? null;
    this._cellList?.changed.connect(this._onCellsChanged, this);
    this._byId = null;
  }

  private _onCellsChanged(): void {
    // New widgets (inserted, moved, pasted, undone) need their badge. The
    // notebook creates them in its own handler of this signal, so the badges
    // are rendered in a microtask, once that handler has run.
    this._byId = null;
    if (!this._syncScheduled) {
      this._syncScheduled = true;
      void Promise.resolve().then(() => {
        this._syncScheduled = false;
        if (!this._isDisposed) {
          this.refreshAll();
        }
      });
    }
  }

  /**
   * The widget of cell `cellId`, from a map that is rebuilt after the cell
   * list changed or when it holds a disposed widget.
   */
  private _cellById(cellId: string): IBadgeCell | undefined {
    if (!this._byId) {
      this._byId = new Map();
      for (const cell of this._notebook.widgets) {
        this._byId.set(cell.model.id, cell);
      }
    }
    const cell = this._byId.get(cellId);
    if (cell && cell.isDisposed) {
      this._byId = null;
      return this._cellById(cellId);
    }
    return cell;
  }

  /**
   * Renders the badge of `cell` from `entry`, its latest record, or from the
   * figures saved in its metadata when it has none. A placeholder cell gets
   * its badge once it is ready.
   */
  private _render(cell: IBadgeCell, entry: CellHistoryEntry | undefined): void {
    if (cell.isDisposed || cell.model.type !== 'code') {
      return;
    }
    if (!this._settings.showCellBadges) {
      this._removeBadge(cell);
      return;
    }
    if (!cell.inputArea) {
      this._whenReady(cell);
      return;
    }
    const content = entry ? this._liveContent(entry) : this._savedContent(cell);
    if (!content) {
      this._removeBadge(cell);
      return;
    }
    let node = this._badges.get(cell);
    if (!node || !node.parentElement) {
      node = createCellBadgeNode();
      const host = badgeHost(cell);
      host.classList.add(HOST_CLASS);
      host.appendChild(node);
      this._badges.set(cell, node);
    }
    renderCellBadge(node, content);
  }

  private _kernelSendsNoRecords(): boolean {
    return NO_RECORDS_STATES.has(this._model.state);
  }

  /** The badge content of a live record. */
  private _liveContent(entry: CellHistoryEntry): CellBadgeContent {
    const units = this._settings.units;
    const earlier =
      entry.session !== this._model.cells.session || this._noRecords;
    const title = this._withAlive(
      describeCellWithLoad(entry.record, entry.summary, units),
      entry
    );
    const load = cellLoadOf(entry.record);
    // The cell the kernel died running has a "kernel died" mark beside its
    // badge until the user restarts: the badge need not say it too.
    const marked =
      entry.summary.outcome === 'died' &&
      entry.record.cell_id !== null &&
      this._model.death?.runningCell?.cellId === entry.record.cell_id;
    return {
      summary: entry.summary,
      processes: processesAlongside(entry.record),
      cluster: clusterAlongside(entry.record),
      executionCount: entry.record.execution_count,
      title: earlier ? `${title}\n${EARLIER_KERNEL_NOTE()}` : title,
      outcomeMarked: marked,
      level: cellWarningLevel(
        entry.record,
        entry.summary,
        this._totals(),
        this._settings.warningThresholdPercent
      ),
      saved: false,
      earlier,
      units,
      load,
      hints: cellHints(entry.record, load)
    };
  }

  /**
   * Adds to `title` what the cell allocated that is still alive, while
   * allocation recording gives that figure.
   */
  private _withAlive(title: string, entry: CellHistoryEntry): string {
    const cellId = entry.record.cell_id;
    const alive =
      cellId !== null && this._alive
        ? cellAliveText(this._alive.alive.get(cellId), this._settings.units)
        : null;
    return alive ? `${title}\n${alive.lines.join('\n')}` : title;
  }

  /** The badge content of the figures saved in a cell's metadata; null when it has none. */
  private _savedContent(cell: IBadgeCell): CellBadgeContent | null {
    const saved = readSavedFigures(cell.model.getMetadata(CELL_METADATA_KEY));
    if (!saved) {
      return null;
    }
    const units = this._settings.units;
    const summary = summaryOfSaved(saved);
    const title = [
      summary.source === 'gpu'
        ? trans.__(
            '%1 GPU memory \u2014 saved with the notebook (not from this kernel)',
            formatExecutionCount(saved.execution_count)
          )
        : trans.__(
            '%1 RAM \u2014 saved with the notebook (not from this kernel)',
            formatExecutionCount(saved.execution_count)
          ),
      saved.peak_exact
        ? trans.__('Peak %1', formatBytes(saved.peak_bytes, units))
        : trans.__(
            'Peak %1 (approximate)',
            formatBytes(saved.peak_bytes, units)
          ),
      trans.__('Status: %1', formatOutcome(summary))
    ].join('\n');
    return {
      summary,
      executionCount: saved.execution_count,
      title,
      level: summary.outOfMemory ? 'warning' : 'normal',
      saved: true,
      earlier: false,
      units
    };
  }

  /** Saves `entry`'s figures in the cell's metadata, unless they are there already. */
  private _save(cell: IBadgeCell, entry: CellHistoryEntry): void {
    const figures = savedFiguresOf(entry);
    const current = readSavedFigures(cell.model.getMetadata(CELL_METADATA_KEY));
    if (!sameSavedFigures(current, figures)) {
      cell.model.setMetadata(CELL_METADATA_KEY, figures);
    }
  }

  /** Renders the badge of a placeholder cell once it is ready, waiting once per cell. */
  private _whenReady(cell: IBadgeCell): void {
    if (this._waiting.has(cell)) {
      return;
    }
    this._waiting.add(cell);
    cell.ready.then(
      () => {
        this._waiting.delete(cell);
        if (this._isDisposed || cell.isDisposed || !cell.inputArea) {
          return;
        }
        this._render(cell, this._model.cells.latestForCell(cell.model.id));
      },
      () => this._waiting.delete(cell)
    );
  }

  private _removeBadge(cell: IBadgeCell): void {
    const node = this._badges.get(cell);
    if (node) {
      node.remove();
      this._badges.delete(cell);
    }
  }

  private _totals(): CellTotals {
    return cellTotalsOf(this._model);
  }

  private _notebook: IBadgeNotebook;
  private _model: IKernelMemoryModel;
  private _settings: VramSettings;
  private _cellList: { readonly changed: ISignal<any, any> } | null = null;
  private _byId: Map<string, IBadgeCell> | null = null;
  private _badges = new WeakMap<IBadgeCell, HTMLElement>();
  private _waiting = new WeakSet<IBadgeCell>();
  private _syncScheduled = false;
  private _deathMark: { cell: IBadgeCell; node: HTMLElement } | null = null;
  /** Whether, at the last refreshAll, the kernel was in a state that sends no records. */
  private _noRecords = false;
  private _isDisposed = false;
  private _alive: AllocationRecorder | null = null;
}

/** The types that go with NotebookCellBadges. */
export namespace NotebookCellBadges {
  /** The options a new NotebookCellBadges is constructed with. */
  export interface IOptions {
    notebook: IBadgeNotebook;
    model: IKernelMemoryModel;
    settings: VramSettings;
    /**
     * The kernel's allocation recording, whose figures add to each tooltip what
     * the cell still holds.
     */
    alive?: AllocationRecorder | null;
  }
}

/**
 * The element that holds a cell's badge: the cell's input wrapper, which
 * stays when the input is collapsed. In 'full' windowing, an off-screen
 * cell's wrapper is detached from the cell node but still holds the input
 * area, so it is then found as the input area's parent.
 */
function badgeHost(cell: IBadgeCell): HTMLElement {
  for (const child of Array.from(cell.node.children)) {
    if (child.classList.contains(INPUT_WRAPPER_CLASS)) {
      return child as HTMLElement;
    }
  }
  const input = cell.inputArea!.node;
  const parent = input.parentElement;
  return parent && parent.classList.contains(INPUT_WRAPPER_CLASS)
    ? parent
    : input;
}
