/**
 * The "Cells" view of the sidebar has one row per executed cell, with its
 * execution count, memory change, peak, GPU utilisation and energy (where
 * the records have them), duration and status, the bytes still alive from
 * it while allocations are recorded, and the memory of the kernel's
 * processes where they held some worth showing. Every column sorts the
 * table. A click on a row, or Enter or Space on it, goes to the cell and
 * shows the row's GPU load and hints below the table; buttons export or
 * clear the history.
 *
 * The list is virtualised: rows have a fixed height, and only the rows in
 * the viewport (plus a few) exist in the DOM, reused as the list scrolls, so
 * 10,000 records cost what 30 do. The sorted order is cached per history
 * version and sort, and computed again only when records came in (or, sorted
 * by Alive, when new alive figures came in).
 *
 * Kernel text (error types, cell ids) goes in through textContent only.
 */
import { clusterAlongside } from './cellClusterFigures';
import { processesAlongside } from './cellProcessFigures';
import { Message } from '@lumino/messaging';

import { formatExecutionCount } from './cellFormat';
import { createHeaderRow } from './cellColumns';
import { CellHistoryToolbar } from './CellHistoryToolbar';
import { CellLoadDetail } from './CellLoadDetail';
import { AllocationRecorder } from '../allocations/AllocationRecorder';
import { cellAliveOf, cellAliveText, CellAliveText } from './cellAlive';
import { cellTotalsOf, cellWarningLevel } from '../../model/cellFigures';
import { CellHistoryEntry } from '../../model/CellHistory';
import { ConsoleCells } from '../../model/ConsoleCells';
import {
  CellSort,
  CellSortKey,
  FIRST_SORT_DIRECTION,
  sortCellEntries
} from './cellSort';
import { ModelChange } from '../../model/IKernelMemoryModel';
import { CELL_ROW_HEIGHT, CellHistoryRow } from './CellHistoryRow';
import { element, setHidden, setText } from '../../ui/dom';
import { ModelView } from '../../ui/ModelView';
import { follow } from '../../ui/follow';
import { trans } from '../../text/translation';

const RELEVANT: ReadonlySet<ModelChange> = new Set<ModelChange>([
  'cells',
  'hello'
]);

/** The number of rows rendered above and below the viewport. */
const OVERSCAN = 4;

/** The viewport height assumed before layout, and in tests that have no layout. */
const FALLBACK_VIEWPORT_HEIGHT = 400;

// The view's texts are functions, so that they are translated when shown
// rather than when the module loads.
const EMPTY_TEXT = (): string =>
  trans.__(
    'No cell has run since the memory helper started. Run a cell to see what it does to memory.'
  );
const EARLIER_ROWS_TEXT = (): string =>
  trans.__(
    'Dimmed rows: cells an earlier kernel process ran (before a restart). Hover one for its kernel start.'
  );
const CLEARED_TEXT = (): string =>
  trans.__(
    'The cell history was cleared. Cells that run from now on appear here.'
  );

/**
 * The table's class while the Alive column has nothing to show, so that the
 * column gives its room to the figures.
 */
const NO_ALIVE_CLASS = 'jp-vram-CellTable-noAlive';
/**
 * The table's class while no record has processes worth showing, which hides
 * the Processes column.
 */
const NO_PROCESSES_CLASS = 'jp-vram-CellTable-noProcesses';

/** The table's class while no record has cluster figures, hiding the Cluster column. */
const NO_CLUSTER_CLASS = 'jp-vram-CellTable-noCluster';

/**
 * The table's class while no record has GPU load figures, so that the load
 * columns give their room too.
 */
const NO_LOAD_CLASS = 'jp-vram-CellTable-noLoad';

/**
 * The sidebar's "Cells" tab, a sortable table with one row per executed cell.
 */
