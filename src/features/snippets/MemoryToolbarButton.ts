/**
 * The "Memory ▾" button of the notebook toolbar, which opens a menu of the
 * free-memory actions and of the snippets, the latter in an "Insert Cell to
 * Save Memory" submenu. Every item is a command, so that the menu, the
 * palette and the sidebar behave alike. It is registered as the toolbar item
 * `vram-memory` of the `Notebook` toolbar (`jupyter.lab.toolbars` in
 * schema/plugin.json).
 *
 * The tests find the button as `[data-vram-role="toolbar-memory"]`, the menu
 * as `[data-vram-role="toolbar-memory-menu"]` (of class `jp-vram-MemoryMenu`),
 * and the submenu as `[data-vram-role="toolbar-snippet-menu"]`.
 */
import { CommandRegistry } from '@lumino/commands';
import { Menu, Widget } from '@lumino/widgets';

import { CommandIDs } from '../../ui/commandIds';
import { SnippetLibrary } from './SnippetLibrary';
import { button } from '../../ui/dom';
import { trans } from '../../text/translation';

/** The free-memory items at the top of the menu. */
export const MEMORY_MENU_COMMANDS: readonly string[] = [
  CommandIDs.freeMemory,
  CommandIDs.collectGarbage,
  CommandIDs.emptyCache,
  CommandIDs.inspectMemory
];

/**
 * The "Memory" button of the notebook toolbar, which opens a menu of the memory
 * actions and snippets.
 */
export class MemoryToolbarButton extends Widget {
  constructor(options: MemoryToolbarButton.IOptions) {
    super();
    this._commands = options.commands;
    this._library = options.library;
    this._beforeOpen = options.beforeOpen ?? (() => undefined);
    this.addClass('jp-vram-ToolbarMemory');

    this._button = button(
      'jp-vram-ToolbarMemory-button',
      {
        role: 'toolbar-memory',
        text: trans.__('Memory \u25BE'),
        title: trans.__('Free GPU memory, or insert code that saves memory')
      },
      // A keyboard "click" has no pointer position, which shows as detail 0;
      // the menu then puts the keyboard on its first item.
      event => this.openMenu(event.detail === 0)
    );
    this._button.setAttribute('aria-haspopup', 'menu');
    this._button.setAttribute('aria-expanded', 'false');
    this.node.appendChild(this._button);

    this._menu = new Menu({ commands: this._commands });
    this._menu.addClass('jp-vram-MemoryMenu');
    this._menu.node.dataset.vramRole = 'toolbar-memory-menu';
    this._snippetMenu = new Menu({ commands: this._commands });
    this._snippetMenu.title.label = trans.__('Insert Cell to Save Memory');
    this._snippetMenu.node.dataset.vramRole = 'toolbar-snippet-menu';
    this._menu.aboutToClose.connect(() =>
      this._button.setAttribute('aria-expanded', 'false')
    );
  }

  /** The menu, which is rebuilt at each opening. */
  get menu(): Menu {
    return this._menu;
  }

  /** Fills the menu with the current snippets and opens it under the button. */
  openMenu(fromKeyboard = false): void {
    this._beforeOpen();
    this._fill();
    const rect = this._button.getBoundingClientRect();
    this._button.setAttribute('aria-expanded', 'true');
    this._menu.open(rect.left, rect.bottom);
    if (fromKeyboard) {
      this._menu.activateNextItem();
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._menu.dispose();
    this._snippetMenu.dispose();
    super.dispose();
  }

  private _fill(): void {
    const menu = this._menu;
    const snippets = this._snippetMenu;
    menu.clearItems();
    snippets.clearItems();
    for (const command of MEMORY_MENU_COMMANDS) {
      menu.addItem({ command });
    }
    const visible = this._library.visible;
    if (visible.length) {
      for (const snippet of visible) {
        snippets.addItem({
          command: CommandIDs.insertSnippet,
          args: { id: snippet.id, menu: true }
        });
      }
      menu.addItem({ type: 'separator' });
      menu.addItem({ type: 'submenu', submenu: snippets });
    }
    menu.addItem({ type: 'separator' });
    menu.addItem({ command: CommandIDs.openSidebar });
  }

  private _commands: CommandRegistry;
  private _library: SnippetLibrary;
  private _beforeOpen: () => void;
  private _button: HTMLButtonElement;
  private _menu: Menu;
  private _snippetMenu: Menu;
}

/** The types that go with MemoryToolbarButton. */
export namespace MemoryToolbarButton {
  /** The options a new MemoryToolbarButton is constructed with. */
  export interface IOptions {
    commands: CommandRegistry;
    library: SnippetLibrary;
    /**
     * Called before the menu opens. The app makes the button's notebook the
     * current one, so that the commands act on it.
     */
    beforeOpen?: () => void;
  }
}
