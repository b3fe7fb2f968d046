/**
 * What the core plugin shares with this package's feature plugins: the
 * monitor itself (not just its public face, IVramMonitor), the settings and
 * the way to run a command. Translations are not part of it, because they
 * are page-wide (see text/translation.ts). It is a token so that each
 * feature plugin declares that it needs the core. It is not a public API
 * for other extensions, which use IVramMonitor and IVramSidebar (tokens.ts).
 */
import { Token } from '@lumino/coreutils';

import type { SettingsSource } from '../settings/SettingsSource';
import type { ExecuteCommand } from '../ui/commandIds';
import type { MemoryMonitor } from './MemoryMonitor';

/** The core services every feature plugin of jupyterlab-vram builds on. */
export interface IVramCore {
  /** Follows the notebooks' kernels; features add their per-kernel parts to it. */
  readonly monitor: MemoryMonitor;
  /**
   * The extension's settings. `set` changes one, and `raw` holds the keys
   * that a feature reads itself.
   */
  readonly settings: SettingsSource;
  /** Runs a command by id, which is what the views' buttons and links do. */
  readonly execute: ExecuteCommand;
}

/** The token of the core services, for this package's plugins only. */
export const IVramCore = new Token<IVramCore>(
  'jupyterlab-vram:IVramCore',
  'The memory monitor, settings and commands, for jupyterlab-vram feature plugins.'
);
