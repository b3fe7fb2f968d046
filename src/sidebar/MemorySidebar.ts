/**
 * The memory panel: a tab bar and, under it, the widgets of the tabs and
 * sections that the features registered (see SidebarRegistry). It knows no
 * feature. Each widget comes from its registration's `load`, which is called
 * the first time one of its tabs is shown, so a tab that nobody opens costs
 * nothing. Widgets are kept in one column by rank, and those of the other
 * tabs are hidden.
 *
 * SidebarHost holds it in the right sidebar and loads this module when the
 * sidebar is first shown.
 */
import { DOMUtils } from '@jupyterlab/apputils';
import { Panel, Widget } from '@lumino/widgets';

// The panel's styles load with the panel rather than with the page; see
// style/base.css for the styles that every page has.
import '../../style/sidebar.css';

import { trans } from '../text/translation';
import { button, element } from '../ui/dom';
import type { IVramSidebar } from './IVramSidebar';
import type { SidebarRegistry } from './SidebarRegistry';

/** The memory panel: the registered tabs, each showing its widgets. */
export class MemorySidebar extends Panel {
  constructor(options: MemorySidebar.IOptions) {
    super();
    this.addClass('jp-vram-MemorySidebar');
    this._registry = options.registry;
    this._tabBar = new Widget();
    this._tabBar.addClass('jp-vram-Tabs');
    this._tabBar.node.setAttribute('role', 'tablist');
    this._tabBar.node.addEventListener('keydown', event =>
      this._onTabKey(event)
    );
    this.addWidget(this._tabBar);
    this._registry.changed.connect(this._onRegistryChanged, this);
    this._registry.tabChanged.connect(this._onTabPicked, this);
    this._onRegistryChanged();
  }

  /** The id of the tab shown. */
  get tab(): string {
    return this._registry.tab;
  }

  /**
   * Shows the tab `id` and loads its widgets; an unknown id changes nothing.
   */
  showTab(id: string): void {
    this._registry.showTab(id);
  }

  /**
   * Resolves when the widgets of tab `id`, by default the one shown, are
   * loaded. A widget that failed to load is logged and shown as a problem,
   * and is loaded again the next time the tab is shown.
   */
  whenLoaded(id: string = this.tab): Promise<void> {
    const parts = this._partsOf(id);
    return Promise.all(parts.map(part => this._load(part))).then(() => {
      this._showProblems(id);
    });
  }

  /**
   * The widget of a loaded section, by section id, or of a tab's own
   * content, by tab id.
   */
  widgetOf(id: string): Widget | null {
    for (const part of this._parts.values()) {
      if (part.id === id && part.widget) {
        return part.widget;
      }
    }
    return null;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._registry.changed.disconnect(this._onRegistryChanged, this);
    this._registry.tabChanged.disconnect(this._onTabPicked, this);
    super.dispose();
  }

  private _onRegistryChanged(): void {
    const wanted = new Set<object>([
      ...this._registry.sections,
      ...this._registry.tabs.filter(tab => tab.load)
    ]);
    for (const [source, part] of this._parts) {
      if (!wanted.has(source)) {
        part.widget?.dispose();
        this._parts.delete(source);
      }
    }
    for (const section of this._registry.sections) {
      if (!this._parts.has(section)) {
        this._parts.set(section, sectionPart(section, this._next++));
      }
    }
    for (const tab of this._registry.tabs) {
      if (tab.load && !this._parts.has(tab)) {
        this._parts.set(tab, contentPart(tab, this._next++));
      }
    }
    this._renderTabBar();
    this._onTabPicked();
  }

  private _onTabPicked(): void {
    const tab = this.tab;
    for (const [name, tabButton] of this._tabButtons) {
      const selected = name === tab;
      tabButton.setAttribute('aria-selected', String(selected));
      tabButton.tabIndex = selected ? 0 : -1;
      tabButton.classList.toggle('jp-mod-selected', selected);
    }
    for (const part of this._parts.values()) {
      part.widget?.setHidden(!part.tabs.includes(tab));
    }
    const fill = this._registry.tabs.find(t => t.id === tab)?.fill === true;
    this.toggleClass('jp-vram-MemorySidebar-fillTab', fill);
    this._problem?.setHidden(true);
    void this.whenLoaded(tab);
  }

  private _partsOf(tab: string): IPart[] {
    return Array.from(this._parts.values()).filter(part =>
      part.tabs.includes(tab)
    );
  }

  /**
   * Loads a part's widget once. A failure is kept on the part until the next
   * try, so that it can be shown.
   */
  private _load(part: IPart): Promise<void> {
    if (part.widget) {
      return Promise.resolve();
    }
    if (!part.loading) {
      part.problem = null;
      part.loading = part.load().then(
        widget => {
          part.loading = null;
          if (this.isDisposed || !this._isRegistered(part)) {
            widget.dispose();
            return;
          }
          part.widget = widget;
          this._place(part, widget);
        },
        reason => {
          part.loading = null;
          part.problem =
            reason instanceof Error ? reason.message : String(reason);
          console.warn(
            `jupyterlab-vram: could not load the sidebar part "${part.id}".`,
            reason
          );
        }
      );
    }
    return part.loading;
  }

  private _isRegistered(part: IPart): boolean {
    return this._parts.get(part.key) === part;
  }

  /**
   * Inserts a loaded widget at its place by rank, and shows it if its tab is
   * shown.
   */
  private _place(part: IPart, widget: Widget): void {
    const before = Array.from(this._parts.values()).filter(
      other => other.widget && other !== part && compareParts(other, part) < 0
    ).length;
    widget.setHidden(!part.tabs.includes(this.tab));
    if (part.fill) {
      widget.addClass('jp-vram-MemorySidebar-fill');
    }
    this.insertWidget(1 + before, widget);
    this._linkTabsToPanels();
  }

