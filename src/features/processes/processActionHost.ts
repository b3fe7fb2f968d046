/**
 * What the stop and release commands' steps (stopProcessLazy.ts,
 * releaseEngineLazy.ts) ask of the command that runs them, and how both
 * read the seconds they may wait from the command's arguments.
 */
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import type { ByteUnits } from '../../text/format';
import type { Notify } from '../../ui/notify';
import type { ProcessTracker } from './ProcessTracker';

/** The command's side of a stop or a release. */
export interface IProcessActionHost {
  /** The active kernel's processes; null without a kernel. */
  current: () => ProcessTracker | null;
  units: () => ByteUnits;
  notify: Notify;
  /** Shows the Processes tab, where the outcome stays. */
  showProcesses: () => void;
}

/** `args.timeoutS` where it is a number within `[least, most]`, else `fallback`. */
export function timeoutArg(
  args: ReadonlyPartialJSONObject,
  least: number,
  most: number,
  fallback: number
): number {
  const t = args.timeoutS;
  return typeof t === 'number' && t >= least && t <= most ? t : fallback;
}
