/**
 * The right sidebar's tab, present from start-up (its icon, caption and id),
 * holding the memory panel (MemorySidebar, with every view of its tabs; the
 * timeline's chart library loads when it first draws). The panel is fetched, as a chunk of its own,
 * the first time the tab is shown: a page on which nobody opens the sidebar
 * never loads it. Commands that pick a tab before that are remembered.
 */
import { Message } from '@lumino/messaging';
import { Panel } from '@lumino/widgets';

import type { MemorySidebar } from './MemorySidebar';
import type { SidebarTab } from './sidebarTabs';
import { element } from '../ui/dom';
import { vramIcon } from '../ui/icons';

/** DOM id of the sidebar (also the id to activate it by). */
export const SIDEBAR_ID = 'jp-vram-sidebar';

export { SIDEBAR_TABS, type SidebarTab } from './sidebarTabs';

export class SidebarHost extends Panel {
  constructor(options: SidebarHost.IOptions) {
    super();
    this._options = options;
    this.id = SIDEBAR_ID;
    this.addClass('jp-vram-SidebarHost');
    this.title.icon = vramIcon;
    this.title.caption = options.trans
      ? options.trans.__('GPU memory')
      : 'GPU memory';
  }

  /** The memory panel, once loaded. */
  get content(): MemorySidebar | null {
    return this._content;
  }

  /** Resolves with the memory panel, loading it if it is not yet. */
  load(): Promise<MemorySidebar> {
    if (!this._loading) {
      this._loading = import('./MemorySidebar').then(
        ({ MemorySidebar }) => {
          if (!this._content) {
            this._problem?.remove();
            this._content = new MemorySidebar(this._options);
            this._content.showTab(this._tab);
            if (!this.isDisposed) {
              this.addWidget(this._content);
            }
          }
          return this._content;
        },
        reason => {
          this._loading = null; // tried again the next time the tab is shown
          this._showProblem(reason);
          throw reason;
        }
      );
    }
    return this._loading;
  }

  showTab(tab: SidebarTab): void {
    this._tab = tab;
    this._content?.showTab(tab);
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    if (this.isVisible) {
      this._loadQuietly();
    }
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._loadQuietly();
  }

  private _loadQuietly(): void {
    this.load().catch(reason =>
      console.warn('jupyterlab-vram: could not load the memory panel.', reason)
    );
  }

  private _showProblem(reason: unknown): void {
    const text =
      'Could not load the memory panel (' +
      (reason instanceof Error ? reason.message : String(reason)) +
      '). Show this tab again to retry, or reload the page.';
    if (!this._problem) {
      this._problem = element('div', 'jp-vram-SidebarHost-problem', { text });
      this.node.appendChild(this._problem);
    } else {
      this._problem.textContent = text;
    }
  }

  private _options: SidebarHost.IOptions;
  private _content: MemorySidebar | null = null;
  private _loading: Promise<MemorySidebar> | null = null;
  private _tab: SidebarTab = 'memory';
  private _problem: HTMLElement | null = null;
}

export namespace SidebarHost {
  export type IOptions = MemorySidebar.IOptions;
}
