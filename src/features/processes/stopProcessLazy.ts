/**
 * The steps of the stop command: find the process in the active kernel's
 * list, ask the user, send `stop_process`, and tell how it went.
 * processCommands.ts registers the command and loads this module with the
 * first stop rather than with the page.
 */
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { trans } from '../../text/translation';
import { IProcessActionHost, timeoutArg } from './processActionHost';
import type { StopState } from './ProcessTracker';
import type { StopProcessRequest } from './StopProcessDialog';
import { stopLines } from './stopText';

/** Seconds between SIGTERM and SIGKILL unless the command says otherwise (the helper's default). */
export const DEFAULT_STOP_TIMEOUT_S = 5;

/** What the stop flow asks of the command that runs it. */
export interface IStopHost extends IProcessActionHost {
  /** Asks the user; resolves to true when the stop is wanted. */
  confirm: (request: StopProcessRequest) => Promise<boolean>;
}

/**
 * Runs the stop command for `args.pid` and `args.startTime`: resolves to
 * the stop's state, or to null when nothing was asked of the kernel (no such
 * process listed, or the user said no).
 */
export async function stopProcess(
  args: ReadonlyPartialJSONObject,
  host: IStopHost
): Promise<StopState | null> {
  const tracker = host.current();
  const { pid, startTime } = args;
  if (!tracker) {
    host.notify(
      'info',
      trans.__('No kernel to stop a process of: open a notebook first.')
    );
    return null;
  }
  const listed =
    typeof pid === 'number' && typeof startTime === 'number'
      ? tracker.get(pid, startTime)
      : undefined;
  if (!listed) {
    host.notify(
      'info',
      trans.__(
        "Nothing was stopped: pid %1 with that start time is not in the kernel's list of processes now.",
        String(pid)
      )
    );
    return null;
  }
  const timeoutS = timeoutArg(args, 0.1, 60, DEFAULT_STOP_TIMEOUT_S);
  const confirmed = await host.confirm({
    process: listed.process,
    origin: tracker.origin(listed),
    timeoutS,
    units: host.units()
  });
  if (!confirmed) {
    return null;
  }
  host.showProcesses();
  const state = await tracker.stop(listed.process, timeoutS);
  const [first] = stopLines(state, host.units());
  const ended =
    state.status === 'done' &&
    (state.result.outcome === 'terminated' ||
      state.result.outcome === 'killed');
  host.notify(
    ended ? 'success' : state.status === 'failed' ? 'error' : 'warning',
    first
  );
  return state;
}
