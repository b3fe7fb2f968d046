/**
 * One row of the virtualised table of the "Cells" view (CellHistoryView). It
 * shows a record's execution count, memory change, peak, GPU utilisation
 * (mean and maximum) and energy, duration, status, alive bytes and the memory
 * of the kernel's processes, placed at its index. Rows are reused as the list
 * scrolls, and showing the same entry with the same figures again touches
 * nothing.
 *
 * Text from the kernel, such as error types and cell ids, goes in through
 * textContent only.
 */
import { clusterAlongside } from './cellClusterFigures';
import { processesAlongside } from './cellProcessFigures';
import {
  formatDelta,
  formatDurationShort,
  formatExecutionCount,
  formatOutcomeShort,
  formatPeak,
  formatProcessesShort
} from './cellFormat';
import { CellAliveText } from './cellAlive';
import { CellHistoryEntry } from '../../model/CellHistory';
import { CELL_SORT_KEYS, CellSortKey } from './cellSort';
import {
  element,
  makeActivatable,
  setData,
  setHidden,
  setText
} from '../../ui/dom';
import { formatJoules, formatLoadPercent } from '../../text/gpuLoadText';
import { cellHintKinds, cellHints } from './cellHints';
import { CellLoadSummary, cellLoadOf } from './cellLoad';
import { describeCellWithLoad } from './cellLoadText';
import { trans } from '../../text/translation';

/** The height of one row in pixels, which must match .jp-vram-CellRow in style/sidebar.css. */
export const CELL_ROW_HEIGHT = 22;

/** One reusable row of the virtualised table. */
export class CellHistoryRow {
  /** `activate` is called when the row is clicked, or when Enter or Space is pressed on it. */
  constructor(activate: (row: CellHistoryRow) => void = () => undefined) {
    const node = (this.node = element('div', 'jp-vram-CellRow', {
      role: 'cell-row'
    }));
    node.setAttribute('role', 'row');
    // Going to the cell must not need a mouse, so the row takes the focus and
    // keys.
    makeActivatable(node, () => activate(this));
    const cols = {} as Record<CellSortKey, HTMLElement>;
    for (const key of CELL_SORT_KEYS) {
      const col = element('div', `jp-vram-CellCol jp-vram-CellCol-${key}`);
      col.setAttribute('role', 'cell');
      node.appendChild(col);
      cols[key] = col;
    }
    this._cols = cols;
  }

  readonly node: HTMLElement;

