/**
 * The uPlot series and axes of the timeline's GPU load lines: SM
 * utilisation on a percent scale and power on a watts scale, each with a
 * right-hand axis of its own, so that neither squeezes the memory lines.
 */
import type uPlot from 'uplot';

import { formatLoadPercent, formatWatts } from '../../text/gpuLoadText';
import { trans } from '../../text/translation';

/** The uPlot scale of the utilisation lines. */
export const PERCENT_SCALE = '%';

/** The uPlot scale of the power lines. */
export const WATTS_SCALE = 'W';

/**
 * Makes the series of GPU `index`'s `figure` load line, drawn in the GPU's
 * `color` with a dash that sets it apart from the GPU's memory lines.
 */
export function loadSeries(
  index: number,
  figure: 'sm' | 'power',
  color: string,
  paths: uPlot.Series['paths']
): uPlot.Series {
  const sm = figure === 'sm';
  return {
    label: sm
      ? trans.__('GPU %1 utilisation', index)
      : trans.__('GPU %1 power', index),
    stroke: color,
    width: 1,
    dash: sm ? [1, 2] : [8, 2, 1, 2],
    scale: sm ? PERCENT_SCALE : WATTS_SCALE,
    paths,
    value: (_: uPlot, v: number | null) =>
      sm ? formatLoadPercent(v) : formatWatts(v)
  };
}

/** Makes the right-hand axes of the load scales that `figures` use, styled as `axis`. */
export function loadAxes(
  figures: ReadonlySet<string>,
  axis: uPlot.Axis
): uPlot.Axis[] {
  const axes: uPlot.Axis[] = [];
  if (figures.has('sm')) {
    axes.push({
      ...axis,
      scale: PERCENT_SCALE,
      side: 1,
      size: 40,
      grid: { show: false },
      values: (_u, splits) => splits.map(v => `${v}%`)
    });
  }
  if (figures.has('power')) {
    axes.push({
      ...axis,
      scale: WATTS_SCALE,
      side: 1,
      size: 44,
      grid: { show: false },
      values: (_u, splits) => splits.map(v => formatWatts(v))
    });
  }
  return axes;
}

/**
 * Makes the load scales: utilisation from 0 to 100 %, and power from 0 to a
 * little above its highest value.
 */
export function loadScales(): uPlot.Options['scales'] {
  return {
    [PERCENT_SCALE]: { range: () => [0, 100] },
    [WATTS_SCALE]: {
      range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1]
    }
  };
}
