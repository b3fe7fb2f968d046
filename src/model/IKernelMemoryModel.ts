/**
 * The read-only face of one notebook kernel's memory model, which is what
 * views, commands and other extensions may read of it; KernelMemoryModel is
 * the implementation. tokens.ts re-exports it as part of the public
 * interface.
 */
import { ISignal } from '@lumino/signaling';

import { CellHistory } from './CellHistory';
import { KernelDeathFacts } from './kernelDeath';
import { MemoryHistory } from './MemoryHistory';
import { MonitorState } from './MonitorState';
import type { VisibilityNote } from './visibilityNotes';
import { HelloMessage, ParseResult } from '../protocol/messages';
import { SampleMessage } from '../protocol/sample';

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
