/**
 * One row of the virtualised table of the "Cells" view (CellHistoryView). It
 * shows a record's execution count, memory change, peak, duration, status,
 * alive bytes and the memory of the kernel's processes, placed at its index.
 * Rows are reused as the list scrolls, and showing the same entry with the
 * same figures again touches nothing.
 *
 * Text from the kernel, such as error types and cell ids, goes in through
 * textContent only.
 */
import { processesAlongside } from './cellProcessFigures';
import {
  describeCellRecord,
  formatDelta,
  formatDurationShort,
  formatExecutionCount,
  formatOutcomeShort,
  formatPeak,
  formatProcessesShort
} from './cellFormat';
import { CellAliveText } from './cellAlive';
import { CellHistoryEntry } from '../../model/CellHistory';
import { CELL_SORT_KEYS } from './cellSort';
import { element, makeActivatable, setHidden, setText } from '../../ui/dom';
import { trans } from '../../text/translation';

/** Height of one row in px (must match .jp-vram-CellRow in base.css). */
export const CELL_ROW_HEIGHT = 22;

/** One reusable row of the virtualised table. */
export class CellHistoryRow {
  /** `activate`: the row was clicked, or Enter or Space pressed on it. */
  constructor(activate: (row: CellHistoryRow) => void = () => undefined) {
    const node = (this.node = element('div', 'jp-vram-CellRow', {
      role: 'cell-row'
    }));
    node.setAttribute('role', 'row');
    // Going to the cell must not need a mouse: the row takes focus and keys.
    makeActivatable(node, () => activate(this));
    this._cols = CELL_SORT_KEYS.map(key => {
      const col = element('div', `jp-vram-CellCol jp-vram-CellCol-${key}`);
      col.setAttribute('role', 'cell');
      node.appendChild(col);
      return col;
    });
  }

  readonly node: HTMLElement;

  show(
    entry: CellHistoryEntry,
    index: number,
    units: 'binary' | 'decimal',
    level: 'normal' | 'warning',
    currentSession: number,
    alive: CellAliveText | null = null,
    // Ran in a console (no cell id, or a console cell's id)
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
    // Kept across restarts, marked with the kernel start they came from.
    node.classList.toggle('jp-vram-CellRow-earlier', earlier);
    node.dataset.vramKernelStart = String(entry.session);
    const processes = processesAlongside(r);
    const [
      countCol,
      deltaCol,
      peakCol,
      durationCol,
      statusCol,
      aliveCol,
      processesCol
    ] = this._cols;
    setText(
      processesCol,
      processes ? formatProcessesShort(processes, units) : ''
    );
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
      describeCellRecord(r, s, units) +
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

  hide(): void {
    setHidden(this.node, true);
    this._entry = null;
  }

  private _cols: HTMLElement[];
  private _alive: CellAliveText | null = null;
  private _entry: CellHistoryEntry | null = null;
  private _units: string | null = null;
  private _level: string | null = null;
  private _earlier = false;
  private _console = false;
}
