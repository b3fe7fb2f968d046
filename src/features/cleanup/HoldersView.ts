/**
 * The "Holders" tab lists what holds memory in the kernel, largest first,
 * each with a checkbox, and the hidden holders (the output cache, the last
 * traceback and the last result) with their warnings. It renders a
 * MemoryActions: ticking a holder changes its selection, and "Delete
 * selected" runs the delete command, which asks for confirmation in a
 * dialog. Names, summaries and reasons come from the kernel, so they go into
 * the DOM as text only.
 *
 * Test hooks: root `[data-vram-role="holders-view"]`;
 * `[data-vram-role="inspect-refresh"]`, `[data-vram-role="delete-selected"]`;
 * `[data-vram-role="holders-status"]`;
 * `[data-vram-role="holder-entry"][data-vram-name="<name>"]` (with
 * `data-vram-bytes`, an `input[type=checkbox]`, disabled with the refusal as
 * title when not deletable);
 * `[data-vram-role="hidden-holder"][data-vram-holder="<holder>"]`.
 */

import { HiddenHolder, HolderEntry } from '../../protocol/cleanup';
import { formatBytes, formatBytesByDevice } from '../../text/format';
import { VramSettings } from '../../settings/settings';
import { hiddenHolderWarning } from './deletePlan';
import { graphFixCode, graphHoldingText } from './graphFix';
import { holderSummaryText, sharingNote } from './holderText';
import {
  appendDottedName,
  button,
  element,
  setBytesData,
  setHidden,
  setText
} from '../../ui/dom';
import { MemoryActionsView } from './MemoryActionsView';
import { trans } from '../../text/translation';

/**
 * The sidebar's "Holders" tab, which lists what holds memory in the kernel and
 * lets the user tick holders to delete.
 */
export class HoldersView extends MemoryActionsView {
  constructor(options: HoldersView.IOptions) {
    super(options.settings);
    this._onDelete = options.onDelete;
    this._onFixGraph = options.onFixGraph ?? null;
    this._onShowGraphPattern = options.onShowGraphPattern ?? null;
    this.addClass('jp-vram-Holders');
    this.node.dataset.vramRole = 'holders-view';

    const toolbar = element('div', 'jp-vram-Holders-toolbar');
    this._refresh = button(
      'jp-vram-Button',
      {
        role: 'inspect-refresh',
        text: trans.__('Refresh listing'),
        title: trans.__('Ask the kernel what holds memory now')
      },
      () => void this.actions?.inspect()
    );
    this._delete = button(
      'jp-vram-Button jp-vram-Button-danger',
      {
        role: 'delete-selected',
        text: trans.__('Delete selected'),
        title: trans.__(
          'Delete the ticked variables and clear the ticked hidden references (asks first)'
        )
      },
      () => this._onDelete()
    );
    toolbar.append(this._refresh, this._delete);

    this._status = element('div', 'jp-vram-Holders-status', {
      role: 'holders-status'
    });
    // Status changes such as "Listing queued", a failure or a cancel are read
    // out to screen readers as they come.
    this._status.setAttribute('role', 'status');
    this._status.setAttribute('aria-live', 'polite');
    this._entries = element('ul', 'jp-vram-Holders-list');
    this._entries.dataset.vramRole = 'holder-entries';
    this._hiddenTitle = element('div', 'jp-vram-Holders-heading', {
      text: trans.__('Hidden references')
    });
    this._hidden = element('ul', 'jp-vram-Holders-list');
    this._hidden.dataset.vramRole = 'hidden-holders';
    this.node.append(
      toolbar,
      this._status,
      this._entries,
      this._hiddenTitle,
      this._hidden
    );
    this.renderNow();
  }

  protected render(): void {
    const actions = this.actions;
    const listing = actions?.listing ?? null;
    const available = actions?.available ?? false;
    this._refresh.disabled = !available;
    const selected =
      (actions?.selectedNames.size ?? 0) + (actions?.selectedHidden.size ?? 0);
    // Only one delete runs at a time, so the button is off from a delete's
    // planning to its result.
    this._delete.disabled =
      !available || !listing || selected === 0 || !!actions?.deleting;
    setText(
      this._delete,
      selected
        ? trans.__('Delete selected (%1)', selected)
        : trans.__('Delete selected')
    );
    setText(this._status, this._statusText());
    this._status.classList.toggle(
      'jp-vram-Holders-error',
      actions?.listingError !== null && actions?.listingError !== undefined
    );

    // Ticking a box re-renders the view and rebuilds the rows, so the
    // keyboard focus is put back on the same control of the same holder
    // rather than lost.
    const focused = this._focusedControl();
    this._entries.textContent = '';
    this._hidden.textContent = '';
    if (!actions || !listing) {
      setHidden(this._hiddenTitle, true);
      setHidden(this._hidden, true);
      return;
    }
    for (const entry of listing.entries) {
      this._entries.appendChild(
        this._entryRow(entry, actions.selectedNames.has(entry.name))
      );
    }
    for (const holder of listing.hidden) {
      this._hidden.appendChild(
        this._hiddenRow(
          holder,
          (actions.selectedHidden as ReadonlySet<string>).has(holder.holder)
        )
      );
    }
    setHidden(this._hiddenTitle, listing.hidden.length === 0);
    setHidden(this._hidden, listing.hidden.length === 0);
    if (focused) {
      this._refocus(focused);
    }
  }

