/**
 * The page's code consoles as ConsoleCells reads them: JupyterLab's own
 * ObservableList of cells, in a stand-in for the IConsoleTracker.
 */
import { ObservableList } from '@jupyterlab/observables';
import { Signal } from '@lumino/signaling';

import {
  IConsoleCellLike,
  IConsolePanelLike,
  IConsoleSource
} from '../model/ConsoleCells';

export class FakeConsole implements IConsolePanelLike {
  constructor(ids: string[]) {
    this.cells.pushAll(ids.map(cell));
  }

  readonly console = { cells: new ObservableList<IConsoleCellLike>() };
  readonly disposed = new Signal<this, void>(this);
  isDisposed = false;

  get cells(): ObservableList<IConsoleCellLike> {
    return this.console.cells;
  }

  /**
   * Runs a cell as CodeConsole does: the prompt cell joins the list, and
   * then its code is sent.
   */
  run(id: string): void {
    this.cells.push(cell(id));
  }

  /** Clears the console as CodeConsole.clear does, removing every cell. */
  clear(): void {
    this.cells.clear();
  }

  /**
   * Closes the console as closing a ConsolePanel does. The widget says it is
   * disposed and drops its own connections, but CodeConsole leaves its cell
   * list as it was, neither disposed nor emptied.
   */
  dispose(): void {
    this.isDisposed = true;
    this.disposed.emit();
    Signal.clearData(this);
  }
}

export class FakeConsoles implements IConsoleSource {
  readonly widgetAdded = new Signal<this, IConsolePanelLike>(this);
  readonly panels: FakeConsole[] = [];

  forEach(fn: (panel: IConsolePanelLike) => void): void {
    this.panels.forEach(fn);
  }

  open(ids: string[] = []): FakeConsole {
    const panel = new FakeConsole(ids);
    this.panels.push(panel);
    this.widgetAdded.emit(panel);
    return panel;
  }
}

function cell(id: string): IConsoleCellLike {
  return { model: { id } };
}
