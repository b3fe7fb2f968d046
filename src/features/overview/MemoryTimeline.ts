/**
 * A uPlot chart of the recent memory history: the host RSS and, for each
 * GPU, PyTorch's allocated and reserved memory and NVML's process use. The
 * lines are drawn as steps, because a figure holds until the next sample,
 * and a sample comes only when a figure moves or as a heartbeat.
 *
 * It shows only the last `timelineWindowMinutes`, and only that window is
 * read out of the ring buffers, walking back from the newest sample, so a
 * render costs the same with 24 hours of history as with 5 minutes. The
 * window ends at the newest sample on the kernel's clock, which keeps the
 * chart right for remote kernels whose clock differs from the browser's.
 * With less history than the window, the chart spans the history, but at
 * least 30 seconds.
 *
 * Executed cells are marked as faint bands (from start to end) under the
 * lines, with a thin line at each start, so that a jump can be matched to
 * its cell. The end of a kernel process is a dashed line, in the error
 * colour when the process died and in the theme's secondary text colour
 * (grey) when the user restarted it or the notebook changed kernel. The
 * earlier process's samples stay on the line's left and the next one's on
 * its right. A line of text under the chart says what the marks shown mean.
 *
 * Each GPU's load (SM utilisation, power) can be switched on under the
 * chart (TimelineLoadToggles.ts), each on a right-hand axis of its own, over
 * the same window as memory.
 *
 * uPlot lives in a webpack chunk of its own and is fetched the first time a
 * chart is drawn, so a page whose memory sidebar stays closed never loads
 * it.
 */
import { Message } from '@lumino/messaging';
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

import { clockTime, timeTick } from '../../text/clockText';
import { formatBytes } from '../../text/format';
import {
  KernelMark,
  KernelMarkKind,
  SeriesKey
} from '../../model/MemoryHistory';
import { describeMarks, isLoadFigure, seriesToShow } from './timelineSeries';
import { loadAxes, loadScales, loadSeries } from './timelineLoadSeries';
import { TimelineLoadToggles } from './TimelineLoadToggles';
import { drawCellMarks, drawKernelMarks } from './timelineMarks';
import { rowsForChart, toGappedArray } from './chartRows';
import { ModelChange } from '../../model/IKernelMemoryModel';
import { element, setData, setHidden, setText } from '../../ui/dom';
import { ModelView } from '../../ui/ModelView';
import { TimelineWindowPicker } from './TimelineWindowPicker';
import { trans } from '../../text/translation';

const RELEVANT: ReadonlySet<ModelChange> = new Set<ModelChange>([
  'sample',
  'history',
  'cells',
  'death'
]);

/** The most cell runs marked on the chart; the newest ones in the window are chosen. */
const MAX_CELL_MARKS = 500;

/**
 * The y-axis steps for binary units. They are powers of two (…, 256 MiB,
 * 512 MiB, 1 GiB, 2 GiB, …), so that ticks land on round binary figures.
 */
const BINARY_INCREMENTS = Array.from({ length: 61 }, (_, i) => 2 ** i);

/**
 * The time-axis steps, in seconds. uPlot's own steps jump from 1 minute to
 * 5 minutes, so in the sidebar's width of about 150 px a 5-minute window
 * would get a single tick. Steps of 2 minutes (and of 20 s and 2 s) fill
 * that gap.
 */
const TIME_INCREMENTS = [
  1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400,
  43200, 86400
];

/** The chart's height in pixels; its width follows the sidebar. */
const PLOT_HEIGHT = 180;

/** At this many seconds per pixel or more, new samples are drawn at most once a second. */
const SECONDS_PER_PIXEL_DRAWN_LATER = 5;

/** The shortest time, in seconds, that the chart spans, however little history there is. */
const MIN_SPAN_S = 30;

/** The CSS variables of the per-GPU colours, which follow the theme. */
const GPU_COLOR_VARS = [
  '--jp-warn-color1',
  '--jp-success-color1',
  '--jp-error-color1',
  '--jp-accent-color1',
  '--jp-brand-color3',
  '--jp-warn-color3'
];

/** The uPlot class once its chunk has loaded; null until then. */
let uPlotClass: typeof uPlot | null = null;
/** The load of uPlot's chunk in progress or done; null before it and after a failure. */
let uPlotLoading: Promise<typeof uPlot> | null = null;