  /** The control of a holder's row that has the focus, if any. */
  private _focusedControl(): IFocusedControl | null {
    const active = document.activeElement;
    if (!(active instanceof HTMLElement)) {
      return null;
    }
    const row = active.closest<HTMLElement>('.jp-vram-Holder');
    const list = row?.parentElement;
    const holder = row ? holderKey(row) : null;
    if (
      !list ||
      holder === null ||
      (list !== this._entries && list !== this._hidden)
    ) {
      return null;
    }
    return {
      list,
      holder,
      control:
        active instanceof HTMLInputElement
          ? null
          : (active.dataset.vramRole ?? null)
    };
  }

  /** Focus the same control in the rebuilt row of the same holder (if still listed). */
  private _refocus(focused: IFocusedControl): void {
    const row = Array.from(focused.list.children).find(
      (node): node is HTMLElement =>
        node instanceof HTMLElement && holderKey(node) === focused.holder
    );
    const control =
      focused.control === null
        ? row?.querySelector<HTMLElement>('input[type=checkbox]')
        : row?.querySelector<HTMLElement>(
            `[data-vram-role="${focused.control}"]`
          );
    control?.focus();
  }

  private _statusText(): string {
    const actions = this.actions;
    if (!actions) {
      return trans.__('Open a notebook to see what holds its memory.');
    }
    if (actions.inspecting) {
      return actions.queue.busy
        ? trans.__('Listing queued \u2014 the kernel is busy\u2026')
        : trans.__('Listing what holds memory\u2026');
    }
    if (actions.listingError) {
      return actions.listingError;
    }
    const listing = actions.listing;
    if (!listing) {
      return actions.available
        ? trans.__(
            'Press "Refresh listing" to see which variables hold memory.'
          )
        : trans.__('The memory helper is not running in this kernel.');
    }
    if (!listing.entries.length && !listing.hidden.length) {
      return trans.__('Nothing in the namespace holds memory worth listing.');
    }
    const n = listing.entries.length;
    return listing.truncated
      ? trans._n(
          '%1 variable, largest first (truncated: only the largest)',
          '%1 variables, largest first (truncated: only the largest)',
          n
        )
      : trans._n(
          '%1 variable, largest first',
          '%1 variables, largest first',
          n
        );
  }

  private _entryRow(entry: HolderEntry, checked: boolean): HTMLLIElement {
    const units = this.settings.units;
    const row = element('li', 'jp-vram-Holder', { role: 'holder-entry' });
    row.dataset.vramName = entry.name;
    setBytesData(row, entry.total_bytes);
    row.dataset.vramKind = entry.kind;

    const label = element('label', 'jp-vram-Holder-main');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = checked && entry.deletable;
    box.disabled = !entry.deletable;
    if (!entry.deletable) {
      const why = entry.refusal ?? trans.__('This name cannot be deleted.');
      box.title = why;
      row.title = why;
      row.classList.add('jp-mod-disabled');
    }
    box.addEventListener('change', () =>
      this.actions?.setNameSelected(entry.name, box.checked)
    );
    label.append(
      box,
      element('span', 'jp-vram-Holder-name', {
        role: 'holder-name',
        text: entry.name
      }),
      element('span', 'jp-vram-Holder-kind', { text: entry.kind }),
      element('span', 'jp-vram-Holder-bytes', {
        text:
          (entry.truncated ? '\u2265 ' : '') +
          formatBytes(entry.total_bytes, units)
      })
    );
    row.appendChild(label);
    row.appendChild(summaryNode(entry));
    row.appendChild(
      element('div', 'jp-vram-Holder-devices', {
        text: formatBytesByDevice(entry.bytes_by_device, units)
      })
    );
    const notes: string[] = [];
    const sharing = sharingNote(entry, units);
    if (sharing !== null) {
      notes.push(sharing);
    }
    if (entry.output_cache_refs.length) {
      notes.push(trans.__('also in %1', entry.output_cache_refs.join(', ')));
    }
    if (!entry.deletable && entry.refusal) {
      notes.push(trans.__('cannot delete: %1', entry.refusal));
    }
    if (entry.truncated) {
      notes.push(
        trans.__('sized in part: too large to walk whole, it may hold more')
      );
    }
    for (const note of notes) {
      row.appendChild(
        element('div', 'jp-vram-Holder-note', {
          role: 'holder-note',
          text: note
        })
      );
    }
    const graph = graphHoldingText(entry, this.settings.units);
    if (graph) {
      row.dataset.vramGraphHolding = 'true';
      row.appendChild(this._graphRow(entry, graph));
    }
    return row;
  }

