/**
 * How a cleanup, a free or a delete, ended, in the words that the sidebar's
 * result area shows. A reply is worded in the units set at the time it is
 * shown, beside the figures as they are then; a failure is one sentence.
 */
import type {
  DeleteResult,
  FreeAction,
  FreeMemoryResult
} from '../../protocol/cleanup';
import { ByteUnits } from '../../text/format';
import { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
// The result texts load with the first result rather than at start-up, so
// only their type is imported here.
import type { ResultDescription } from './cleanupResultText';
import { trans } from '../../text/translation';

/** The two kinds of cleanup: freeing memory, and deleting holders. */
export type ActionKind = 'free' | 'delete';

/** How a cleanup ended, in words. */
export interface ActionOutcome extends ResultDescription {
  kind: ActionKind;
  /** What was asked ("Collect garbage"). */
  label: string;
  status: 'done' | 'failed' | 'cancelled';
  /** The reply, when there was one. */
  result: FreeMemoryResult | DeleteResult | null;
  /**
   * When it ended (the reply came, or the request failed or was cancelled),
   * in seconds since the epoch: the result stays shown while later events
   * happen, and must say when it happened.
   */
  at: number;
}

/**
 * The label of a free request, for example "Collect garbage", "Empty the
 * CUDA cache" or "Free memory".
 */
export function freeActionLabel(actions: readonly FreeAction[]): string {
  const gc = actions.includes('gc');
  const cache = actions.includes('empty_cache');
  if (gc && cache) {
    return trans.__('Free memory (gc + empty_cache)');
  }
  return cache ? trans.__('Empty the CUDA cache') : trans.__('Collect garbage');
}

/**
 * Words a reply in `units`, beside `model`'s figures as they are at the
 * moment. The modules that word it load on demand.
 */
export async function describeReply(
  result: FreeMemoryResult | DeleteResult,
  units: ByteUnits,
  model: Pick<IKernelMemoryModel, 'hello' | 'latest'>
): Promise<ResultDescription> {
  // The reply is worded as the sidebar words it: it says "no GPU" only where
  // that is known, not merely because no GPU was listed yet. The modules
  // that word it load with the first result.
  const { hello, latest } = model;
  const [{ describeResult }, { seesNoGpu }] = await Promise.all([
    import('./cleanupResultText'),
    import('../../model/gpuVisibility')
  ]);
  return describeResult(result, units, {
    noGpu: seesNoGpu(hello, latest) === true
  });
}

/** An outcome without a reply: `text` says why. */
export function failedOutcome(
  kind: ActionKind,
  label: string,
  text: string,
  status: 'failed' | 'cancelled'
): ActionOutcome {
  return {
    kind,
    label,
    status,
    result: null,
    lines: [text],
    freedBytes: null,
    at: Date.now() / 1000
  };
}
