/**
 * The interface of the memory monitor that other extensions and our browser
 * tests reach through the IVramMonitor token (tokens.ts). It offers the
 * active notebook's kernel model, the settings, and a fresh sample on
 * request.
 */
import { Token } from '@lumino/coreutils';
import { ISignal } from '@lumino/signaling';

import type { IKernelMemoryModel } from '../model/IKernelMemoryModel';
import { HelperRequestResults } from '../protocol/messages';
import { VramSettings } from '../settings/settings';

/** The memory monitor: it follows the active notebook's kernel. */
export interface IVramMonitor {
  /**
   * The model of the active notebook's kernel, or null when no notebook is
   * open.
   */
  readonly current: IKernelMemoryModel | null;
  readonly currentChanged: ISignal<IVramMonitor, IKernelMemoryModel | null>;
  readonly settings: VramSettings;
  readonly settingsChanged: ISignal<IVramMonitor, VramSettings>;
  /**
   * Asks the active kernel's helper for a fresh sample, and resolves with
   * the seq of that sample once it is in `current.latest`. It rejects when
   * there is no live helper or the request times out.
   */
  refresh(): Promise<HelperRequestResults['snapshot']>;
}

/** The token of the memory monitor, provided by `jupyterlab-vram:monitor`. */
export const IVramMonitor = new Token<IVramMonitor>(
  'jupyterlab-vram:IVramMonitor',
  'Live GPU and host memory of the active notebook kernel.'
);
