/**
 * The types the memory monitor works with: the notebook panels and tracker
 * it follows, the helper connection it drives (which tests replace with
 * fakes), and the monitored sessions it gives out to the sidebar, the
 * Kernels tab and the commands.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { ISignal } from '@lumino/signaling';

import { OpenComm } from '../kernel/CommsLeftOpen';
import { HelperRequestResults } from '../protocol/messages';
import { helperConfigFor } from '../settings/settings';
import { ICleanupConnection } from '../kernel/connectionRequests';
import { KernelMemoryModel } from '../model/KernelMemoryModel';

/** What the monitor needs of a notebook panel. */
export interface IMonitoredNotebook {
  readonly sessionContext: ISessionContext;
  readonly disposed: ISignal<any, void>;
  readonly isDisposed: boolean;
}

/** What the monitor needs of INotebookTracker. */
export interface INotebookSource {
  readonly currentWidget: IMonitoredNotebook | null;
  readonly currentChanged: ISignal<any, IMonitoredNotebook | null>;
}

/** A model with the connection that feeds it. */
export interface IMonitoredSession {
  readonly model: KernelMemoryModel;
  readonly connection: IHelperConnection;
}

/**
 * A monitored session with what it belongs to: its session context (the
 * kernel) and the notebook panels that show it. The Kernels tab lists these.
 */
export interface IMonitoredSessionEntry extends IMonitoredSession {
  readonly sessionContext: ISessionContext;
  readonly panels: readonly IMonitoredNotebook[];
}

/**
 * The parts of KernelHelperConnection that the monitor drives; tests use fakes.
 */
export interface IHelperConnection extends ICleanupConnection {
  readonly isDisposed: boolean;
  configure(config: ReturnType<typeof helperConfigFor>): Promise<unknown>;
  requestSnapshot(): Promise<HelperRequestResults['snapshot']>;
  /**
   * This is optional so that test fakes may leave it out; the snippets then
   * use placeholders.
   */
  requestNotebookNames?(
    timeoutMs?: number
  ): Promise<HelperRequestResults['notebook_names']>;
  reconnect(): void;
  dispose(): void;
  /** The comm that is open, optional so that test fakes may leave it out. */
  readonly openComm?: OpenComm | null;
  /** Closes the comm, as far as possible, because the page is going away. */
  closeForPageExit?(): void;
  /**
   * Called when a notebook cell is about to be sent, to deliver the helper
   * ahead of it if it is not there yet.
   */
  deliverBeforeExecution?(): void;
}
