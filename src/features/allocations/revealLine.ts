/**
 * Activates a notebook cell and puts the cursor on one of its lines, which
 * is where a row of the Lines tab leads.
 *
 * The cell is found by its id or, when the line comes from a cell that ran
 * before recording started, by its execution count. Because the notebook is
 * windowed, the cell is scrolled into view first, and its editor exists only
 * once the cell is ready.
 */
export interface ILineTarget {
  cellId: string | null;
  executionCount: number | null;
  /** The line number, 1-based as Python counts lines. */
  line: number;
}

/**
 * The parts of a notebook cell used here: a Cell in the app, and fakes in
 * tests.
 */
export interface IRevealCell {
  readonly model: {
    readonly id: string;
    readonly type: string;
    readonly executionCount?: number | null;
  };
  readonly ready?: Promise<void>;
  readonly editor: {
    setCursorPosition(position: { line: number; column: number }): void;
    focus(): void;
  } | null;
}

/** The parts of a notebook used here, which is a Notebook in the app. */
export interface IRevealNotebook {
  readonly widgets: readonly IRevealCell[];
  activeCellIndex: number;
  deselectAll(): void;
  scrollToItem(index: number, align?: string): Promise<void>;
  mode: 'command' | 'edit';
}

/** The index of the cell that `target` names, or -1. */
export function findTargetCell(
  cells: readonly IRevealCell[],
  target: ILineTarget
): number {
  if (target.cellId !== null) {
    const byId = cells.findIndex(c => c.model.id === target.cellId);
    if (byId >= 0) {
      return byId;
    }
  }
  if (target.executionCount !== null) {
    return cells.findIndex(
      c =>
        c.model.type === 'code' &&
        c.model.executionCount === target.executionCount
    );
  }
  return -1;
}

/**
 * Activates the cell and places the cursor at the start of the line, and
 * returns false if the cell is not found.
 */
export async function revealLine(
  notebook: IRevealNotebook,
  target: ILineTarget
): Promise<boolean> {
  const index = findTargetCell(notebook.widgets, target);
  if (index < 0) {
    return false;
  }
  notebook.activeCellIndex = index;
  notebook.deselectAll();
  await notebook.scrollToItem(index, 'center');
  const cell = notebook.widgets[index];
  await cell.ready;
  const editor = cell.editor;
  if (editor) {
    notebook.mode = 'edit';
    editor.setCursorPosition({ line: Math.max(0, target.line - 1), column: 0 });
    editor.focus();
  }
  return true;
}