  /** Says which of the tab's widgets could not load, under them. */
  private _showProblems(tab: string): void {
    const problems = this._partsOf(tab).filter(part => part.problem);
    if (problems.length === 0 || tab !== this.tab || this.isDisposed) {
      this._problem?.setHidden(true);
      return;
    }
    if (!this._problem) {
      this._problem = new Widget({
        node: element('div', 'jp-vram-SidebarHost-problem')
      });
      this.addWidget(this._problem);
    }
    this._problem.node.textContent = trans.__(
      'Could not load part of this tab (%1). Show this tab again to retry, or reload the page.',
      problems.map(part => part.problem).join('; ')
    );
    this._problem.setHidden(false);
  }

  private _renderTabBar(): void {
    this._tabBar.node.replaceChildren();
    const buttons = new Map<string, HTMLButtonElement>();
    for (const tab of this._registry.tabs) {
      const tabButton = button(
        'jp-vram-Tab',
        { role: `${tab.id}-tab`, text: tab.label },
        () => this.showTab(tab.id)
      );
      tabButton.setAttribute('role', 'tab');
      tabButton.id = this._tabButtons.get(tab.id)?.id ?? DOMUtils.createDomID();
      buttons.set(tab.id, tabButton);
      this._tabBar.node.appendChild(tabButton);
    }
    this._tabButtons = buttons;
    this._linkTabsToPanels();
  }

  /**
   * Implements the WAI-ARIA tabs pattern. Only the selected tab is in the
   * Tab order, and the arrow keys, Home and End move between tabs, showing
   * each one.
   */
  private _onTabKey(event: KeyboardEvent): void {
    const names = Array.from(this._tabButtons.keys());
    const at = names.findIndex(
      name => this._tabButtons.get(name) === event.target
    );
    if (at < 0) {
      return;
    }
    let next: number;
    switch (event.key) {
      case 'ArrowRight':
        next = (at + 1) % names.length;
        break;
      case 'ArrowLeft':
        next = (at - 1 + names.length) % names.length;
        break;
      case 'Home':
        next = 0;
        break;
      case 'End':
        next = names.length - 1;
        break;
      default:
        return;
    }
    event.preventDefault();
    this.showTab(names[next]);
    this._tabButtons.get(names[next])?.focus();
  }

  /**
   * Tells assistive technology which widgets each tab shows (aria-controls),
   * and labels each widget of one tab by that tab. A widget shown on several
   * tabs, such as the cleanup bar, is a toolbar of the panel, not a tab
   * panel. A widget with a role and name of its own, such as the death
   * notice's live region or the out-of-memory diagnosis, keeps them, because
   * taking them would silence the one and rename the other.
   */
  private _linkTabsToPanels(): void {
    for (const [name, tabButton] of this._tabButtons) {
      const controlled: string[] = [];
      for (const part of this._partsOf(name)) {
        const widget = part.widget;
        if (!widget || part.tabs.length !== 1) {
          continue;
        }
        widget.id ||= DOMUtils.createDomID();
        controlled.push(widget.id);
        if (!widget.node.hasAttribute('role')) {
          widget.node.setAttribute('role', 'tabpanel');
        }
        if (widget.node.getAttribute('role') === 'tabpanel') {
          widget.node.setAttribute('aria-labelledby', tabButton.id);
        }
      }
      tabButton.setAttribute('aria-controls', controlled.join(' '));
    }
  }

  private _registry: SidebarRegistry;
  private _tabBar: Widget;
  private _tabButtons = new Map<string, HTMLButtonElement>();
  /** One part per registered section, and per tab with content of its own. */
  private _parts = new Map<object, IPart>();
  private _next = 0;
  private _problem: Widget | null = null;
}

/** A registered widget of the panel, loaded or not. */
interface IPart {
  /** The section's id, or the tab's id for a tab's own content. */
  readonly id: string;
  readonly tabs: readonly string[];
  /**
   * The part's place: sections go by rank, and a tab's own content comes after
   * its sections.
   */
  readonly rank: number;
  /** The order of registration, among parts of the same rank. */
  readonly order: number;
  readonly fill: boolean;
  /**
   * The registration that the part comes from, which is the key of
   * MemorySidebar's parts.
   */
  readonly key: object;
  readonly load: () => Promise<Widget>;
  widget: Widget | null;
  loading: Promise<void> | null;
  /** Why the last load failed, or null when it did not fail. */
  problem: string | null;
}

function sectionPart(section: IVramSidebar.ISection, order: number): IPart {
  return {
    id: section.id,
    tabs: section.tabs,
    rank: section.rank,
    order,
    fill: false,
    key: section,
    load: () => section.load(),
    widget: null,
    loading: null,
    problem: null
  };
}

function contentPart(tab: IVramSidebar.ITab, order: number): IPart {
  return {
    id: tab.id,
    tabs: [tab.id],
    rank: Number.POSITIVE_INFINITY,
    order,
    fill: tab.fill === true,
    key: tab,
    load: () => tab.load!(),
    widget: null,
    loading: null,
    problem: null
  };
}

function compareParts(a: IPart, b: IPart): number {
  return a.rank - b.rank || a.order - b.order;
}

/** The options of MemorySidebar. */
export namespace MemorySidebar {
  /** What the panel is made from. */
  export interface IOptions {
    /** The tabs and sections to show, and the tab picked. */
    registry: SidebarRegistry;
  }
}
