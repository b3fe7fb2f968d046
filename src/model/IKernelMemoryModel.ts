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
 * What the kernel runs while it is busy. 'helper' is the code this page sent
 * to start the memory helper in it: the helper's bootstrap, or the empty
 * request that wakes a restarted kernel for it. 'cell' is anything else: a
 * cell from this page or another, or code this page cannot name.
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
  /**
   * A sentence for people that explains `state`; it may quote the kernel's
   * text.
   */
  readonly stateReason: string;
  /**
   * The helper's hello, or null until it arrives and again after a kernel
   * change.
   */
  readonly hello: HelloMessage | null;
  /** The newest sample, or null until one arrives. */
  readonly latest: SampleMessage | null;
  /**
   * The number of samples taken in over the model's life; kernel restarts do
   * not reset it.
   */
  readonly sampleCount: number;
  /**
   * The `time` of the newest sample (Unix seconds, kernel clock), or null if
   * none came.
   */
  readonly lastSampleTime: number | null;
  /** True while the kernel runs code. Samples keep coming in the meantime. */
  readonly kernelBusy: boolean;
  /**
   * What keeps the kernel busy (see KernelBusyWith), or null while it is idle.
   */
  readonly kernelBusyWith: KernelBusyWith | null;
  readonly notes: readonly VisibilityNote[];
  /**
   * The facts of the kernel's last death that nobody asked for, or null if
   * none.
   */
  readonly death: KernelDeathFacts | null;
  /**
   * A bounded history of host RSS and per-GPU figures across kernel
   * processes. Where one process ended, because it died, was restarted or
   * the kernel changed, is recorded in its `marks`.
   */
  readonly history: MemoryHistory;
  /**
   * A bounded list of per-cell memory records (delta, peak, duration,
   * status). Its own `changed` signal says which records came in.
   */
  readonly cells: CellHistory;
  /** Emitted after every change, saying what changed. */
  readonly changed: ISignal<IKernelMemoryModel, ModelChange>;
  /**
   * Takes in the `data` of one comm message from the kernel helper. This is
   * the only way in for the hello, samples and cell records. Malformed
   * data is reported in `notes`, never thrown. A benchmark can feed a cell
   * record with `ingest({type: 'cells', records: [record]})`.
   */
  ingest(data: unknown): ParseResult;
}
