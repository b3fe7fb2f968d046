/**
 * The cleanup bar of the sidebar has buttons for gc, for empty_cache, for
 * both, and for the holders listing; below them are the requests waiting
 * for the kernel, each with Cancel, and the result of the latest cleanup in
 * words. It renders a MemoryActions. Every button runs a command, so that
 * the palette, a shortcut and the button behave alike, down to the
 * notification.
 *
 * Test hooks: `[data-vram-role="action-bar"]`, buttons
 * `[data-vram-role="action-collect-garbage|action-empty-cache|action-free-memory|action-inspect"]`,
 * `[data-vram-role="queued-action"]` (with `data-vram-state`: queued | sent)
 * and its `[data-vram-role="cancel-action"]`, and
 * `[data-vram-role="action-result"]` with `data-vram-outcome`
 * (done | failed | cancelled), `data-vram-action` (free | delete) and
 * `data-vram-freed-bytes` (integer; absent when unknown). Its first line
 * begins with the local clock time the outcome came ("at 22:18:01 — ").
 */

import { clockTime } from '../../text/clockText';
import { ExecuteCommand } from '../../ui/commandIds';
import { button, element, setHidden, setText } from '../../ui/dom';
import { MemoryActionsView } from './MemoryActionsView';
import { trans } from '../../text/translation';

/**
 * The sidebar's cleanup bar, with its buttons, the waiting requests and the
 * result of the latest cleanup.
 */
export class MemoryActionsBar extends MemoryActionsView {
  constructor(options: MemoryActionsBar.IOptions) {
    super();
    this._execute = options.execute;
    this.addClass('jp-vram-Actions');
    this.node.dataset.vramRole = 'action-bar';

    const buttons = element('div', 'jp-vram-Actions-buttons');
    for (const spec of options.buttons) {
      const run = button(
        'jp-vram-Button',
        { role: spec.role, text: spec.label, title: spec.caption },
        () => this._execute(spec.command)
      );
      this._buttons.push(run);
      buttons.appendChild(run);
    }
    this._queueList = element('ul', 'jp-vram-Actions-queue');
    // The request states, such as "Queued: the kernel is busy" and
    // "Running", are read out to screen readers as they change.
    this._queueList.setAttribute('aria-live', 'polite');
    this._result = element('div', 'jp-vram-Actions-result', {
      role: 'action-result'
    });
    this._result.setAttribute('aria-live', 'polite');
    this.node.append(buttons, this._queueList, this._result);
    this.renderNow();
  }

  protected render(): void {
    const actions = this.actions;
    const available = actions?.available ?? false;
    for (const run of this._buttons) {
      run.disabled = !available;
    }
    this._renderQueue();
    this._renderOutcome();
  }

  private _renderQueue(): void {
    const list = this._queueList;
    list.textContent = '';
    const pending = this.actions?.queue.pending ?? [];
    for (const item of pending) {
      const row = element('li', 'jp-vram-Actions-queued', {
        role: 'queued-action'
      });
      row.dataset.vramState = item.state;
      const text =
        item.state === 'queued'
          ? trans.__('Queued \u2014 the kernel is busy: %1', item.label)
          : trans.__('%1\u2026', item.label);
      row.appendChild(element('span', 'jp-vram-Actions-queuedText', { text }));
      if (item.state === 'queued') {
        row.appendChild(
          button(
            'jp-vram-Button',
            {
              role: 'cancel-action',
              text: trans.__('Cancel'),
              title: trans.__('Do not send this request')
            },
            () => this.actions?.queue.cancel(item.id)
          )
        );
      }
      list.appendChild(row);
    }
    setHidden(list, pending.length === 0);
  }

  private _renderOutcome(): void {
    const node = this._result;
    const outcome = this.actions?.lastOutcome ?? null;
    node.textContent = '';
    if (!outcome) {
      setHidden(node, true);
      delete node.dataset.vramOutcome;
      delete node.dataset.vramAction;
      delete node.dataset.vramFreedBytes;
      return;
    }
    setHidden(node, false);
    node.dataset.vramOutcome = outcome.status;
    node.dataset.vramAction = outcome.kind;
    if (outcome.freedBytes !== null) {
      node.dataset.vramFreedBytes = String(Math.round(outcome.freedBytes));
    } else {
      delete node.dataset.vramFreedBytes;
    }
    node.classList.toggle(
      'jp-vram-Actions-failed',
      outcome.status === 'failed'
    );
    outcome.lines.forEach((line, i) => {
      const div = element(
        'div',
        i === 0
          ? 'jp-vram-Actions-resultLine jp-vram-Actions-resultGist'
          : 'jp-vram-Actions-resultLine'
      );
      // The result stays shown while later, unrelated events happen, so it
      // says when it came.
      setText(
        div,
        i === 0
          ? trans.__('at %1 \u2014 %2', clockTime(outcome.at), line)
          : line
      );
      node.appendChild(div);
    });
  }

  private _execute: ExecuteCommand;
  private _buttons: HTMLButtonElement[] = [];
  private _queueList: HTMLUListElement;
  private _result: HTMLDivElement;
}

/** The types that go with MemoryActionsBar. */
export namespace MemoryActionsBar {
  /** One button of the cleanup bar and the command it runs. */
  export interface IButton {
    command: string;
    label: string;
    caption: string;
    role: string;
  }

  /** The options a new MemoryActionsBar is constructed with. */
  export interface IOptions {
    buttons: IButton[];
    /** Run a command by id. */
    execute: ExecuteCommand;
  }
}
