/**
 * Which cell ids belong to the cells of a code console on this page.
 *
 * JupyterLab's console sends its own cell's id with each execution, as a
 * notebook does (`metadata.cellId`), so a record's cell id alone cannot say
 * that the code ran in a console rather than in a notebook cell since
 * deleted. The consoles' cells can: a console keeps each cell it ran, id
 * and all, from before the execution request goes out until it is cleared
 * or closed. This set takes their ids as they come and keeps them after
 * that (the record stays a console's), up to MAX_CONSOLE_CELL_IDS, the
 * oldest forgotten first. A page loaded later does not know the ids of
 * consoles run before it: their records read as cells no longer in the
 * notebook, which the Cells tab says may also be a console's.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

/** Enough for a long day of console work; an id is ~36 characters. */
export const MAX_CONSOLE_CELL_IDS = 20_000;

/** What is read of a console cell (JupyterLab's Cell). */
export interface IConsoleCellLike {
  readonly model: { readonly id: string };
}

/** A change of a console's cell list (JupyterLab's IObservableList.IChangedArgs). */
export interface IConsoleCellsChange {
  readonly type: string;
  readonly newValues: readonly IConsoleCellLike[];
}

/** A console's cells (JupyterLab's IObservableList of them). */
export interface IConsoleCellList {
  readonly length: number;
  get(index: number): IConsoleCellLike | undefined;
  readonly changed: ISignal<unknown, IConsoleCellsChange>;
}

/** What is read of a console panel (JupyterLab's ConsolePanel). */
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

  /** Emitted when ids were added (a console ran a cell). */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Whether `cellId` is the id of a cell a console on this page ran (or shows). */
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
    // A closed console does not dispose its cell list (nor empty it): left
    // connected, the list and every cell widget in it would stay reachable
    // from here for the page's life, one more per console closed.
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
      return; // removed cells keep their ids: their records stay a console's
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