/** Loads uPlot's chunk once; a failed load is tried again at the next render. */
function loadUPlot(): Promise<typeof uPlot> {
  if (!uPlotLoading) {
    uPlotLoading = import('uplot').then(
      module => (uPlotClass = module.default),
      reason => {
        uPlotLoading = null; // The next render tries again.
        throw reason;
      }
    );
  }
  return uPlotLoading;
}

/** The chart of the kernel's recent memory history. */
export class MemoryTimeline extends ModelView {
  /**
   * `onPickWindow` is called when the user chooses how many minutes of
   * history to show; without it, no choice is offered.
   */
  constructor(
    settings: ConstructorParameters<typeof ModelView>[0],
    onPickWindow: ((minutes: number) => void) | null = null
  ) {
    super(settings);
    this.addClass('jp-vram-MemoryTimeline');
    this.node.dataset.vramRole = 'timeline';
    this._title = new TimelineWindowPicker(onPickWindow);
    this.node.appendChild(this._title.node);
    this._empty = element('div', 'jp-vram-Timeline-empty', {
      text: trans.__('No samples yet.')
    });
    this._plotHost = element('div', 'jp-vram-Timeline-plot');
    this._marksNote = element('div', 'jp-vram-Timeline-marks', {
      role: 'timeline-marks'
    });
    this._loadToggles = new TimelineLoadToggles(() => this.requestRender());
    this.node.append(
      this._empty,
      this._plotHost,
      this._loadToggles.node,
      this._marksNote
    );
  }

  protected readonly relevantChanges = RELEVANT;

  /**
   * When one pixel of the chart spans seconds (a window of 30 minutes or
   * more in the sidebar), samples that arrive many times a second are drawn
   * together, once a second, because each of them could only move the
   * newest pixel.
   */
  protected sampleRenderDelayMs(): number {
    // Use the width at which the chart was last drawn or resized, because
    // reading the layout here, at every sample, could force a layout. The
    // layout is read only before the first drawing.
    const width = this._plotWidth || this._plotHost.clientWidth;
    if (width <= 0) {
      return 0; // Not laid out yet, so there is no drawing to save.
    }
    const secondsPerPixel = (this.settings.timelineWindowMinutes * 60) / width;
    return secondsPerPixel >= SECONDS_PER_PIXEL_DRAWN_LATER ? 1000 : 0;
  }

  /** The times that the chart's x axis spans now, on the kernel's clock; exposed for tests. */
  get shownRange(): readonly [number, number] {
    return this._xRange;
  }

  /** The number of points that the chart shows now; exposed for tests and benchmarks. */
  get pointCount(): number {
    return this._pointCount;
  }

  dispose(): void {
    this._destroyPlot();
    this._themeObserver?.disconnect();
    this._resizeObserver?.disconnect();
    super.dispose();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    if (typeof MutationObserver !== 'undefined' && !this._themeObserver) {
      // The colours come from CSS variables, so the chart is rebuilt when
      // the theme changes.
      this._themeObserver = new MutationObserver(() => {
        this._destroyPlot();
        this.requestRender();
      });
      this._themeObserver.observe(document.body, {
        attributes: true,
        attributeFilter: ['data-jp-theme-name', 'data-jp-theme-light']
      });
    }
    if (typeof ResizeObserver !== 'undefined' && !this._resizeObserver) {
      this._resizeObserver = new ResizeObserver(() => this._onHostResize());
      this._resizeObserver.observe(this.node);
    }
  }

  protected onBeforeDetach(msg: Message): void {
    this._themeObserver?.disconnect();
    this._themeObserver = null;
    this._resizeObserver?.disconnect();
    this._resizeObserver = null;
    super.onBeforeDetach(msg);
  }

  protected onModelReplaced(): void {
    this._destroyPlot();
  }

