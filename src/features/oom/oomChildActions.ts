/**
 * The fixes the out-of-memory assistant offers when the kernel's own
 * processes hold the memory (see oomChildrenText.ts for the words): Release
 * the engine that started a child on the failing card, or Stop the child,
 * each asking first; and the snippet of fewer, persistent DataLoader workers
 * after the out-of-memory killer took one.
 */
import { ByteUnits, formatBytes } from '../../text/format';
import type { OomDiagnosis, OomProcess } from '../../protocol/oom';
import { trans } from '../../text/translation';
import { CommandIDs } from '../../ui/commandIds';
import { roleText } from '../processes/processText';
import { releasableName } from '../processes/releaseText';
import type { OomAction } from './oomAction';
import { kernelChildren } from './oomChildrenText';
import { known } from './oomFigure';

/** The most children one diagnosis offers a Release or Stop for. */
export const MAX_CHILD_ACTIONS = 3;

/**
 * The Release and Stop actions for the kernel's children on the failing
 * card, largest first, one per releasable (it ends all of its processes);
 * each asks before it does anything.
 */
export function childProcessActions(
  d: OomDiagnosis,
  units: ByteUnits
): OomAction[] {
  const actions: OomAction[] = [];
  for (const child of kernelChildren(d)) {
    const action = childAction(child, d.kind === 'host', units);
    if (action && !actions.some(a => a.id === action.id)) {
      actions.push(action);
    }
    if (actions.length === MAX_CHILD_ACTIONS) {
      break;
    }
  }
  return actions;
}

function childAction(
  child: OomProcess,
  host: boolean,
  units: ByteUnits
): OomAction | null {
  const remedies = child.remedies ?? [];
  const where = host ? trans.__('of host RAM') : trans.__('on this card');
  const back = known(child.used_bytes)
    ? trans.__(
        'Gives back up to %1 %2',
        formatBytes(child.used_bytes, units),
        where
      )
    : trans.__('Gives back what it holds %1', where);
  if (remedies.includes('release_engine') && child.release) {
    const { kind, name } = child.release;
    return {
      id: `release-${kind}-${name}`,
      label: trans.__('Release %1', releasableName(child.release)),
      gain:
        back +
        trans.__(
          ' and ends the processes it started; asks first, and says what came back.'
        ),
      steps: [{ command: CommandIDs.releaseEngine, args: { kind, name } }]
    };
  }
  if (remedies.includes('stop_process') && child.start_time !== undefined) {
    return {
      id: `stop-${child.pid}`,
      label: trans.__(
        'Stop %1 pid %2',
        roleText(child.role ?? 'other'),
        child.pid
      ),
      gain:
        back +
        trans.__(
          '; asks first, then sends SIGTERM (SIGKILL if it does not end).'
        ),
      steps: [
        {
          command: CommandIDs.stopProcess,
          args: { pid: child.pid, startTime: child.start_time }
        }
      ]
    };
  }
  return null;
}

/** The snippet action for DataLoader workers that ran out of host memory, where the helper named one. */
export function dataLoaderWorkersAction(d: OomDiagnosis): OomAction | null {
  const snippet = d.dataloader_workers?.snippet;
  if (!snippet) {
    return null;
  }
  return {
    id: `insert-${snippet}`,
    label: trans.__('Insert fewer, persistent DataLoader workers'),
    gain: trans.__(
      'Rebuilds the DataLoader with at most two persistent workers: fewer copies of what they read, made once rather than every epoch.'
    ),
    steps: [{ command: CommandIDs.insertSnippet, args: { id: snippet } }]
  };
}
