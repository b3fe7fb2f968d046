/**
 * Going from a record of the cell history to its cell: in the notebook that
 * the user works in if it has the cell, or else in another notebook view on
 * the same kernel.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import type { CellHistoryEntry } from '../../model/CellHistory';
import type { MemoryMonitor } from '../../monitor/MemoryMonitor';

/**
 * Activates the record's cell in its notebook and scrolls to it; false when
 * no monitored notebook of that kernel has the cell any more.
 */
export async function revealCell(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker,
  monitor: MemoryMonitor,
  entry: CellHistoryEntry
): Promise<boolean> {
  const cellId = entry.record.cell_id;
  const model = monitor.current;
  if (cellId === null || !model) {
    return false;
  }
  const panels = monitor.panelsOf(model) as NotebookPanel[];
  const current = notebooks.currentWidget;
  if (current && panels.includes(current)) {
    // The view that the user works in is tried first.
    panels.splice(panels.indexOf(current), 1);
    panels.unshift(current);
  }
  for (const panel of panels) {
    const notebook = panel.content;
    const index = notebook.widgets.findIndex(c => c.model.id === cellId);
    if (index < 0) {
      continue;
    }
    app.shell.activateById(panel.id);
    notebook.activeCellIndex = index;
    notebook.deselectAll();
    await notebook.scrollToItem(index, 'center');
    return true;
  }
  return false;
}
