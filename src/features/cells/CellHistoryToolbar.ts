/**
 * The Cells tab's toolbar: how many cell runs the history holds, and the
 * buttons that export it (CSV, JSON) or clear it.
 */
import { formatCount } from '../../text/format';
import { trans } from '../../text/translation';
import { button, element, setText } from '../../ui/dom';

/** What the toolbar's buttons ask the view's host to do. */
export interface ICellHistoryToolbarActions {
  /** Exports the history in `format`; without it, the export buttons do nothing. */
  exportHistory?: (format: 'csv' | 'json') => void;
  /** Clears the history; without it, the Clear button does nothing. */
  clearHistory?: () => void;
}

/** The count and the export and clear buttons above the Cells table. */
export class CellHistoryToolbar {
  constructor(actions: ICellHistoryToolbarActions) {
    this.node = element('div', 'jp-vram-CellHistory-toolbar');
    this._count = element('span', 'jp-vram-CellHistory-count', {
      role: 'cell-count'
    });
    const buttons = element('span', 'jp-vram-CellHistory-buttons');
    this._buttons = [
      button(
        'jp-vram-Button',
        {
          role: 'export-csv',
          text: trans.__('CSV'),
          title: trans.__('Export the cell history as CSV')
        },
        () => actions.exportHistory?.('csv')
      ),
      button(
        'jp-vram-Button',
        {
          role: 'export-json',
          text: trans.__('JSON'),
          title: trans.__('Export the cell history as JSON')
        },
        () => actions.exportHistory?.('json')
      ),
      button(
        'jp-vram-Button',
        {
          role: 'clear-history',
          text: trans.__('Clear'),
          title: trans.__(
            'Clear the cell history in this browser (the kernel keeps its own)'
          )
        },
        () => actions.clearHistory?.()
      )
    ];
    buttons.append(...this._buttons);
    this.node.append(this._count, buttons);
  }

  readonly node: HTMLElement;

  /** Shows how many cell runs the history holds, such as "12 cell runs". */
  showCount(n: number): void {
    setText(
      this._count,
      trans._n('%2 cell run', '%2 cell runs', n, formatCount(n))
    );
  }

  /**
   * Enables or disables every button; the view enables them only while there
   * is a history to export or clear.
   */
  enable(enabled: boolean): void {
    for (const b of this._buttons) {
      b.disabled = !enabled;
    }
  }

  private _count: HTMLElement;
  private _buttons: HTMLButtonElement[];
}
