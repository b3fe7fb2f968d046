/**
 * The public interface of jupyterlab-vram, for other extensions and for our
 * browser tests and benchmarks:
 *
 *   const monitor = await window.galata.getPlugin('jupyterlab-vram:plugin');
 *   monitor.current?.ingest({type: 'sample', ...});   // feed a sample by hand
 *   monitor.current?.ingest({type: 'cells', records});  // feed cell records
 */
import { Token } from '@lumino/coreutils';
import { ISignal } from '@lumino/signaling';

import { CellHistory } from './model/CellHistory';
import { KernelDeathFacts } from './model/kernelDeath';
import { MemoryHistory } from './model/MemoryHistory';
import { MonitorState } from './model/MonitorState';
import type { VisibilityNote } from './model/visibilityNotes';
import { HelloMessage, HelperRequestResults, ParseResult } from './protocol/messages';
import { SampleMessage } from './protocol/sample';
import { VramSettings } from './settings/settings';

/**
 * What the kernel runs while busy: 'helper', the code this page sent to
 * start the memory helper in it (its bootstrap, or the empty request that
 * wakes a restarted kernel for it); 'cell', anything else (a cell, from this
 * page or another, or code this page cannot name).
 */
export type KernelBusyWith = 'cell' | 'helper';

/** What changed in a kernel memory model (the payload of `changed`). */
export type ModelChange =
  | 'state'
  | 'hello'
  | 'sample'
  | 'busy'
  | 'notes'
  | 'history'
  | 'cells'
  | 'death';

/** The memory of one notebook's kernel, as the helper reports it. */
export interface IKernelMemoryModel {
  readonly state: MonitorState;
  /** Human sentence for `state` (kernel text may be part of it). */
  readonly stateReason: string;
  /** The helper's hello; null until it arrives (and after a kernel change). */
  readonly hello: HelloMessage | null;
  /** The newest sample; null until one arrives. */
  readonly latest: SampleMessage | null;
  /** Samples taken in over the model's life (not reset by kernel restarts). */
  readonly sampleCount: number;
  /** `time` of the newest sample (Unix seconds, kernel clock); null if none. */
  readonly lastSampleTime: number | null;
  /** True while the kernel runs code (samples keep coming meanwhile). */
  readonly kernelBusy: boolean;
  /** What keeps the kernel busy (see KernelBusyWith); null while it is not. */
  readonly kernelBusyWith: KernelBusyWith | null;
  readonly notes: readonly VisibilityNote[];
  /** The facts of the kernel's last unasked-for death; null if none. */
  readonly death: KernelDeathFacts | null;
  /**
   * Bounded history of host RSS and per-GPU figures, across kernel
   * processes: where one ended (died, restarted, kernel changed) is in its
   * `marks`.
   */
  readonly history: MemoryHistory;
  /**
   * Per-cell memory records (delta, peak, duration, status), bounded; its
   * own `changed` signal says which records came in.
   */
  readonly cells: CellHistory;
  /** Emitted after every change, saying what changed. */
  readonly changed: ISignal<IKernelMemoryModel, ModelChange>;
  /**
   * Take in the `data` of one comm message from the kernel helper: the one
   * door through which hello, samples and cell records enter. Malformed
   * data is reported in `notes`, never thrown. A benchmark can feed a cell
   * record with `ingest({type: 'cells', records: [record]})`.
   */
  ingest(data: unknown): ParseResult;
}

export interface IVramMonitor {
  /** Model of the active notebook's kernel; null when no notebook is open. */
  readonly current: IKernelMemoryModel | null;
  readonly currentChanged: ISignal<IVramMonitor, IKernelMemoryModel | null>;
  readonly settings: VramSettings;
  readonly settingsChanged: ISignal<IVramMonitor, VramSettings>;
  /**
   * Ask the active kernel's helper for a fresh sample; resolves with the seq
   * of that sample once it is in `current.latest`. Rejects when there is no
   * live helper or the request times out.
   */
  refresh(): Promise<HelperRequestResults['snapshot']>;
}

export const IVramMonitor = new Token<IVramMonitor>(
  'jupyterlab-vram:IVramMonitor',
  'Live GPU and host memory of the active notebook kernel.'
);
