/**
 * The snippets the user has, from the `snippets` setting, and the latest
 * "restart needed" warning, with a signal for the views (the sidebar section
 * and the toolbar menu) and for the commands' palette items.
 *
 * The default list is the schema's `snippets` default. The settings registry
 * holds it already, so the page reads it from there. Its copy in JavaScript
 * (defaultSnippets.ts, the largest part of the extension's code) loads only
 * where there is no registry. Until the first reading the
 * library is empty, and `ready` says when it is done.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { RestartDecision, Snippet } from './snippet';
import {
  builtinSnippets,
  readSnippetSettings,
  SnippetSettings,
  warnAboutSnippetProblems
} from './snippetSettings';

/** A snippet was inserted into a kernel that must restart for it to work. */
export interface SnippetWarning extends RestartDecision {
  snippetId: string;
  snippetTitle: string;
  /** The kernel it is about; the sidebar shows it only for that kernel. */
  model: IKernelMemoryModel | null;
}

/** What changed in a SnippetLibrary, as its `changed` signal names it. */
export type SnippetLibraryChange = 'snippets' | 'warning';

const NO_SNIPPETS: SnippetSettings = { all: [], visible: [], problems: [] };

/**
 * The user's snippets and the latest "restart needed" warning, shared by the
 * views and commands that offer snippets.
 */
export class SnippetLibrary {
  /**
   * Makes a library. With `settings`, they are read at once; without them,
   * the library is empty until the first {@link read}, which gives the
   * default list when the composite has none.
   */
  constructor(settings?: SnippetSettings) {
    this._settings = settings ?? NO_SNIPPETS;
    this._reading = settings ? Promise.resolve() : null;
  }

  /** A library that reads the default list, for a host without settings. */
  static withDefaults(): SnippetLibrary {
    const library = new SnippetLibrary();
    void library.read(undefined);
    return library;
  }

  /** Resolves once the snippets were read at least once. */
  get ready(): Promise<void> {
    return this._reading ?? this.read(undefined);
  }

  /**
   * Reads the settings' composite value with `defaults`, the registry's
   * default of the setting. An `undefined` composite means that there is no
   * settings registry, so the default list applies; without `defaults`, the
   * copy in defaultSnippets.ts loads. It logs the problems and updates the
   * library when the snippets changed. With `defaults` and nothing read
   * before, the library is updated at once, and readings apply in the order
   * they were asked for.
   */
  read(composite: unknown, defaults?: unknown): Promise<void> {
    const apply = ({ list, builtins }: DefaultSnippets) => {
      const read = readSnippetSettings(composite, list, builtins);
      // The problems are compared too, because a duplicate id added to a
      // list changes no snippet but must still be reported.
      const json = JSON.stringify([read.all, read.problems]);
      if (json !== this._json) {
        this._json = json;
        warnAboutSnippetProblems(read);
        this.update(read);
      }
    };
    // The defaults are parsed once, because a settings change reads the
    // user's list again but not the defaults.
    this._defaults ??= usableDefaults(defaults);
    const known = this._defaults;
    if (known && this._reading === null) {
      apply(known);
      this._reading = Promise.resolve();
      return this._reading;
    }
    const previous = this._reading ?? Promise.resolve();
    this._reading = previous
      .then(async () => apply(await this._loadedDefaults()))
      .catch(reason => {
        console.warn('jupyterlab-vram: could not read the snippets.', reason);
      });
    return this._reading;
  }

  get changed(): ISignal<this, SnippetLibraryChange> {
    return this._changed;
  }

  /** Every valid snippet, hidden ones included. */
  get all(): readonly Snippet[] {
    return this._settings.all;
  }

  /** The snippets to list in the palette, the menu and the sidebar. */
  get visible(): readonly Snippet[] {
    return this._settings.visible;
  }

  /** Why entries of the setting were skipped. */
  get problems(): readonly string[] {
    return this._settings.problems;
  }

  /** A snippet by id, hidden ones included, because commands may name them. */
  get(id: string): Snippet | null {
    return this._settings.all.find(s => s.id === id) ?? null;
  }

  /** A default snippet by id, whether or not the user's list has it. */
  async builtin(id: string): Promise<Snippet | null> {
    return (await this._loadedDefaults()).builtins.get(id) ?? null;
  }

  /**
   * Returns a default snippet by id without waiting, or null when the
   * defaults have not been read yet.
   */
  loadedBuiltin(id: string): Snippet | null {
    return this._defaults?.builtins.get(id) ?? null;
  }

  /**
   * Returns the defaults known from the registry, or else the copy in
   * JavaScript, which is loaded only at that point because it is large.
   */
  private async _loadedDefaults(): Promise<DefaultSnippets> {
    if (!this._defaults) {
      const list = (await import('./defaultSnippets')).DEFAULT_SNIPPETS;
      this._defaults ??= { list, builtins: builtinSnippets(list) };
    }
    return this._defaults;
  }

  update(settings: SnippetSettings): void {
    this._settings = settings;
    this._changed.emit('snippets');
  }

  /**
   * The latest restart warning, or null when there is none or it was dismissed.
   */
  get warning(): SnippetWarning | null {
    return this._warning;
  }

  /**
   * Shows a restart warning. It goes away when it is dismissed, or when its
   * kernel restarts, because then the advice was followed. Once its notebook
   * is closed it is no longer shown, since the sidebar shows it for its
   * kernel only, and it is kept, with that kernel's model, until the next
   * warning replaces it.
   */
  setWarning(warning: SnippetWarning | null): void {
    this._watched?.changed.disconnect(this._onModelChanged, this);
    this._watched = warning?.model ?? null;
    this._watched?.changed.connect(this._onModelChanged, this);
    this._warning = warning;
    this._changed.emit('warning');
  }

  dispose(): void {
    this._watched?.changed.disconnect(this._onModelChanged, this);
    this._watched = null;
    Signal.clearData(this);
  }

  private _onModelChanged(model: IKernelMemoryModel): void {
    if (model.state === 'kernel-starting') {
      this.setWarning(null);
    }
  }

  private _settings: SnippetSettings;
  private _json: string | null = null;
  private _defaults: DefaultSnippets | null = null;
  private _reading: Promise<void> | null;
  private _warning: SnippetWarning | null = null;
  private _watched: IKernelMemoryModel | null = null;
  private _changed = new Signal<this, SnippetLibraryChange>(this);
}

/** The default list and its valid entries by id. */
interface DefaultSnippets {
  list: readonly unknown[];
  builtins: ReadonlyMap<string, Snippet>;
}

/**
 * The registry's default where it reads whole as the list, or else null.
 * JupyterLab 4.2 gives an array-of-objects default without its entries'
 * fields, and then the copy in JavaScript serves instead.
 */
function usableDefaults(defaults: unknown): DefaultSnippets | null {
  if (!Array.isArray(defaults) || defaults.length === 0) {
    return null;
  }
  const builtins = builtinSnippets(defaults);
  return builtins.size === defaults.length
    ? { list: defaults, builtins }
    : null;
}
