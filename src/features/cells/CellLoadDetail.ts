/**
 * Under the Cells table, the GPU load of the row last activated: per GPU,
 * the mean and highest utilisation, the energy, how much of the cell the
 * driver's buffer covered and what held the clocks back; then the hints,
 * the "input-bound?" one with a button that inserts the DataLoader snippet
 * below the cell, which activating the row made the active one.
 *
 * Everything goes in as text, so nothing from the kernel is parsed as HTML.
 */
import { CellHistoryEntry } from '../../model/CellHistory';
import { trans } from '../../text/translation';
import { button, element, setHidden } from '../../ui/dom';
import { formatExecutionCount } from './cellFormat';
import {
  cellHints,
  cellHintText,
  CellHint,
  INPUT_BOUND_SNIPPET_ID
} from './cellHints';
import { cellLoadOf } from './cellLoad';
import { cellLoadDeviceLines } from './cellLoadText';

/** The GPU load and hints of one record, below the Cells table. */
export class CellLoadDetail {
  /** `insertSnippet` inserts a snippet by id; without it, no button is offered. */
  constructor(insertSnippet: ((id: string) => void) | null) {
    this._insertSnippet = insertSnippet;
    this.node = element('div', 'jp-vram-CellLoadDetail', {
      role: 'cell-load-detail'
    });
    this.node.setAttribute('aria-live', 'polite');
    this.node.hidden = true;
  }

  readonly node: HTMLElement;

  /** Shows `entry`'s load, or hides the detail when there is no entry or it has no load. */
  show(entry: CellHistoryEntry | null): void {
    if (entry === this._entry) {
      return;
    }
    this._entry = entry;
    const load = entry ? cellLoadOf(entry.record) : null;
    setHidden(this.node, !load);
    this.node.replaceChildren();
    if (!entry || !load) {
      delete this.node.dataset.vramKey;
      return;
    }
    this.node.dataset.vramKey = entry.key;
    this.node.append(
      element('div', 'jp-vram-CellLoadDetail-title', {
        text: trans.__(
          '%1 GPU load',
          formatExecutionCount(entry.record.execution_count)
        )
      })
    );
    for (const line of cellLoadDeviceLines(entry.record, load)) {
      this.node.append(
        element('div', 'jp-vram-CellLoadDetail-line', { text: line })
      );
    }
    for (const hint of cellHints(entry.record, load)) {
      this.node.append(this._hint(hint));
    }
  }

  /** One hint's line, with the snippet button for the "input-bound?" hint. */
  private _hint(hint: CellHint): HTMLElement {
    const node = element('div', 'jp-vram-CellLoadDetail-hint', {
      role: 'cell-hint',
      text: cellHintText(hint)
    });
    node.dataset.vramHint = hint.kind;
    const insert = this._insertSnippet;
    if (hint.kind === 'input-bound' && insert) {
      node.append(
        button(
          'jp-vram-Button',
          {
            role: 'insert-dataloader-snippet',
            text: trans.__('Insert the DataLoader snippet'),
            title: trans.__(
              'Insert a cell below this one that rebuilds the DataLoader with worker processes, pinned memory and persistent workers (not run)'
            )
          },
          () => insert(INPUT_BOUND_SNIPPET_ID)
        )
      );
    }
    return node;
  }

  private _entry: CellHistoryEntry | null = null;
  private _insertSnippet: ((id: string) => void) | null;
}
