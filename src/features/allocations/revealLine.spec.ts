/** Tests for revealLine, which goes from an allocation site to its cell and line. */
import { findTargetCell, IRevealCell, revealLine } from './revealLine';

describe('revealLine', () => {
  function cell(id: string, count: number | null, type = 'code') {
    const editor = { setCursorPosition: jest.fn(), focus: jest.fn() };
    return {
      model: { id, type, executionCount: count },
      ready: Promise.resolve(),
      editor
    } satisfies IRevealCell;
  }

  it('finds the cell by id, else by execution count, and puts the cursor on the line', async () => {
    const cells = [cell('a', 1), cell('m', null, 'markdown'), cell('b', 7)];
    const notebook = {
      widgets: cells,
      activeCellIndex: 0,
      mode: 'command' as 'command' | 'edit',
      deselectAll: jest.fn(),
      scrollToItem: jest.fn(async () => undefined)
    };
    expect(
      findTargetCell(cells, { cellId: 'b', executionCount: null, line: 1 })
    ).toBe(2);
    expect(
      findTargetCell(cells, { cellId: 'gone', executionCount: 1, line: 1 })
    ).toBe(0);
    expect(
      findTargetCell(cells, { cellId: null, executionCount: 99, line: 1 })
    ).toBe(-1);

    expect(
      await revealLine(notebook, { cellId: null, executionCount: 7, line: 3 })
    ).toBe(true);
    expect(notebook.activeCellIndex).toBe(2);
    expect(notebook.scrollToItem).toHaveBeenCalledWith(2, 'center');
    expect(notebook.mode).toBe('edit');
    expect(cells[2].editor.setCursorPosition).toHaveBeenCalledWith({
      line: 2,
      column: 0
    });
    expect(cells[2].editor.focus).toHaveBeenCalled();
    expect(
      await revealLine(notebook, { cellId: 'x', executionCount: null, line: 3 })
    ).toBe(false);
  });
});