  protected render(): void {
    const windowMinutes = this.settings.timelineWindowMinutes;
    this._title.show(windowMinutes);
    const history = this.model?.history;
    const marks = history?.marks ?? [];
    const deaths = marks.filter(m => m.kind === 'died').length;
    setData(this.node, 'vramDeaths', String(deaths));
    setData(this.node, 'vramRestarts', String(marks.length - deaths));
    if (!history || history.length === 0) {
      this._pointCount = 0;
      setData(this.node, 'vramPoints', '0');
      setData(this.node, 'vramFrom', null);
      setHidden(this._empty, false);
      setHidden(this._plotHost, true);
      setHidden(this._marksNote, true);
      return;
    }
    setHidden(this._empty, true);
    setHidden(this._plotHost, false);

    const end = history.lastTime;
    const start = end - windowMinutes * 60;
    const win = history.window(start);
    this._pointCount = win.times.length;
    // Record how much is shown and from when (on the kernel's clock), for
    // tests and for anyone inspecting the page.
    setData(this.node, 'vramPoints', String(win.times.length));
    setData(this.node, 'vramFrom', String(win.times[0]));
    // With less history than the window (a new notebook, a fresh page), the
    // chart spans what there is, rather than a mostly empty window with
    // every line squeezed against its right edge.
    const from = Math.max(start, Math.min(win.times[0], end - MIN_SPAN_S));
    this._xRange = [from, end];
    this._marksShown = marks.filter(m => m.time >= from && m.time <= end);
    const note = describeMarks(this._marksShown);
    setText(this._marksNote, note);
    setHidden(this._marksNote, note === '');

    const keys = seriesToShow(win, this._loadToggles.shown);
    const width = (this._plotWidth = this._plotHost.clientWidth);
    if (width <= 0) {
      // The host is not laid out yet, or there is no layout at all as in
      // tests. The resize observer renders once there is room.
      return;
    }
    const UPlot = uPlotClass;
    if (!UPlot) {
      loadUPlot().then(
        () => this.isDisposed || this.requestRender(),
        reason =>
          console.warn(
            'jupyterlab-vram: could not load the chart library.',
            reason
          )
      );
      return;
    }
    const signature = keys.join('|') + '|' + this.settings.units;
    if (!this._plot || signature !== this._signature) {
      this._destroyPlot();
      this._plot = new UPlot(
        this._options(keys, width),
        undefined,
        this._plotHost
      );
      this._signature = signature;
    }
    // A long span holds far more rows than the chart has pixels, so the
    // rows are thinned to what the width can show.
    const drawn = rowsForChart(win, from, end, width);
    const data: uPlot.AlignedData = [
      drawn.times,
      ...keys.map(key => toGappedArray(drawn.series.get(key)!))
    ];
    this._plot.setData(data);
  }

  private _onHostResize(): void {
    const width = (this._plotWidth = this._plotHost.clientWidth);
    if (this._plot) {
      if (width > 0 && width !== this._plot.width) {
        this._plot.setSize({ width, height: PLOT_HEIGHT });
      }
    } else if (width > 0) {
      this.requestRender();
    }
  }

