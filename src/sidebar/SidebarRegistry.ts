/**
 * The tabs and sections that the features have added to the memory panel.
 * It is part of the start-up code, because the features register as the
 * page loads, so it only keeps lists. The panel that shows them
 * (MemorySidebar) loads when the sidebar is first shown and then follows
 * `changed`.
 */
import { DisposableDelegate, IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { IVramSidebar } from './IVramSidebar';

/** The lists behind IVramSidebar: what has been added, and the tab picked. */
export class SidebarRegistry implements IVramSidebar {
  /** Fires when a tab or section is added or removed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Fires when another tab is picked. */
  get tabChanged(): ISignal<this, string> {
    return this._tabChanged;
  }

  /** The tabs, in their order in the tab bar. */
  get tabs(): readonly IVramSidebar.ITab[] {
    return this._tabs;
  }

  /** The sections, by rank. */
  get sections(): readonly IVramSidebar.ISection[] {
    return this._sections;
  }

  /** The tab picked; until one is picked, it is the first by rank. */
  get tab(): string {
    const picked = this._tabs.find(tab => tab.id === this._picked);
    return (picked ?? this._tabs[0])?.id ?? '';
  }

  addTab(tab: IVramSidebar.ITab): IDisposable {
    if (this._tabs.some(known => known.id === tab.id)) {
      throw new Error(`jupyterlab-vram: a sidebar tab "${tab.id}" exists`);
    }
    return this._add(this._tabs, tab);
  }

  addSection(section: IVramSidebar.ISection): IDisposable {
    if (this._sections.some(known => known.id === section.id)) {
      throw new Error(
        `jupyterlab-vram: a sidebar section "${section.id}" exists`
      );
    }
    return this._add(this._sections, section);
  }

  showTab(id: string): void {
    if (!this._tabs.some(tab => tab.id === id) || id === this.tab) {
      return;
    }
    this._picked = id;
    this._tabChanged.emit(id);
  }

  /**
   * Inserts `item` by rank, after those of the same rank, and emits `changed`.
   */
  private _add<T extends { readonly rank: number }>(
    list: T[],
    item: T
  ): IDisposable {
    const at = list.findIndex(known => known.rank > item.rank);
    list.splice(at < 0 ? list.length : at, 0, item);
    this._changed.emit();
    return new DisposableDelegate(() => {
      const index = list.indexOf(item);
      if (index >= 0) {
        list.splice(index, 1);
        this._changed.emit();
      }
    });
  }

  private _tabs: IVramSidebar.ITab[] = [];
  private _sections: IVramSidebar.ISection[] = [];
  private _picked: string | null = null;
  private _changed = new Signal<this, void>(this);
  private _tabChanged = new Signal<this, string>(this);
}
