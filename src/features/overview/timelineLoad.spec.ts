/**
 * Tests for the timeline's GPU load lines: the history keeps each GPU's
 * utilisation and power from live samples, and the chart shows them only
 * once they are switched on, each on a right-hand axis of its own.
 */
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { SeriesKey } from '../../model/MemoryHistory';
import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { sampleSeries } from '../../model/historySeries';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { makeGpu, makeHello, makeSample, wire } from '../../testing/fixtures';
import { makeGpuLoad } from '../../testing/loadFixtures';
import { MemoryTimeline } from './MemoryTimeline';
import {
  loadAxes,
  loadSeries,
  PERCENT_SCALE,
  WATTS_SCALE
} from './timelineLoadSeries';
import { seriesToShow } from './timelineSeries';

const SM = SeriesKey.gpu(0, 'sm');
const POWER = SeriesKey.gpu(0, 'power');

describe('the GPU load lines of the timeline', () => {
  it("keeps each GPU's utilisation and power from a live sample", () => {
    const values = sampleSeries(
      makeSample({ gpus: [makeGpu({ load: makeGpuLoad() })] })
    );
    expect(values.get(SM)).toBe(97);
    expect(values.get(POWER)).toBe(612.345);
    const unknown = sampleSeries(
      makeSample({
        gpus: [makeGpu({ load: makeGpuLoad({ sm_percent: null }) })]
      })
    );
    expect(unknown.get(SM)).toBeNaN();
    // An older helper sends no load, so there are no load series at all.
    expect(sampleSeries(makeSample()).has(SM)).toBe(false);
  });

  it('names the load series as GPU series, so the browser keeps them too', () => {
    expect(SeriesKey.parseGpu(SM)).toEqual({ index: 0, figure: 'sm' });
    expect(SeriesKey.parseGpu('gpu3.power')).toEqual({
      index: 3,
      figure: 'power'
    });
  });

  it('draws a load line only once it is switched on, after the memory lines', () => {
    const win = {
      times: Float64Array.from([1, 2]),
      series: new Map([
        [POWER, Float64Array.from([300, 310])],
        [SM, Float64Array.from([90, NaN])],
        [SeriesKey.gpu(0, 'allocated'), Float64Array.from([1, 2])],
        [SeriesKey.hostRss, Float64Array.from([5, 6])]
      ])
    };
    expect(seriesToShow(win, new Set())).toEqual([
      SeriesKey.hostRss,
      SeriesKey.gpu(0, 'allocated')
    ]);
    expect(seriesToShow(win, new Set(['sm', 'power']))).toEqual([
      SeriesKey.hostRss,
      SeriesKey.gpu(0, 'allocated'),
      SM,
      POWER
    ]);
  });

  it('puts utilisation and power on scales and right-hand axes of their own', () => {
    const sm = loadSeries(0, 'sm', 'red', undefined);
    expect(sm.label).toBe('GPU 0 utilisation');
    expect(sm.scale).toBe(PERCENT_SCALE);
    const power = loadSeries(1, 'power', 'red', undefined);
    expect(power.label).toBe('GPU 1 power');
    expect(power.scale).toBe(WATTS_SCALE);
    expect(loadAxes(new Set(), {})).toEqual([]);
    const axes = loadAxes(new Set(['sm', 'power']), {});
    expect(axes.map(a => [a.scale, a.side])).toEqual([
      [PERCENT_SCALE, 1],
      [WATTS_SCALE, 1]
    ]);
  });

  it('offers the switches under the chart, off by default', () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeHello()));
    model.ingest(
      wire(makeSample({ gpus: [makeGpu({ load: makeGpuLoad() })] }))
    );
    const view = new MemoryTimeline(DEFAULT_SETTINGS);
    Widget.attach(view, document.body);
    view.model = model;
    MessageLoop.flush();
    const box = (line: string) =>
      view.node.querySelector<HTMLInputElement>(
        `[data-vram-role="timeline-load-${line}"]`
      )!;
    expect(box('sm').checked).toBe(false);
    expect(box('power').checked).toBe(false);
    expect(box('sm').parentElement!.textContent).toBe('GPU utilisation');
    expect(model.history.seriesKeys).toEqual(
      expect.arrayContaining([SM, POWER])
    );
    box('sm').click();
    expect(box('sm').checked).toBe(true);
    Widget.detach(view);
  });
});
