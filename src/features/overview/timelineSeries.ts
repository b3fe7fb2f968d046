/**
 * Which of the history's series the timeline draws, in which order, and
 * the note that says what its dashed lines mean.
 */
import {
  HistoryWindow,
  KernelMark,
  SeriesKey
} from '../../model/MemoryHistory';
import { trans } from '../../text/translation';

/** The order of a GPU's lines: memory first, then the load lines. */
const FIGURE_ORDER: Record<SeriesKey.GpuFigure, number> = {
  allocated: 0,
  reserved: 1,
  process: 2,
  sm: 3,
  power: 4
};

/**
 * Whether `figure` is a load line, which has an axis of its own and is shown
 * only when the user switches it on.
 */
export function isLoadFigure(figure: SeriesKey.GpuFigure): boolean {
  return figure === 'sm' || figure === 'power';
}

/**
 * The keys of the series to draw: those with at least one known value in
 * the window, the host RSS first and then each GPU's lines in order. A load
 * line is drawn only when `loadLines` holds its figure.
 */
export function seriesToShow(
  win: HistoryWindow,
  loadLines: ReadonlySet<string>
): string[] {
  const keys = Array.from(win.series.keys()).filter(key => {
    const gpu = SeriesKey.parseGpu(key);
    if (gpu && isLoadFigure(gpu.figure) && !loadLines.has(gpu.figure)) {
      return false;
    }
    return win.series.get(key)!.some(v => !Number.isNaN(v));
  });
  return keys.sort((a, b) => {
    const ga = SeriesKey.parseGpu(a);
    const gb = SeriesKey.parseGpu(b);
    if (!ga || !gb) {
      return ga ? 1 : gb ? -1 : 0;
    }
    return (
      ga.index - gb.index || FIGURE_ORDER[ga.figure] - FIGURE_ORDER[gb.figure]
    );
  });
}

/** Describes what the dashed lines in the window mean; returns '' when there are none. */
export function describeMarks(marks: readonly KernelMark[]): string {
  const kinds = new Set(marks.map(mark => mark.kind));
  const parts: string[] = [];
  if (kinds.has('restarted')) {
    parts.push(trans.__('grey: the kernel was restarted'));
  }
  if (kinds.has('changed')) {
    parts.push(
      trans.__("grey: the notebook's kernel was shut down or changed")
    );
  }
  if (kinds.has('died')) {
    parts.push(trans.__('red: the kernel died'));
  }
  return parts.length
    ? trans.__(
        'Dashed lines mark where a kernel process ended (%1).',
        parts.join('; ')
      )
    : '';
}
