/**
 * Puts a rendered snippet into a notebook as a new code cell at its
 * placement index. The cell is active and selected but not executed, and
 * one step of the notebook's undo (`notebook:undo-cell-action`) removes it.
 *
 * The cell goes in through the shared model (`sharedModel.insertCell`), in
 * one transaction that the notebook's undo manager tracks. Yjs merges
 * changes made within 500 ms into one undo step, so capturing is stopped
 * before and after: one undo removes exactly the inserted cell.
 */
import { placementIndex, SnippetPlacement } from './snippet';

/** What of `ISharedNotebook` the insertion uses. */
export interface ISnippetSharedNotebook {
  readonly cells: readonly unknown[];
  insertCell(
    index: number,
    cell: {
      cell_type: 'code';
      source: string;
      metadata: { trusted: boolean };
    }
  ): unknown;
  readonly undoManager?: { stopCapturing(): void } | null;
}

/** What of the `Notebook` widget the insertion uses. */
export interface ISnippetNotebook {
  readonly model: { readonly sharedModel: ISnippetSharedNotebook } | null;
  activeCellIndex: number;
  deselectAll(): void;
  scrollToItem?(index: number, behavior?: 'smart'): Promise<void>;
}

/**
 * Inserts `source` as a code cell, and returns the index it got, or null
 * when the notebook has no model.
 */
export function insertCodeCell(
  notebook: ISnippetNotebook,
  source: string,
  placement: SnippetPlacement
): number | null {
  const sharedModel = notebook.model?.sharedModel;
  if (!sharedModel) {
    return null;
  }
  const index = placementIndex(
    placement,
    notebook.activeCellIndex,
    sharedModel.cells.length
  );
  sharedModel.undoManager?.stopCapturing();
  sharedModel.insertCell(index, {
    cell_type: 'code',
    source,
    // The user asked for this code, so it is trusted like a cell they typed.
    metadata: { trusted: true }
  });
  sharedModel.undoManager?.stopCapturing();
  notebook.activeCellIndex = index;
  notebook.deselectAll();
  notebook.scrollToItem?.(index, 'smart').catch(() => undefined);
  return index;
}
