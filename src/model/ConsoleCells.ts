/**
 * Which cell ids belong to the cells of a code console on this page.
 *
 * JupyterLab's console sends its own cell's id with each execution, as a
 * notebook does (`metadata.cellId`), so a record's cell id alone cannot say
 * that the code ran in a console rather than in a notebook cell since
 * deleted. The consoles' cells can tell, because a console keeps each cell
 * it ran, id and all, from before the execution request goes out until the
 * console is cleared or closed. This set takes their ids as they come and
 * keeps them after that, so that the record still counts as a console's. It
 * keeps up to MAX_CONSOLE_CELL_IDS ids and forgets the oldest first. A page
 * loaded later does not know the ids of consoles run before it, so their
 * records read as cells that are no longer in the notebook; the Cells tab
 * says that such a record may also be a console's.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

/**
 * The most console cell ids kept. This is enough for a long day of console
 * work, and since an id is about 36 characters, the set stays small.
 */
export const MAX_CONSOLE_CELL_IDS = 20_000;

/** The part of a console cell (JupyterLab's Cell) that this module reads. */
export interface IConsoleCellLike {
  readonly model: { readonly id: string };
}

/** A change of a console's cell list (JupyterLab's IObservableList.IChangedArgs). */
export interface IConsoleCellsChange {
  readonly type: string;
  readonly newValues: readonly IConsoleCellLike[];
}

/** A console's cells, as JupyterLab's IObservableList holds them. */
export interface IConsoleCellList {
  readonly length: number;
  get(index: number): IConsoleCellLike | undefined;
  readonly changed: ISignal<unknown, IConsoleCellsChange>;
}

/**
 * The part of a console panel (JupyterLab's ConsolePanel) that this module
 * reads.
 */
export interface IConsolePanelLike {
  readonly console: { readonly cells: IConsoleCellList };
  readonly disposed: ISignal<unknown, void>;
}

/** The consoles of the page (JupyterLab's IConsoleTracker). */
export interface IConsoleSource {
  forEach(fn: (panel: IConsolePanelLike) => void): void;
  readonly widgetAdded: ISignal<unknown, IConsolePanelLike>;
}

/** The ids of the cells that the code consoles of this page have run. */
export class ConsoleCells implements IDisposable {
  constructor(consoles: IConsoleSource) {
    consoles.forEach(panel => this._follow(panel));
    consoles.widgetAdded.connect((_, panel) => this._follow(panel), this);
  }

  /** Emitted when ids were added, which happens when a console runs a cell. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Whether `cellId` is the id of a cell that a console on this page ran or
   * shows.
   */
  has(cellId: string): boolean {
    return this._ids.has(cellId);
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._ids.clear();
    Signal.clearData(this);
  }

  private _follow(panel: IConsolePanelLike): void {
    const cells = panel.console.cells;
    let added = false;
    for (let i = 0; i < cells.length; i++) {
      added = this._add(cells.get(i)) || added;
    }
    cells.changed.connect(this._onCellsChanged, this);
    // A closed console neither disposes nor empties its cell list. If it were
    // left connected, the list and every cell widget in it would stay
    // reachable from here for the page's life, one more for each console
    // closed, so the connection is cut when the panel goes.
    panel.disposed.connect(
      () => cells.changed.disconnect(this._onCellsChanged, this),
      this
    );
    if (added) {
      this._changed.emit();
    }
  }

  private _onCellsChanged(_: unknown, change: IConsoleCellsChange): void {
    if (change.type !== 'add' && change.type !== 'set') {
      // Removed cells keep their ids, so that their records still count as a
      // console's.
      return;
    }
    let added = false;
    for (const cell of change.newValues) {
      added = this._add(cell) || added;
    }
    if (added) {
      this._changed.emit();
    }
  }

  private _add(cell: IConsoleCellLike | undefined): boolean {
    const id = cell?.model?.id;
    if (typeof id !== 'string' || id === '' || this._ids.has(id)) {
      return false;
    }
    this._ids.add(id);
    if (this._ids.size > MAX_CONSOLE_CELL_IDS) {
      // A Set iterates in insertion order, so its first id is the oldest.
      this._ids.delete(this._ids.values().next().value as string);
    }
    return true;
  }

  private _ids = new Set<string>();
  private _changed = new Signal<this, void>(this);
  private _isDisposed = false;
}