export class CellHistoryView extends ModelView {
  constructor(options: CellHistoryView.IOptions) {
    super(options.settings);
    this._actions = options.actions ?? {};
    this._consoleCells = options.consoleCells ?? null;
    // A console's cell may become known after its record came, when a console
    // panel is added late, and then its row is labelled as a console's.
    this._consoleCells?.changed.connect(this.requestRender, this);
    this.addClass('jp-vram-CellHistory');
    this.node.dataset.vramRole = 'cell-history';

    const toolbar = new CellHistoryToolbar(this._actions);
    this._toolbar = toolbar;

    this._message = element('div', 'jp-vram-CellHistory-message', {
      role: 'cell-message'
    });
    this._message.setAttribute('aria-live', 'polite');
    this._message.hidden = true;

    const table = (this._table = element('div', 'jp-vram-CellTable'));
    table.setAttribute('role', 'table');
    table.setAttribute('aria-label', trans.__('Cell memory history'));
    const header = createHeaderRow(key => this.sortBy(key), this._headers);
    this._viewport = element('div', 'jp-vram-CellTable-viewport', {
      role: 'cell-rows'
    });
    this._viewport.setAttribute('role', 'rowgroup');
    this._spacer = element('div', 'jp-vram-CellTable-spacer');
    this._viewport.appendChild(this._spacer);
    this._viewport.addEventListener('scroll', () => this._renderRows());
    this._empty = element('div', 'jp-vram-CellHistory-empty', {
      text: EMPTY_TEXT()
    });
    table.append(header, this._viewport);
    this._earlierNote = element('div', 'jp-vram-CellHistory-earlier', {
      role: 'earlier-rows-note',
      text: EARLIER_ROWS_TEXT()
    });
    this._earlierNote.hidden = true;
    this._detail = new CellLoadDetail(this._actions.insertSnippet ?? null);
    this.node.append(
      toolbar.node,
      this._message,
      this._earlierNote,
      table,
      this._detail.node,
      this._empty
    );
  }

  protected readonly relevantChanges = RELEVANT;

  /** The current sort, or null for record order, newest first. */
  get sort(): CellSort | null {
    return this._sort;
  }

  /** The number of rows that show a record now, for tests and benchmarks. */
  get renderedRowCount(): number {
    return this._rowsInUse;
  }

  /** The entries in display order, cached per history version and sort. */
  get orderedEntries(): readonly CellHistoryEntry[] {
    return this._ordered();
  }

  /**
   * Sorts by `key`. A new key sorts in its first direction
   * (FIRST_SORT_DIRECTION, which puts the largest figures first), and the
   * same key again flips the direction; `direction` forces one.
   */
  sortBy(key: CellSortKey, direction?: CellSort['direction']): void {
    const flipped: CellSort['direction'] =
      this._sort?.direction === 'ascending' ? 'descending' : 'ascending';
    const next: CellSort['direction'] =
      direction ??
      (this._sort?.key === key ? flipped : FIRST_SORT_DIRECTION[key]);
    this._sort = { key, direction: next };
    this._cache = null;
    for (const [k, h] of this._headers) {
      h.setAttribute('aria-sort', k === key ? next : 'none');
    }
    this.requestRender();
  }

  /** Shows a short message above the table; an empty text hides it. */
  showMessage(text: string): void {
    setText(this._message, text);
    setHidden(this._message, !text);
  }

  protected onModelReplaced(): void {
    this._cache = null;
    this._selectedKey = null;
    this._processesVersion = -1;
    this.showMessage('');
    this._viewport.scrollTop = 0;
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    // The viewport's height is known only once the view is shown.
    this._renderRows();
  }

  protected render(): void {
    const entries = this._ordered();
    const n = entries.length;
    this._toolbar.showCount(n);
    setHidden(this._empty, n > 0);
    // Records are kept oldest first, so the oldest one says whether any comes
    // from an earlier kernel process.
    const cells = this.model?.cells;
    const oldest = cells?.entries[0];
    setHidden(this._earlierNote, !oldest || oldest.session === cells!.session);
    if (n === 0) {
      // Record ids at or below the floor were cleared or evicted; an eviction
      // leaves newer rows, so an empty table with a floor was cleared.
      setText(
        this._empty,
        (this.model?.cells.floor ?? 0) > 0 ? CLEARED_TEXT() : EMPTY_TEXT()
      );
    }
    // The Alive column shows while allocation recording is on or has left
    // figures.
    const recorder = this._recorder;
    // A kernel whose recording state is unknown, as after a page reload, is
    // asked once, as the Lines tab does; otherwise the column would wait for a
    // visit to that tab.
    recorder?.ensureKnown();
    const showAlive =
      !!recorder && (recorder.enabled || recorder.alive.size > 0);
    this._table.classList.toggle(NO_ALIVE_CLASS, !showAlive);
    this._table.classList.toggle(NO_PROCESSES_CLASS, !this._anyProcesses());
    this._table.classList.toggle(NO_CLUSTER_CLASS, !this._anyCluster());
    this._table.classList.toggle(NO_LOAD_CLASS, !this._anyLoad());
    const key = this._selectedKey;
    this._detail.show((key !== null && cells?.get(key)) || null);
    this._toolbar.enable(n > 0);
    const height = `${n * CELL_ROW_HEIGHT}px`;
    if (this._spacer.style.height !== height) {
      this._spacer.style.height = height;
    }
    this._renderRows();
  }