  /**
   * The row part that flags a holder keeping an autograd graph alive. It says
   * what that means and offers the fix.
   */
  private _graphRow(entry: HolderEntry, text: string): HTMLElement {
    const box = element('div', 'jp-vram-Holder-graph', {
      role: 'holder-graph',
      // The text itself begins "N tensors keep an autograd graph alive".
      text: `⚠ ${text}`
    });
    const fix = this._onFixGraph;
    if (fix && graphFixCode(entry) !== null) {
      box.appendChild(
        button(
          'jp-vram-Button',
          {
            role: 'graph-fix',
            text: trans.__('Insert fix'),
            title: trans.__(
              "Insert a cell below the active one that keeps %1's values with .item()/.detach()",
              entry.name
            )
          },
          () => fix(entry)
        )
      );
    }
    const pattern = this._onShowGraphPattern;
    if (pattern) {
      box.appendChild(
        button(
          'jp-vram-Button',
          {
            role: 'graph-pattern',
            text: trans.__('Training-loop pattern'),
            title: trans.__(
              'Insert the "Accumulate loss.item(), not the loss tensor" snippet'
            )
          },
          () => pattern()
        )
      );
    }
    return box;
  }

  private _hiddenRow(holder: HiddenHolder, checked: boolean): HTMLLIElement {
    const units = this.settings.units;
    const row = element('li', 'jp-vram-Holder jp-vram-Holder-hidden', {
      role: 'hidden-holder'
    });
    row.dataset.vramHolder = holder.holder;
    setBytesData(row, holder.total_bytes);
    const label = element('label', 'jp-vram-Holder-main');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = checked;
    box.addEventListener('change', () =>
      this.actions?.setHiddenSelected(holder.holder, box.checked)
    );
    label.append(
      box,
      element('span', 'jp-vram-Holder-name', { text: holder.label }),
      element('span', 'jp-vram-Holder-bytes', {
        text: formatBytes(holder.total_bytes, units)
      })
    );
    row.appendChild(label);
    if (holder.summary) {
      row.appendChild(
        element('div', 'jp-vram-Holder-summary', { text: holder.summary })
      );
    }
    const warning = hiddenHolderWarning(holder);
    if (warning) {
      row.appendChild(
        element('div', 'jp-vram-Holder-warning', {
          role: 'holder-warning',
          text: warning
        })
      );
    }
    return row;
  }

  private _onDelete: () => void;
  private _onFixGraph: ((entry: HolderEntry) => void) | null;
  private _onShowGraphPattern: (() => void) | null;
  private _refresh: HTMLButtonElement;
  private _delete: HTMLButtonElement;
  private _status: HTMLDivElement;
  private _entries: HTMLUListElement;
  private _hiddenTitle: HTMLDivElement;
  private _hidden: HTMLUListElement;
}

/** A focused control of a holder's row, found again after the rows are rebuilt. */
interface IFocusedControl {
  list: HTMLElement;
  /** The variable's name, or the hidden holder's kind. */
  holder: string;
  /** The control's `data-vram-role`, or null when it is the checkbox. */
  control: string | null;
}

/** What a row stands for: its variable's name, or its hidden holder's kind. */
function holderKey(row: HTMLElement): string | null {
  return row.dataset.vramName ?? row.dataset.vramHolder ?? null;
}

/**
 * A row's summary line. The type that leads it is a long dotted name such as
 * torch.nn.modules.container.Sequential. The browser sees it as one word,
 * which the sidebar's width would otherwise cut mid-word, so the name is
 * allowed to wrap after each dot.
 */
function summaryNode(entry: HolderEntry): HTMLElement {
  const node = element('div', 'jp-vram-Holder-summary', {
    role: 'holder-summary'
  });
  const text = holderSummaryText(entry);
  const type =
    entry.type_name && text.startsWith(entry.type_name) ? entry.type_name : '';
  appendDottedName(node, type);
  node.append(document.createTextNode(text.slice(type.length)));
  return node;
}

/** The types that go with HoldersView. */
export namespace HoldersView {
  /** The options a new HoldersView is constructed with. */
  export interface IOptions {
    settings: VramSettings;
    /**
     * Runs when "Delete selected" is pressed; it is the delete command, which
     * asks for confirmation and then deletes.
     */
    onDelete: () => void;
    /**
     * Runs when "Insert fix" of a graph-holding entry is pressed. Without it,
     * the button is not shown.
     */
    onFixGraph?: (entry: HolderEntry) => void;
    /**
     * Inserts the loss.item() snippet. Without it, the button is not shown.
     */
    onShowGraphPattern?: () => void;
  }
}
