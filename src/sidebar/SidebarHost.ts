/**
 * The right sidebar's tab, present from start-up with its icon, caption and
 * id, and the registry that the features add their tabs and sections to.
 * The memory panel (MemorySidebar) is a separately loaded part of the
 * bundle, fetched the first time the sidebar is shown, so a page on which
 * nobody opens the sidebar never loads it, nor any tab's widgets. A tab
 * picked before that is remembered.
 */
import { IDisposable } from '@lumino/disposable';
import { Message } from '@lumino/messaging';
import { Panel } from '@lumino/widgets';

import type { IVramSidebar } from './IVramSidebar';
import type { MemorySidebar } from './MemorySidebar';
import { SidebarRegistry } from './SidebarRegistry';
import { trans } from '../text/translation';
import { element } from '../ui/dom';
import { vramIcon } from '../ui/icons';

/** The DOM id of the sidebar, which is also the id to activate it by. */
export const SIDEBAR_ID = 'jp-vram-sidebar';

/**
 * The sidebar's tab in JupyterLab's right area, which holds the memory panel
 * once it has loaded.
 */
export class SidebarHost extends Panel implements IVramSidebar {
  constructor(options: SidebarHost.IOptions = {}) {
    super();
    this.id = SIDEBAR_ID;
    this.addClass('jp-vram-SidebarHost');
    this.title.icon = vramIcon;
    this.title.caption = options.caption ?? 'GPU memory';
  }

  /** What the features have added, and the tab picked. */
  readonly registry = new SidebarRegistry();

  /** The memory panel, once loaded. */
  get content(): MemorySidebar | null {
    return this._content;
  }

  get tab(): string {
    return this.registry.tab;
  }

  addTab(tab: IVramSidebar.ITab): IDisposable {
    return this.registry.addTab(tab);
  }

  addSection(section: IVramSidebar.ISection): IDisposable {
    return this.registry.addSection(section);
  }

  showTab(id: string): void {
    this.registry.showTab(id);
  }

  /** Resolves with the memory panel, loading it if it is not yet. */
  load(): Promise<MemorySidebar> {
    if (!this._loading) {
      this._loading = import('./MemorySidebar').then(
        ({ MemorySidebar }) => {
          if (!this._content) {
            this._problem?.remove();
            this._content = new MemorySidebar({ registry: this.registry });
            if (!this.isDisposed) {
              this.addWidget(this._content);
            }
          }
          return this._content;
        },
        reason => {
          // The load is tried again the next time the tab is shown.
          this._loading = null;
          this._showProblem(reason);
          throw reason;
        }
      );
    }
    return this._loading;
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
    const text = trans.__(
      'Could not load the memory panel (%1). Show this tab again to retry, or reload the page.',
      reason instanceof Error ? reason.message : String(reason)
    );
    if (!this._problem) {
      this._problem = element('div', 'jp-vram-SidebarHost-problem', { text });
      this.node.appendChild(this._problem);
    } else {
      this._problem.textContent = text;
    }
  }

  private _content: MemorySidebar | null = null;
  private _loading: Promise<MemorySidebar> | null = null;
  private _problem: HTMLElement | null = null;
}

/** The options of SidebarHost. */
export namespace SidebarHost {
  /** How the sidebar's tab is labelled. */
  export interface IOptions {
    /**
     * The tooltip of the sidebar's icon, translated; it is "GPU memory" by
     * default.
     */
    caption?: string;
  }
}
