/**
 * What a `history` reply brings back into a model: the per-cell records the
 * helper kept, and the timeline of the samples it sent before this page
 * listened. The reply is untrusted, so bad records are reported as a problem
 * and skipped, and a bad timeline is reported and left out whole.
 */
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import type { MessageReaders } from '../protocol/messageReaders';
import { trans } from '../text/translation';

/** How much the reply added: records, and timeline rows (samples). */
export interface RecoveredHistory {
  records: number;
  samples: number;
}

/**
 * Puts the records and timeline of a `history` reply into a model, reporting
 * the parts that were malformed; `readers` are the loaded message readers.
 */
export function recoverHistory(
  model: KernelMemoryModel,
  result: unknown,
  readers: Pick<MessageReaders, 'parseHistoryResult' | 'parseTimeline'>
): RecoveredHistory {
  const { parseHistoryResult, parseTimeline } = readers;
  const { records, errors } = parseHistoryResult(result);
  if (errors.length) {
    model.reportProblem(
      trans.__(
        "Ignored %1 malformed cell record(s) in the kernel helper's history: %2",
        errors.length,
        errors[0]
      )
    );
  }
  const added = model.cells.merge(records).length;
  const timeline = parseTimeline(result);
  if ('error' in timeline) {
    model.reportProblem(
      trans.__(
        "Ignored the kernel helper's memory timeline: %1",
        timeline.error
      )
    );
    return { records: added, samples: 0 };
  }
  const samples = timeline.value ? model.recoverTimeline(timeline.value) : 0;
  return { records: added, samples };
}