  /** Whether any record has GPU load figures, worked out once per history version. */
  private _anyLoad(): boolean {
    const cells = this.model?.cells;
    if (!cells) {
      return false;
    }
    if (
      this._loadSeen?.source !== cells ||
      this._loadSeen.version !== cells.version
    ) {
      const found = cells.entries.some(e => !!e.record.gpu_load?.length);
      this._loadSeen = { source: cells, version: cells.version, found };
    }
    return this._loadSeen.found;
  }

  /** Whether any record has processes worth a column, worked out once per history version. */
  private _anyProcesses(): boolean {
    const cells = this.model?.cells;
    if (!cells) {
      return false;
    }
    if (this._processesVersion !== cells.version) {
      this._processesVersion = cells.version;
      this._hasProcesses = cells.entries.some(
        e => processesAlongside(e.record) !== null
      );
      this._hasCluster = cells.entries.some(
        e => clusterAlongside(e.record) !== null
      );
    }
    return this._hasProcesses;
  }

  /** Whether any record has cluster figures (worked out with the processes', once per history version). */
  private _anyCluster(): boolean {
    this._anyProcesses();
    return this._hasCluster;
  }

  /**
   * The entries in display order, sorted again only when the history, the
   * sort or, for a sort by Alive, the alive figures changed.
   */
  private _ordered(): readonly CellHistoryEntry[] {
    const cells = this.model?.cells;
    if (!cells) {
      return [];
    }
    // When sorted by Alive, the order also depends on the latest alive figures.
    const aliveVersion = this._sort?.key === 'alive' ? this._aliveVersion : 0;
    const cache = this._cache;
    if (
      cache &&
      cache.version === cells.version &&
      cache.source === cells &&
      cache.aliveVersion === aliveVersion
    ) {
      return cache.entries;
    }
    const alive = this._recorder?.alive;
    const entries = this._sort
      ? sortCellEntries(cells.entries, this._sort, {
          aliveBytes: entry =>
            alive
              ? (cellAliveOf(entry, alive, cells)?.total_bytes ?? null)
              : null
        })
      : cells.entries.slice().reverse();
    this._cache = {
      version: cells.version,
      source: cells,
      aliveVersion,
      entries
    };
    return entries;
  }

  /** Shows the rows that are in the viewport, and OVERSCAN more on each side, reusing row nodes. */
  private _renderRows(): void {
    const entries = this._ordered();
    const n = entries.length;
    const viewportHeight =
      this._viewport.clientHeight || FALLBACK_VIEWPORT_HEIGHT;
    const first = Math.max(
      0,
      Math.floor(this._viewport.scrollTop / CELL_ROW_HEIGHT) - OVERSCAN
    );
    const last = Math.min(
      n,
      Math.ceil((this._viewport.scrollTop + viewportHeight) / CELL_ROW_HEIGHT) +
        OVERSCAN
    );
    const count = Math.max(0, last - first);
    const focusedKey = this._focusedRowKey();
    while (this._rows.length < count) {
      const row = new CellHistoryRow(shown => this._goToCell(shown.node));
      this._rows.push(row);
      this._spacer.appendChild(row.node);
    }
    const units = this.settings.units;
    const threshold = this.settings.warningThresholdPercent;
    const totals = this.model ? cellTotalsOf(this.model) : null;
    const session = this.model?.cells.session ?? 0;
    for (let i = 0; i < this._rows.length; i++) {
      const row = this._rows[i];
      if (i < count && totals) {
        const index = first + i;
        const entry = entries[index];
        row.show(
          entry,
          index,
          units,
          cellWarningLevel(entry.record, entry.summary, totals, threshold),
          session,
          this._aliveOf(entry, units),
          this._ranInConsole(entry)
        );
      } else {
        row.hide();
      }
    }
    this._rowsInUse = totals ? count : 0;
    if (focusedKey !== null) {
      this._keepFocusOn(focusedKey);
    }
  }

  /** The record key of the row that has the keyboard focus; null when none has. */
  private _focusedRowKey(): string | null {
    const active = this.node.ownerDocument.activeElement;
    return active instanceof HTMLElement &&
      active.parentElement === this._spacer
      ? (active.dataset.vramKey ?? null)
      : null;
  }

  /**
   * Keeps the keyboard focus on the row of record `key`. Rows are reused as
   * the list scrolls or grows, so the focused node may now show another
   * record (a Tab to a row below the viewport scrolls it, and the rows
   * shift). The focus moves to the row that shows the record, wherever that
   * is now, or stays put when the record is no longer rendered.
   */
  private _keepFocusOn(key: string): void {
    const row = this._rows.find(
      r => !r.node.hidden && r.node.dataset.vramKey === key
    );
    if (row && row.node !== this.node.ownerDocument.activeElement) {
      row.node.focus({ preventScroll: true });
    }
  }

