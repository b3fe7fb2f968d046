/**
 * What the estimate commands act on, in a module of its own so that the
 * commands (estimateCommands.ts) and their lazily loaded steps
 * (estimateCommandLazy.ts) share it without importing each other.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { ICommandPalette } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';

import type { ByteUnits } from '../../text/format';
import type { Notify } from '../../ui/notify';
import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import type { ISnippetNotebook } from '../snippets/insertSnippet';
import type { MemoryEstimate } from './MemoryEstimate';

/** What the estimate commands act on, as the feature's plugin hands it to them. */
export interface IEstimateCommandOptions {
  app: Pick<JupyterFrontEnd, 'commands' | 'shell'>;
  trans: TranslationBundle;
  sidebar: Pick<IVramSidebar, 'showTab'>;
  palette: ICommandPalette | null;
  category: string;
  /** The active kernel's estimate; null without one. */
  current: () => MemoryEstimate | null;
  /**
   * The active kernel's `notebook_names` answer, unchecked; null where the
   * kernel cannot answer now (busy, not live).
   */
  notebookNames: () => Promise<unknown>;
  /** The active notebook, which the cells go into; null without one. */
  notebook: () => {
    readonly id: string;
    readonly content: ISnippetNotebook;
  } | null;
  units: () => ByteUnits;
  notify: Notify;
}
