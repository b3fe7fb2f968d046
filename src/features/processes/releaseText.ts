/**
 * The words of a release: what a releasable is and holds, what Release will
 * do to it, and how a release went (its outcome, the steps that failed, the
 * processes still alive, and the memory before and after). Pure functions;
 * the releasable's label, a name from the notebook and the helper's own
 * sentences are kernel text, which the views show as text.
 */
import { ByteUnits, formatBytes } from '../../text/format';
import type { Releasable } from '../../protocol/release';
import { trans } from '../../text/translation';
import type { ReleaseState } from './EngineReleases';
import { gpuMemoryText, roleText } from './processText';
import { memoryLines } from './stopText';

/** The kinds' names, as the buttons and sentences say them. */
export function releasableKindText(kind: string): string {
  switch (kind) {
    case 'ray':
      return trans.__('Ray runtime');
    case 'dask':
      return trans.__('Dask client and cluster');
    case 'mp_pool':
      return trans.__('multiprocessing pool');
    case 'dataloader_iter':
      return trans.__('DataLoader iterator');
    case 'vllm':
      return trans.__('vLLM engine');
    default:
      return kind;
  }
}

/** "Dask client and cluster `client`": the kind and the notebook's name for it. */
export function releasableName(r: Pick<Releasable, 'kind' | 'name'>): string {
  return trans.__('%1 \u201c%2\u201d', releasableKindText(r.kind), r.name);
}

/** What Release does for this kind, in one sentence (see docs/protocol.md, "release_engine"). */
export function releaseStepsText(kind: string): string {
  switch (kind) {
    case 'ray':
      return trans.__(
        'Release runs ray.shutdown(): every task and actor of this Ray runtime ends, and the objects it stored are lost.'
      );
    case 'dask':
      return trans.__(
        'Release closes the Dask client, then the cluster it or the notebook started: its workers end, and whatever they held is lost.'
      );
    case 'mp_pool':
      return trans.__(
        'Release runs pool.terminate() and pool.join(): the pool ends its workers at once (SIGKILL to any still alive after the wait), and tasks still running are lost.'
      );
    case 'dataloader_iter':
      return trans.__(
        "Release shuts down the iterator's workers (what its __del__ does) and deletes the iterator, so the epoch it was in ends; the DataLoader itself stays, and the next loop over it starts new workers."
      );
    case 'vllm':
      return trans.__(
        'Release shuts down the engine, deletes the name, destroys the distributed state vLLM set up and empties the CUDA cache: the model must be loaded again to use it.'
      );
    default:
      return trans.__('Release ends what the kernel started through it.');
  }
}

/** "2 processes, 104 MiB of RAM; GPU 0: 2.0 GiB": what a releasable holds. */
export function releasableHoldsText(r: Releasable, units: ByteUnits): string {
  const gpus = gpuMemoryText(r.gpus, units);
  const host = trans._n(
    '%1 process, %2 of RAM',
    '%1 processes, %2 of RAM',
    r.processes.length,
    formatBytes(r.host_bytes, units)
  );
  return gpus ? `${host}; ${gpus}` : host;
}

/** The dialog's sentences before a release, one paragraph each. */
export function releaseSentences(r: Releasable, units: ByteUnits): string[] {
  const roles = [...new Set(r.processes.map(p => roleText(p.role)))];
  return [
    trans.__('%1: %2.', releasableName(r), r.label),
    trans.__('It holds %1.', releasableHoldsText(r, units)) +
      (roles.length
        ? ' ' + trans.__('Its processes: %1.', roles.join(', '))
        : ''),
    releaseStepsText(r.kind),
    trans.__(
      'The kernel runs the release between cells, and the panel shows what came back and what did not.'
    )
  ];
}

/**
 * The lines that say how a release went: the outcome first (notifications
 * keep it alone), then the failed steps, the processes still alive and the
 * memory before and after.
 */
export function releaseLines(state: ReleaseState, units: ByteUnits): string[] {
  const name = releasableName(state.releasable);
  if (state.status === 'releasing') {
    return [trans.__('Releasing %1\u2026', name)];
  }
  if (state.status === 'failed') {
    return [trans.__('Could not release %1: %2', name, state.error)];
  }
  const o = state.outcome;
  const waited = `${o.waited_s.toFixed(1)} s`;
  const ended = trans._n(
    '%1 process ended',
    '%1 processes ended',
    o.processes.length - o.still_alive.length
  );
  switch (o.outcome) {
    case 'released': {
      const lines = [trans.__('Released %1: %2 (%3).', name, ended, waited)];
      return [...lines, ...memoryLines(o.before, o.after, units)];
    }
    case 'refused':
      return [
        trans.__('Nothing was released: %1 is not there any more.', name) +
          (o.reason ? ' ' + o.reason : '')
      ];
    default: {
      const lines = [
        trans.__('Released %1 in part: %2.', name, o.reason ?? o.outcome)
      ];
      for (const step of o.steps.filter(s => !s.ok)) {
        lines.push(trans.__('Failed: %1: %2', step.action, step.error ?? ''));
      }
      if (o.still_alive.length) {
        lines.push(
          trans.__(
            'Still running after %1: %2.',
            waited,
            o.still_alive
              .map(p => trans.__('%1 pid %2', roleText(p.role), p.pid))
              .join(', ')
          ) +
            ' ' +
            trans.__('Stop them in the list below.')
        );
      }
      return [...lines, ...memoryLines(o.before, o.after, units)];
    }
  }
}
