/**
 * The steps of the release command: find the releasable in the active
 * kernel's list (asking for the list first where this page has none yet,
 * as when the out-of-memory assistant names one), ask the user, send
 * `release_engine`, and tell how it went. processCommands.ts registers the
 * command and loads this module with the first release rather than with the
 * page.
 */
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import type { ByteUnits } from '../../text/format';
import type { Releasable } from '../../protocol/release';
import { trans } from '../../text/translation';
import { IProcessActionHost, timeoutArg } from './processActionHost';
import type { ReleaseState } from './EngineReleases';
import { releasableName, releaseLines } from './releaseText';

/** Seconds the helper waits for the released processes to end unless the command says otherwise. */
export const DEFAULT_RELEASE_TIMEOUT_S = 10;

/** What the release flow asks of the command that runs it. */
export interface IReleaseHost extends IProcessActionHost {
  /** Asks the user; resolves to true when the release is wanted. */
  confirm: (releasable: Releasable, units: ByteUnits) => Promise<boolean>;
}

/**
 * Runs the release command for `args.kind` and `args.name`: resolves to
 * the release's state, or to null when nothing was asked of the kernel (no
 * such releasable listed, or the user said no).
 */
export async function releaseEngine(
  args: ReadonlyPartialJSONObject,
  host: IReleaseHost
): Promise<ReleaseState | null> {
  const tracker = host.current();
  if (!tracker) {
    host.notify(
      'info',
      trans.__('No kernel to release anything of: open a notebook first.')
    );
    return null;
  }
  const kind = typeof args.kind === 'string' ? args.kind : '';
  const name = typeof args.name === 'string' ? args.name : '';
  const engines = tracker.engines;
  if (!engines.get(kind, name)) {
    // The list may be older than what asks for the release.
    await engines.refresh();
  }
  const releasable = engines.get(kind, name);
  if (!releasable) {
    host.notify(
      'info',
      engines.listError
        ? trans.__(
            'Nothing was released: the kernel did not list what it can release (%1).',
            engines.listError
          )
        : trans.__(
            "Nothing was released: %1 is not in the kernel's list of what it can release now.",
            releasableName({ kind, name })
          )
    );
    return null;
  }
  if (!(await host.confirm(releasable, host.units()))) {
    return null;
  }
  host.showProcesses();
  const state = await engines.release(
    releasable,
    timeoutArg(args, 1, 120, DEFAULT_RELEASE_TIMEOUT_S)
  );
  const [first] = releaseLines(state, host.units());
  host.notify(
    state.status === 'done' && state.outcome.outcome === 'released'
      ? 'success'
      : state.status === 'failed'
        ? 'error'
        : 'warning',
    first
  );
  return state;
}
