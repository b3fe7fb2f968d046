/**
 * The record of the cell a kernel was running when it died. The helper dies
 * with the kernel and never sends that cell's record, yet it is the cell the
 * user most needs in the history ("which cell killed my kernel, and how much
 * had it taken?"). The frontend writes it from what it saw: the running
 * cell, and the figures the timeline held from the cell's start to the last
 * sample before the death. Its status is `died`; its peaks are the highest
 * *sampled* figures, so they are never exact.
 */
import { CellGpuMemory, CellMemoryRecord } from '../protocol/cell';
import { KernelDeathFacts } from './kernelDeath';
import { MemoryHistory, SeriesKey } from './MemoryHistory';

/** The status of a record written for a cell the kernel died running. */
export const DIED_STATUS = 'died';

/**
 * How far before the cell's start the figure it started from is looked for.
 * An hour is ample, because the sampler sends a sample at least once per
 * heartbeat.
 */
const BEFORE_LOOKBACK_S = 3600;

/**
 * The record of `death.runningCell`, numbered `recordId`, which comes after
 * every record of the dead process. It is null when no cell is known to have
 * been running or its cell id is not known, because a record without a cell
 * would read as a console's.
 */
export function diedCellRecord(
  death: KernelDeathFacts,
  history: MemoryHistory,
  recordId: number
): CellMemoryRecord | null {
  const cell = death.runningCell;
  if (!cell || cell.cellId === null) {
    return null;
  }
  // The page's clock and the kernel's may differ, as for a remote kernel.
  // The last sample tells by how much, since it arrived `figuresAge` seconds
  // before the death.
  const last = death.lastSample;
  const age = death.figuresAge ?? 0;
  const offset = last ? last.time - (death.time - age) : 0;
  const end = death.time + offset;
  const started = Math.min(end, (cell.startedAt ?? death.time) + offset);

  const window = history.window(started - BEFORE_LOOKBACK_S);
  const figures = (key: string) =>
    figuresIn(window.times, window.series.get(key), started, end);
  const host = figures(SeriesKey.hostRss);
  const gpus: CellGpuMemory[] = [];
  for (const key of window.series.keys()) {
    const gpu = SeriesKey.parseGpu(key);
    if (!gpu || gpu.figure !== 'allocated') {
      continue;
    }
    const allocated = figures(key);
    if (allocated.before === null && allocated.peak === null) {
      // Nothing is known of that device during the cell.
      continue;
    }
    const reserved = figures(SeriesKey.gpu(gpu.index, 'reserved'));
    gpus.push({
      index: gpu.index,
      allocated_before_bytes: allocated.before,
      allocated_after_bytes: allocated.after,
      allocated_peak_bytes: allocated.peak,
      reserved_before_bytes: reserved.before,
      reserved_after_bytes: reserved.after,
      reserved_peak_bytes: reserved.peak,
      peak_exact: false
    });
  }
  gpus.sort((a, b) => a.index - b.index);
  return {
    record_id: recordId,
    execution_count: cell.executionCount,
    cell_id: cell.cellId,
    started,
    duration_s: end - started,
    status: DIED_STATUS,
    error: null,
    peak_exact: false,
    host: {
      rss_before_bytes: host.before,
      rss_after_bytes: host.after,
      rss_peak_bytes: host.peak,
      peak_exact: false
    },
    gpus,
    oom: null
  };
}

interface CellFigures {
  /** The figure the cell started from: the last one known at its start. */
  before: number | null;
  /** The last figure known before the death. */
  after: number | null;
  /** The highest figure known from the start to the death. */
  peak: number | null;
}

/**
 * One series' figures over a cell from `started` to `end`. The timeline
 * draws steps, because a figure holds until the next sample, so the figure
 * at the start is the last one at or before it. Unknown figures, stored as
 * NaN for a gap or a kernel mark, are skipped.
 */
function figuresIn(
  times: Float64Array,
  values: Float64Array | undefined,
  started: number,
  end: number
): CellFigures {
  let before: number | null = null;
  let after: number | null = null;
  let peak: number | null = null;
  if (!values) {
    return { before, after, peak };
  }
  for (let i = 0; i < times.length && times[i] <= end; i++) {
    const value = values[i];
    if (Number.isNaN(value)) {
      continue;
    }
    if (times[i] <= started) {
      before = value;
    } else {
      peak = peak === null ? value : Math.max(peak, value);
    }
    after = value;
  }
  if (before !== null) {
    peak = peak === null ? before : Math.max(peak, before);
  }
  return { before, after, peak };
}
