/**
 * The snippets the user has (from the `snippets` setting) and the latest
 * "restart needed" warning, with a signal for the views (sidebar section,
 * toolbar menu) and the commands' palette items.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { IKernelMemoryModel } from '../tokens';
import { DEFAULT_SNIPPETS } from './defaultSnippets';
import { RestartDecision, Snippet } from './snippet';
import { readSnippetSettings, SnippetSettings } from './snippetSettings';

/** A snippet was inserted into a kernel that must restart for it to work. */
export interface SnippetWarning extends RestartDecision {
  snippetId: string;
  snippetTitle: string;
  /** The kernel it is about; the sidebar shows it only for that kernel. */
  model: IKernelMemoryModel | null;
}

export type SnippetLibraryChange = 'snippets' | 'warning';

export class SnippetLibrary {
  constructor(settings?: SnippetSettings) {
    this._settings = settings ?? readSnippetSettings({ snippets: DEFAULT_SNIPPETS });
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

  /** A snippet by id (hidden ones too: commands may name them). */
  get(id: string): Snippet | null {
    return this._settings.all.find(s => s.id === id) ?? null;
  }

  update(settings: SnippetSettings): void {
    this._settings = settings;
    this._changed.emit('snippets');
  }

  /** The latest restart warning; null when none (or dismissed). */
  get warning(): SnippetWarning | null {
    return this._warning;
  }

  /**
   * Show a restart warning; it goes away when dismissed, when its kernel
   * restarts (the advice was followed) or when its model is disposed.
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
  private _warning: SnippetWarning | null = null;
  private _watched: IKernelMemoryModel | null = null;
  private _changed = new Signal<this, SnippetLibraryChange>(this);
}