  private _options(keys: string[], width: number): uPlot.Options {
    const style = getComputedStyle(this.node);
    const cssVar = (name: string, fallback: string) =>
      style.getPropertyValue(name).trim() || fallback;
    const axisColor = cssVar('--jp-ui-font-color2', 'gray');
    const gridColor = cssVar('--jp-border-color2', 'lightgray');
    // Canvas fonts need an absolute size, and the theme's sizes are in em.
    const fontPx = Math.max(
      9,
      Math.round(parseFloat(style.fontSize) * 0.85) || 10
    );
    const font = `${fontPx}px ${cssVar('--jp-ui-font-family', 'sans-serif')}`;
    const units = this.settings.units;
    const bytes = (_: uPlot, v: number | null) =>
      v === null || v === undefined ? '\u2014' : formatBytes(v, units);

    // Samples come when a figure moves, or as a heartbeat. A figure holds
    // until the next sample, so the lines step rather than slope between
    // samples.
    const stepped = uPlotClass?.paths.stepped?.({ align: 1 });
    // The legend shows the time under the cursor like the axis does: on a
    // 24-hour clock, without a date.
    const series: uPlot.Series[] = [
      {
        label: trans.__('Time'),
        value: (_: uPlot, v: number | null) =>
          v === null || v === undefined ? '\u2014' : clockTime(v)
      }
    ];
    for (const key of keys) {
      if (key === SeriesKey.hostRss) {
        series.push({
          label: trans.__('Host RSS'),
          stroke: cssVar('--jp-brand-color1', 'steelblue'),
          width: 1.5,
          paths: stepped,
          value: bytes
        });
        continue;
      }
      const gpu = SeriesKey.parseGpu(key);
      if (!gpu) {
        continue;
      }
      const color = cssVar(
        GPU_COLOR_VARS[gpu.index % GPU_COLOR_VARS.length],
        'orange'
      );
      if (gpu.figure === 'sm' || gpu.figure === 'power') {
        series.push(loadSeries(gpu.index, gpu.figure, color, stepped));
        continue;
      }
      const label = {
        allocated: trans.__('GPU %1 allocated', gpu.index),
        reserved: trans.__('GPU %1 reserved', gpu.index),
        process: trans.__('GPU %1 process (NVML)', gpu.index)
      }[gpu.figure];
      series.push({
        label,
        stroke: color,
        width: gpu.figure === 'allocated' ? 1.5 : 1,
        dash:
          gpu.figure === 'reserved'
            ? [6, 3]
            : gpu.figure === 'process'
              ? [2, 3]
              : undefined,
        paths: stepped,
        value: bytes
      });
    }
    const axis: uPlot.Axis = {
      stroke: axisColor,
      font,
      grid: { stroke: gridColor, width: 1 },
      ticks: { stroke: gridColor, width: 1 }
    };
    const bandColor = cssVar('--jp-layout-color3', 'rgba(128,128,128,0.3)');
    const markColor = cssVar('--jp-border-color1', 'gray');
    const kernelMarkColors: Record<KernelMarkKind, string> = {
      died: cssVar('--jp-error-color1', 'red'),
      restarted: cssVar('--jp-ui-font-color2', 'gray'),
      changed: cssVar('--jp-ui-font-color2', 'gray')
    };
    return {
      width,
      height: PLOT_HEIGHT,
      series,
      hooks: {
        // Cell marks go under the series, so they are drawn right after the
        // canvas is cleared.
        drawClear: [
          u => drawCellMarks(u, this.cellMarks, bandColor, markColor)
        ],
        // Kernel marks go over the series, because a death or restart must
        // not hide under a line.
        draw: [u => drawKernelMarks(u, this._marksShown, kernelMarkColors)]
      },
      cursor: { drag: { x: false, y: false } },
      legend: { show: true },
      scales: {
        x: { time: true, range: () => this._xRange },
        y: {
          range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1]
        },
        ...loadScales()
      },
      axes: [
        {
          ...axis,
          // A window under 5 minutes gets ticks seconds apart, written in
          // full ("19:31:40"), which need more room than "19:32".
          space: (_u, _axis, min, max) => (max - min < 300 ? 52 : 34),
          incrs: TIME_INCREMENTS,
          // Make room for one line of ticks, because uPlot's default height
          // leaves room for a second line with the date.
          size: fontPx + 18,
          values: (_u, splits, _axis, _space, increment) =>
            splits.map(v => timeTick(v, increment))
        },
        {
          ...axis,
          size: 64,
          incrs: units === 'binary' ? BINARY_INCREMENTS : undefined,
          values: (_u, splits) => splits.map(v => formatBytes(v, units))
        },
        ...loadAxes(loadFiguresOf(keys), axis)
      ]
    };
  }

  /**
   * The cell runs that overlap the shown window, as [start, end] times, the
   * newest first and at most MAX_CELL_MARKS of them.
   */
  get cellMarks(): [number, number][] {
    const entries = this.model?.cells.entries ?? [];
    const [from, to] = this._xRange;
    const marks: [number, number][] = [];
    for (
      let i = entries.length - 1;
      i >= 0 && marks.length < MAX_CELL_MARKS;
      i--
    ) {
      const r = entries[i].record;
      const end = r.started + r.duration_s;
      if (end < from) {
        break; // Records are in time order, so the older ones are outside the window too.
      }
      if (r.started <= to) {
        marks.push([r.started, end]);
      }
    }
    return marks;
  }

  private _destroyPlot(): void {
    this._plot?.destroy();
    this._plot = null;
    this._signature = '';
  }

  private _title: TimelineWindowPicker;
  private _loadToggles: TimelineLoadToggles;
  /** The plot area's width in px at the last render or resize; 0 when it was not laid out. */
  private _plotWidth = 0;
  private _empty: HTMLElement;
  private _plotHost: HTMLElement;
  private _plot: uPlot | null = null;
  private _signature = '';
  private _xRange: [number, number] = [0, 1];
  private _marksNote: HTMLElement;
  private _marksShown: readonly KernelMark[] = [];
  private _pointCount = 0;
  private _themeObserver: MutationObserver | null = null;
  private _resizeObserver: ResizeObserver | null = null;
}

/** The load figures among `keys` ('sm', 'power'), whose axes the chart needs. */
function loadFiguresOf(keys: readonly string[]): Set<string> {
  const figures = new Set<string>();
  for (const key of keys) {
    const gpu = SeriesKey.parseGpu(key);
    if (gpu && isLoadFigure(gpu.figure)) {
      figures.add(gpu.figure);
    }
  }
  return figures;
}
