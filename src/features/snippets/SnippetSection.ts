/**
 * The "Save memory" section of the sidebar's Memory tab. It has one button
 * per visible snippet, each of which inserts its cell into the active
 * notebook, and it shows the latest "restart the kernel" warning. The
 * buttons run the `insert-snippet` command, so that a button, the palette
 * and the toolbar menu behave alike.
 *
 * The tests find the section as `[data-vram-role="snippet-section"]`, its
 * buttons as `[data-vram-role="snippet-button"][data-vram-snippet="<id>"]`,
 * and the warning as `[data-vram-role="restart-warning"]`, which carries
 * `data-vram-snippet` and a `data-vram-reason` of cuda or tensorflow, with its
 * `[data-vram-role="dismiss-restart-warning"]` button.
 */
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { CommandIDs, ExecuteCommand } from '../../ui/commandIds';
import { SnippetLibrary } from './SnippetLibrary';
import { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import { button, element, setHidden, setText } from '../../ui/dom';
import { trans } from '../../text/translation';

/** The sidebar section with one button per visible snippet. */
export class SnippetSection extends Widget {
  constructor(options: SnippetSection.IOptions) {
    super();
    this._library = options.library;
    this._execute = options.execute;
    this.addClass('jp-vram-Snippets');
    this.node.dataset.vramRole = 'snippet-section';

    const heading = element('h3', 'jp-vram-Snippets-heading', {
      text: trans.__('Save memory')
    });
    const hint = element('div', 'jp-vram-Snippets-hint', {
      text: trans.__(
        'Insert a cell with the code into the active notebook (not run).'
      )
    });
    this._warning = element('div', 'jp-vram-Snippets-warning', {
      role: 'restart-warning'
    });
    this._warning.setAttribute('role', 'alert');
    this._warningText = element('span', 'jp-vram-Snippets-warningText');
    const dismiss = button(
      'jp-vram-Button',
      { role: 'dismiss-restart-warning', text: trans.__('Dismiss') },
      () => this._library.setWarning(null)
    );
    this._warning.append(this._warningText, dismiss);
    this._buttons = element('div', 'jp-vram-Snippets-buttons');
    this.node.append(heading, hint, this._warning, this._buttons);

    this._library.changed.connect(this._onChanged, this);
    this._render();
  }

  /**
   * The kernel of the active notebook. The buttons are disabled without one,
   * and the restart warning shows only when it is about this kernel.
   */
  get model(): IKernelMemoryModel | null {
    return this._model;
  }

  set model(model: IKernelMemoryModel | null) {
    if (model !== this._model) {
      this._model = model;
      this.update();
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._library.changed.disconnect(this._onChanged, this);
    super.dispose();
  }

  protected onUpdateRequest(_msg: Message): void {
    this._render();
  }

  private _onChanged(): void {
    this.update();
  }

  private _render(): void {
    const snippets = this._library.visible;
    const buttons = this._buttons;
    buttons.textContent = '';
    for (const snippet of snippets) {
      const insert = button(
        'jp-vram-Button jp-vram-Snippets-button',
        {
          role: 'snippet-button',
          text: snippet.title,
          title: snippet.description
        },
        () => this._execute(CommandIDs.insertSnippet, { id: snippet.id })
      );
      insert.dataset.vramSnippet = snippet.id;
      insert.disabled = this._model === null;
      buttons.appendChild(insert);
    }
    setHidden(this.node, snippets.length === 0);

    const warning = this._library.warning;
    const show = warning !== null && warning.model === this._model;
    setHidden(this._warning, !show);
    if (show) {
      setText(
        this._warningText,
        trans.__('%1: %2', warning.snippetTitle, warning.message)
      );
      this._warning.dataset.vramSnippet = warning.snippetId;
      this._warning.dataset.vramReason = warning.reason;
    } else {
      delete this._warning.dataset.vramSnippet;
      delete this._warning.dataset.vramReason;
    }
  }

  private _library: SnippetLibrary;
  private _execute: ExecuteCommand;
  private _model: IKernelMemoryModel | null = null;
  private _buttons: HTMLDivElement;
  private _warning: HTMLDivElement;
  private _warningText: HTMLSpanElement;
}

/** The types that go with SnippetSection. */
export namespace SnippetSection {
  /** The options a new SnippetSection is constructed with. */
  export interface IOptions {
    library: SnippetLibrary;
    /** Runs a command by id. */
    execute: ExecuteCommand;
  }
}