  /**
   * The allocation recording of the shown kernel, whose per-cell live bytes
   * fill the Alive column on the latest record of each cell.
   */
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
    this._aliveVersion++;
    this.requestRender();
  }

  dispose(): void {
    this._consoleCells?.changed.disconnect(this.requestRender, this);
    this._recorder?.changed.disconnect(this._onRecorderChanged, this);
    this._recorder = null;
    super.dispose();
  }

  private _onRecorderChanged(_: unknown, change: string): void {
    if (change === 'alive') {
      this._aliveVersion++; // A table sorted by Alive must sort again.
      this.requestRender();
    } else if (change === 'recording') {
      this.requestRender(); // The Alive column shows while recording is on.
    }
  }

  /** The Alive column's text of `entry`; null without allocation recording. */
  private _aliveOf(
    entry: CellHistoryEntry,
    units: 'binary' | 'decimal'
  ): CellAliveText | null {
    const cells = this.model?.cells;
    if (!this._recorder || !cells) {
      return null;
    }
    return cellAliveText(
      cellAliveOf(entry, this._recorder.alive, cells),
      units
    );
  }

  /** Whether the record's code ran in a console: it has no cell id, or a console cell's. */
  private _ranInConsole(entry: CellHistoryEntry): boolean {
    const cellId = entry.record.cell_id;
    return cellId === null || (this._consoleCells?.has(cellId) ?? false);
  }

  /**
   * Goes to the cell of the record that `rowNode` shows. The record is found
   * by the row's key, because the row may have been reused since the click.
   */
  private _goToCell(rowNode: HTMLElement): void {
    const key = rowNode.dataset.vramKey;
    const entry = key ? this.model?.cells.get(key) : undefined;
    if (!entry) {
      return;
    }
    const count = formatExecutionCount(entry.record.execution_count);
    // The record's GPU load and hints show below the table, for a console's
    // run too.
    this._selectedKey = entry.key;
    this._detail.show(entry);
    if (this._ranInConsole(entry)) {
      this.showMessage(
        trans.__('%1 ran in a console: there is no cell to go to.', count)
      );
      return;
    }
    const jump = this._actions.revealCell;
    if (!jump) {
      return;
    }
    this.showMessage('');
    void jump(entry).then(
      found => {
        if (!found) {
          this.showMessage(
            trans.__(
              'Cell %1 is not in this notebook: it was deleted, or ran in a console or in another notebook on this kernel.',
              count
            )
          );
        }
      },
      reason =>
        this.showMessage(
          trans.__('Could not go to cell %1: %2', count, String(reason))
        )
    );
  }

  private _actions: CellHistoryView.IActions;
  private _detail: CellLoadDetail;
  private _selectedKey: string | null = null;
  private _loadSeen: {
    source: object;
    version: number;
    found: boolean;
  } | null = null;
  private _consoleCells: ConsoleCells | null;
  private _recorder: AllocationRecorder | null = null;
  private _sort: CellSort | null = null;
  private _aliveVersion = 0;
  private _cache: {
    version: number;
    source: object;
    aliveVersion: number;
    entries: readonly CellHistoryEntry[];
  } | null = null;
  private _headers = new Map<CellSortKey, HTMLElement>();
  private _toolbar: CellHistoryToolbar;
  private _processesVersion = -1;
  private _hasProcesses = false;
  private _hasCluster = false;
  private _message: HTMLElement;
  private _table: HTMLElement;
  private _viewport: HTMLElement;
  private _spacer: HTMLElement;
  private _empty: HTMLElement;
  private _earlierNote: HTMLElement;
  private _rows: CellHistoryRow[] = [];
  private _rowsInUse = 0;
}

/** The types that go with CellHistoryView. */
export namespace CellHistoryView {
  /**
   * What the view asks its host to do. The plugin runs a command for each,
   * except revealCell, which it does itself (revealCell.ts).
   */
  export interface IActions {
    /** Activates the record's cell and scrolls to it; resolves to false if the cell is gone. */
    revealCell?: (entry: CellHistoryEntry) => Promise<boolean>;
    /** Exports the history in `format`. */
    exportHistory?: (format: 'csv' | 'json') => void;
    /** Clears the history, after asking. */
    clearHistory?: () => void;
    /** Inserts a snippet by id below the active cell; the "input-bound?" hint's button uses it. */
    insertSnippet?: (id: string) => void;
  }

  /** The options a new CellHistoryView is constructed with. */
  export interface IOptions {
    /** The settings that the view starts with. */
    settings: ConstructorParameters<typeof ModelView>[0];
    actions?: IActions;
    /** The ids of the page's console cells, so that a record of one is labelled a console's. */
    consoleCells?: ConsoleCells | null;
  }
}
