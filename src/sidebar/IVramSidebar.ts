/**
 * The memory panel's registry: the interface through which each feature adds
 * its tab, or a section to another feature's tab, without the panel knowing
 * the features. It is public (the `IVramSidebar` token of tokens.ts), so that
 * another extension can add a tab of its own.
 */
import { Token } from '@lumino/coreutils';
import type { IDisposable } from '@lumino/disposable';
import type { Widget } from '@lumino/widgets';

/** The memory panel of the right sidebar, as a registry of tabs and sections. */
export interface IVramSidebar {
  /**
   * Adds a tab to the panel's tab bar, in the order of the tabs' ranks.
   * Disposing of the result removes the tab, and its content if loaded.
   */
  addTab(tab: IVramSidebar.ITab): IDisposable;

  /**
   * Adds a section to one or more tabs: a widget shown, in the order of the
   * ranks, above the tab's own content. Disposing of the result removes it.
   */
  addSection(section: IVramSidebar.ISection): IDisposable;

  /**
   * Picks the tab that the panel shows; an unknown id changes nothing. The
   * panel itself is opened by the `jupyterlab-vram:open-sidebar` command.
   */
  showTab(id: string): void;

  /** The id of the tab shown, or picked for when the panel loads. */
  readonly tab: string;
}

/** The shapes of what is added to the memory panel. */
export namespace IVramSidebar {
  /** A tab of the memory panel. */
  export interface ITab {
    /**
     * The tab's id, unique among the tabs. It is also the `tab` argument of
     * the open-sidebar command.
     */
    readonly id: string;
    /** The tab's text in the tab bar, already translated. */
    readonly label: string;
    /** The tab's place in the tab bar; lower ranks come first. */
    readonly rank: number;
    /**
     * Makes the tab's own content the first time the tab is shown, so that
     * a module of its own can load only then. A tab without it shows only
     * its sections.
     */
    readonly load?: () => Promise<Widget>;
    /**
     * Whether the content fills the panel's height and scrolls on its own,
     * as a long list with a toolbar does, rather than the panel scrolling.
     */
    readonly fill?: boolean;
  }

  /** A widget shown on one or more tabs, above their own content. */
  export interface ISection {
    /** The section's id, unique among the sections. */
    readonly id: string;
    /** The ids of the tabs that show it. */
    readonly tabs: readonly string[];
    /** The section's place among the tab's sections; lower ranks come first. */
    readonly rank: number;
    /** Makes the widget, the first time one of its tabs is shown. */
    readonly load: () => Promise<Widget>;
  }
}

/** The token of the memory panel's registry, provided by `jupyterlab-vram:sidebar`. */
export const IVramSidebar = new Token<IVramSidebar>(
  'jupyterlab-vram:IVramSidebar',
  'The tabs of the GPU memory sidebar: add a tab or a section to one.'
);