  /**
   * Shows `entry` as row `index`. When nothing that the row shows changed,
   * only its position is set, so that scrolling costs little.
   */
  show(
    entry: CellHistoryEntry,
    index: number,
    units: 'binary' | 'decimal',
    level: 'normal' | 'warning',
    currentSession: number,
    alive: CellAliveText | null = null,
    // Whether the cell ran in a console. A record without a cell id did; the
    // view also knows the ids of the console's cells.
    fromConsole = entry.record.cell_id === null
  ): void {
    const node = this.node;
    setHidden(node, false);
    const top = `${index * CELL_ROW_HEIGHT}px`;
    if (node.style.top !== top) {
      node.style.top = top;
    }
    const earlier = entry.session !== currentSession;
    if (
      this._entry === entry &&
      this._units === units &&
      this._level === level &&
      this._earlier === earlier &&
      this._console === fromConsole &&
      this._alive?.short === alive?.short &&
      this._alive?.lines.join() === alive?.lines.join()
    ) {
      return;
    }
    this._alive = alive;
    this._entry = entry;
    this._units = units;
    this._level = level;
    this._earlier = earlier;
    this._console = fromConsole;
    const r = entry.record;
    const s = entry.summary;
    const console = fromConsole;
    node.dataset.vramKey = entry.key;
    node.dataset.vramRecordId = String(r.record_id);
    if (r.execution_count === null) {
      delete node.dataset.vramExecutionCount;
    } else {
      node.dataset.vramExecutionCount = String(r.execution_count);
    }
    node.dataset.vramStatus = r.status;
    node.dataset.vramLevel = level;
    node.classList.toggle('jp-vram-warning', level === 'warning');
    node.classList.toggle('jp-vram-CellRow-console', console);
    node.classList.toggle('jp-vram-CellRow-error', s.outcome !== 'ok');
    // Records are kept across restarts, so a row from an earlier kernel
    // process is marked, with the kernel start that it came from.
    node.classList.toggle('jp-vram-CellRow-earlier', earlier);
    node.dataset.vramKernelStart = String(entry.session);
    const processes = processesAlongside(r);
    const {
      execution_count: countCol,
      delta: deltaCol,
      peak: peakCol,
      duration: durationCol,
      status: statusCol,
      alive: aliveCol,
      processes: processesCol,
      cluster: clusterCol
    } = this._cols;
    this._showLoad(entry);
    setText(
      processesCol,
      processes ? formatProcessesShort(processes, units) : ''
    );
    const cluster = clusterAlongside(r);
    setText(clusterCol, cluster ? formatDelta(cluster.deltaBytes, units) : '');
    setText(aliveCol, alive?.short ?? '');
    const growing = alive?.growing ?? false;
    aliveCol.classList.toggle('jp-vram-warning', growing);
    node.dataset.vramAlive = alive?.short ?? '';
    node.dataset.vramGrowing = String(growing);
    setText(
      countCol,
      console
        ? trans.__('%1 console', formatExecutionCount(r.execution_count))
        : formatExecutionCount(r.execution_count)
    );
    setText(deltaCol, formatDelta(s.deltaBytes, units));
    setText(peakCol, formatPeak(s.peakBytes, s.peakExact, units));
    setText(durationCol, formatDurationShort(s.durationS));
    setText(statusCol, formatOutcomeShort(s));
    node.title =
      describeCellWithLoad(r, s, units) +
      (earlier
        ? '\n' +
          trans.__(
            'From an earlier kernel process (kernel start %1).',
            entry.session
          )
        : '') +
      (alive ? `\n${alive.lines.join('\n')}` : '') +
      '\n' +
      (console
        ? trans.__('Run from a console: no cell to go to.')
        : trans.__('Click to go to the cell.'));
  }

  /** Writes the GPU load columns, and the hints' kinds in `data-vram-hints`. */
  private _showLoad(entry: CellHistoryEntry): void {
    const load = cellLoadOf(entry.record);
    const hints = cellHints(entry.record, load);
    const cols = this._cols;
    setText(cols.gpu_mean, meanText(load));
    setText(cols.gpu_max, formatLoadPercent(load?.maxPercent));
    setText(cols.energy, formatJoules(load?.energyJoules));
    cols.gpu_mean.classList.toggle(
      'jp-vram-warning',
      hints.some(h => h.kind === 'input-bound')
    );
    setData(this.node, 'vramGpuMean', numberData(load?.meanPercent));
    setData(this.node, 'vramGpuMax', numberData(load?.maxPercent));
    setData(this.node, 'vramEnergyJ', numberData(load?.energyJoules));
    setData(this.node, 'vramGpuCoverage', load?.coverage ?? null);
    setData(this.node, 'vramHints', cellHintKinds(hints));
  }

  /** Hides the row and forgets its entry, so that the next show writes everything. */
  hide(): void {
    setHidden(this.node, true);
    this._entry = null;
  }

  private _cols: Record<CellSortKey, HTMLElement>;
  private _alive: CellAliveText | null = null;
  private _entry: CellHistoryEntry | null = null;
  private _units: string | null = null;
  private _level: string | null = null;
  private _earlier = false;
  private _console = false;
}

/**
 * The mean column's text: "93%", or "~93%" when the driver's buffer did not
 * cover the whole cell.
 */
function meanText(load: CellLoadSummary | null): string {
  const text = formatLoadPercent(load?.meanPercent);
  return load && load.meanPercent !== null && load.coverage !== 'full'
    ? `~${text}`
    : text;
}

/** A figure for a data attribute; null when unknown. */
function numberData(value: number | null | undefined): string | null {
  return value === null || value === undefined ? null : String(value);
}
