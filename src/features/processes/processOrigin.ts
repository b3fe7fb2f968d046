/**
 * Which cell started a process of the kernel's tree, worked out from when
 * the process was first seen (the tree's `read_at`, the kernel's clock) and
 * the cell records (their `started` and `duration_s`, the same clock).
 *
 * The helper reads the tree about once a second, so a cell that starts a
 * process and returns at once (a `subprocess.Popen`) has ended before its
 * process is first seen: the process then belongs to the last cell that
 * started before it was seen, and it outlived that cell. A process seen
 * while a cell runs belongs to that cell, whose record comes only when it
 * ends; until then it is the running cell. The answer is a pure function of
 * the records, so it is worked out again whenever records come in.
 */
import type { CellMemoryRecord } from '../../protocol/cell';

/** A cell's record ends a little after the hooks read `started` + `duration_s`: a reading this close to its end is still during it. */
const END_SLACK_S = 0.05;

/** When and how a process was first seen. */
export interface FirstSeen {
  /** The tree's `read_at` (kernel clock) when the process was first in it. */
  readonly at: number;
  /** Whether the kernel was running a cell then. */
  readonly busy: boolean;
  /** It was in the first tree this page saw: it may be older than any record. */
  readonly preexisting: boolean;
}

/**
 * The cell a process came from: `record` is the cell's record (it ended),
 * or null while the cell that runs now started it. `during`: first seen
 * while that cell ran (else just after it ended, between two readings).
 */
export interface ProcessOrigin {
  readonly record: Pick<
    CellMemoryRecord,
    'record_id' | 'execution_count' | 'cell_id' | 'started' | 'duration_s'
  > | null;
  readonly during: boolean;
}

/**
 * The origin of a process first seen as `seen` says, given the current
 * kernel's records (oldest first); null where no cell can be named (it was
 * there before this page watched, or before any cell ran).
 */
export function processOrigin(
  seen: FirstSeen,
  records: readonly Pick<
    CellMemoryRecord,
    'record_id' | 'execution_count' | 'cell_id' | 'started' | 'duration_s'
  >[]
): ProcessOrigin | null {
  if (seen.preexisting) {
    return null;
  }
  // The latest record that started at or before the first sighting.
  let latest: (typeof records)[number] | null = null;
  for (let i = records.length - 1; i >= 0; i--) {
    if (records[i].started <= seen.at) {
      latest = records[i];
      break;
    }
  }
  if (latest && seen.at <= latest.started + latest.duration_s + END_SLACK_S) {
    return { record: latest, during: true };
  }
  if (seen.busy) {
    // The running cell's record has not come yet.
    return { record: null, during: true };
  }
  return latest ? { record: latest, during: false } : null;
}
