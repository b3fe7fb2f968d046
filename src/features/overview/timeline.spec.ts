/**
 * Tests for the timeline across kernel processes and page loads: the
 * helper's kept timeline, parsed and merged into the history, and the marks
 * where a kernel process ended because it died, was restarted, or was shut
 * down or changed for another kernel.
 */
import { CommandRegistry } from '@lumino/commands';
import { MessageLoop } from '@lumino/messaging';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { CommandIDs } from '../../ui/commandIds';
import { KernelDeathWatch } from '../../kernel/KernelDeathWatch';
import { MemoryMonitor } from '../../monitor/MemoryMonitor';
import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { MemoryHistory, SeriesKey } from '../../model/MemoryHistory';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { parseTimeline, TimelineColumns } from '../../protocol/timeline';
import { MemoryTimeline } from './MemoryTimeline';
import { describeMarks } from './timelineSeries';
import {
  connectHelper,
  FakeKernel,
  FakeSessionContext,
  registerTestCommands,
  settle
} from '../../testing/fakeKernel';
import {
  GiB,
  makeCpuSample,
  makeGpu,
  makeHello,
  makeSample,
  MiB,
  wire
} from '../../testing/fixtures';

const RSS = SeriesKey.hostRss;
const ALLOCATED = SeriesKey.gpu(0, 'allocated');

function timeline(
  times: number[],
  rss: (number | null)[],
  gpus: TimelineColumns['gpus'] = []
): TimelineColumns {
  return { times, rss_bytes: rss, gpus };
}

function rows(history: MemoryHistory, key = RSS): [number, number][] {
  const win = history.window(-Infinity);
  return Array.from(win.times, (t, i) => [t, win.series.get(key)![i]]);
}

describe('parseTimeline', () => {
  it('reads the columns, and an absent timeline (an older helper) as none', () => {
    const columns = timeline(
      [1, 2],
      [5, null],
      [
        {
          index: 0,
          allocated_bytes: [1, 2],
          reserved_bytes: [3, null],
          process_used_bytes: [null, null]
        }
      ]
    );
    expect(parseTimeline({ records: [], timeline: wire(columns) })).toEqual({
      value: columns
    });
    expect(parseTimeline({ records: [] })).toEqual({ value: null });
  });

  it.each([
    [
      { times: [1, 'x'], rss_bytes: [1, 2], gpus: [] },
      'history.timeline.times[1]'
    ],
    [
      { times: [1, 2], rss_bytes: [1], gpus: [] },
      'history.timeline.rss_bytes: expected 2 entries'
    ],
    [
      { times: [1], rss_bytes: [-1], gpus: [] },
      'history.timeline.rss_bytes[0]'
    ],
    [
      { times: [1], rss_bytes: [1], gpus: {} },
      'history.timeline.gpus: expected an array'
    ],
    [
      {
        times: [1],
        rss_bytes: [1],
        gpus: [{ index: 0, allocated_bytes: [1], reserved_bytes: [1] }]
      },
      'history.timeline.gpus[0].process_used_bytes'
    ],
    [
      {
        times: [1],
        rss_bytes: [1],
        gpus: [0, 0].map(index => ({
          index,
          allocated_bytes: [1],
          reserved_bytes: [1],
          process_used_bytes: [1]
        }))
      },
      'history.timeline.gpus[1].index: 0 is negative or repeated'
    ],
    ['<b>not columns</b>', 'history.timeline: expected an object']
  ])('names what is wrong in a malformed timeline (%#)', (value, message) => {
    const parsed = parseTimeline({ records: [], timeline: value });
    expect('error' in parsed && parsed.error).toContain(message);
  });
});

describe('MemoryHistory.merge', () => {
  it('puts rows in at their time, skips rows already held and rows at or before `after`', () => {
    const history = new MemoryHistory(10);
    history.append(20, new Map([[RSS, 200]]));
    history.append(
      40,
      new Map([
        [RSS, 400],
        [ALLOCATED, 4]
      ])
    );
    const added = history.merge(
      [5, 10, 20, 30, 50],
      new Map([[RSS, Float64Array.from([50, 100, 999, 300, 500])]]),
      5
    );
    // The row at 5 is not after `after`, and the row at 20 is held already,
    // as the same sample.
    expect(added).toBe(3);
    expect(rows(history)).toEqual([
      [10, 100],
      [20, 200],
      [30, 300],
      [40, 400],
      [50, 500]
    ]);
    // A series only the held rows have is unknown in the added ones.
    expect(rows(history, ALLOCATED).map(([, v]) => v)).toEqual([
      NaN,
      NaN,
      NaN,
      4,
      NaN
    ]);
    expect(
      history.merge([10, 30], new Map([[RSS, Float64Array.from([1, 1])]]))
    ).toBe(0);
  });

  it('keeps the newest rows within its capacity', () => {
    const history = new MemoryHistory(3);
    history.append(10, new Map([[RSS, 1]]));
    history.merge(
      [1, 2, 3, 11],
      new Map([[RSS, Float64Array.from([1, 2, 3, 4])]])
    );
    expect(rows(history).map(([t]) => t)).toEqual([3, 10, 11]);
  });

  it('keeps its kernel marks, and drops a mark with the rows before it', () => {
    const history = new MemoryHistory(3);
    history.append(1, new Map([[RSS, 1]]));
    history.markKernelEnd(2, 'died');
    history.merge([0.5], new Map([[RSS, Float64Array.from([1])]]));
    expect(history.marks).toEqual([{ time: 2, kind: 'died' }]);
    history.append(3, new Map([[RSS, 1]]));
    history.append(4, new Map([[RSS, 1]]));
    // Only the rows at 3, 4 and 5 fit now, so the death's row is gone, and
    // its mark with it.
    history.markKernelEnd(5, 'restarted');
    expect(history.marks).toEqual([{ time: 5, kind: 'restarted' }]);
  });
});

describe('KernelMemoryModel: the timeline across kernel processes', () => {
  function live(): KernelMemoryModel {
    const model = new KernelMemoryModel({ historyCapacity: 100 });
    model.ingest(wire(makeHello()));
    model.ingest(
      wire(
        makeSample({
          time: 1000,
          gpus: [
            makeGpu({
              torch: { ...makeGpu().torch!, allocated_bytes: 5 * GiB }
            })
          ]
        })
      )
    );
    return model;
  }

  it("recovers the helper's timeline before the live samples, GPU figures included", () => {
    const model = live();
    const added = model.recoverTimeline(
      timeline(
        [990, 995, 1000],
        [100 * MiB, null, 1],
        [
          {
            index: 0,
            allocated_bytes: [GiB, 2 * GiB, 3],
            reserved_bytes: [2 * GiB, 2 * GiB, 3],
            process_used_bytes: [null, null, null]
          }
        ]
      )
    );
    expect(added).toBe(2); // The row at 1000 is the live sample, held already.
    expect(rows(model.history)).toEqual([
      [990, 100 * MiB],
      [995, NaN],
      [1000, 512 * MiB]
    ]);
    expect(rows(model.history, ALLOCATED)).toEqual([
      [990, GiB],
      [995, 2 * GiB],
      [1000, 5 * GiB]
    ]);
  });

  it('a user restart keeps the earlier figures, held until it, a gap and a mark; recovery stays after the mark', async () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(5_000_000);
    // The model's sample arrived at 5,000 s by the browser's clock and was
    // taken at 1,000 s by the kernel's.
    const model = live();
    const sessionContext = new FakeSessionContext(new FakeKernel());
    const watch = new KernelDeathWatch({
      sessionContext: sessionContext as any,
      model
    });
    now.mockReturnValue(5_004_000); // The user restarts the kernel 4 s later.
    sessionContext.setStatus('restarting');
    model.startKernelSession();
    await settle();
    now.mockRestore();
    expect(model.history.marks).toEqual([{ time: 1004, kind: 'restarted' }]);
    model.ingest(wire(makeCpuSample({ time: 1010 })));
    // The restarted kernel's helper knows only its own samples.
    model.recoverTimeline(timeline([1007, 1010], [7, 512 * MiB]));
    expect(rows(model.history)).toEqual([
      [1000, 512 * MiB],
      // Nothing moved until the restart, or a sample would have come, so the
      // last figure holds until it.
      [1004, 512 * MiB],
      // The gap makes the new process's line start on its own.
      [1004, NaN],
      [1007, 7],
      [1010, 512 * MiB]
    ]);
    watch.dispose();
  });

  it("a kernel change marks where the first kernel's figures end; the second kernel's past stays out", () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(5_000_000);
    const model = live();
    const sessionContext = new FakeSessionContext(null);
    const watch = new KernelDeathWatch({
      sessionContext: sessionContext as any,
      model
    });
    // This is the notebook's first kernel, so there is nothing to end.
    sessionContext.changeKernel(new FakeKernel());
    expect(model.history.marks).toEqual([]);
    now.mockReturnValue(5_002_000);
    sessionContext.changeKernel(new FakeKernel());
    now.mockRestore();
    expect(model.history.marks).toEqual([{ time: 1002, kind: 'changed' }]);
    // Another notebook watched the new kernel since 900; only what follows
    // the change comes in.
    expect(model.recoverTimeline(timeline([900, 999, 1003], [1, 2, 3]))).toBe(
      1
    );
    expect(rows(model.history)).toEqual([
      [1000, 512 * MiB],
      [1002, 512 * MiB],
      [1002, NaN],
      [1003, 3]
    ]);
    watch.dispose();
  });
});

describe('KernelHelperConnection: the timeline in the history reply', () => {
  const CONFIG = {
    interval_s: 1,
    change_threshold_bytes: MiB,
    heartbeat_s: 10,
    reset_peak_per_cell: true
  };

  async function helloThenHistory(result: unknown) {
    const kernel = new FakeKernel();
    const { model } = connectHelper(kernel, { config: () => CONFIG });
    await settle();
    kernel.lastComm.receive(wire(makeHello()));
    kernel.lastComm.receive(wire(makeCpuSample({ time: 2000 })));
    const request = kernel.lastComm.sent
      .filter(m => m.type === 'history')
      .pop();
    kernel.lastComm.reply(result, request);
    await settle();
    return model;
  }

  it('charts what the kernel went through before the page listened', async () => {
    const model = await helloThenHistory({
      records: [],
      timeline: timeline([1990, 1995, 2000], [GiB, 2 * GiB, 3])
    });
    expect(rows(model.history)).toEqual([
      [1990, GiB],
      [1995, 2 * GiB],
      [2000, 512 * MiB]
    ]);
  });

  it('reports a malformed timeline and still takes the records', async () => {
    const model = await helloThenHistory({
      records: [],
      timeline: { times: [1], rss_bytes: 'lots', gpus: [] }
    });
    expect(model.history.length).toBe(1);
    expect(model.notes.find(n => n.id === 'helper-problem')!.text).toBe(
      'Ignored the kernel helper\'s memory timeline: history.timeline.rss_bytes: expected an array, got "lots"'
    );
  });
});

describe('MemoryTimeline: kernel marks', () => {
  it('counts deaths and restarts, and says what the marks in the window mean, as text', () => {
    const model = new KernelMemoryModel({ historyCapacity: 100 });
    model.ingest(wire(makeCpuSample({ time: 1000 })));
    model.history.markKernelEnd(1001, 'died');
    model.ingest(wire(makeCpuSample({ time: 1002 })));
    model.history.markKernelEnd(1003, 'restarted');
    model.ingest(wire(makeCpuSample({ time: 1004 })));
    const view = new MemoryTimeline(DEFAULT_SETTINGS);
    Widget.attach(view, document.body);
    view.model = model;
    MessageLoop.flush();
    expect(view.node.dataset.vramDeaths).toBe('1');
    expect(view.node.dataset.vramRestarts).toBe('1');
    const note = view.node.querySelector<HTMLElement>(
      '[data-vram-role="timeline-marks"]'
    )!;
    expect(note.hidden).toBe(false);
    expect(note.textContent).toBe(
      'Dashed lines mark where a kernel process ended (grey: the kernel was restarted; red: the kernel died).'
    );
    view.dispose();
  });

  it('says nothing when no mark is in the window', () => {
    expect(describeMarks([])).toBe('');
    expect(describeMarks([{ time: 1, kind: 'changed' }])).toBe(
      "Dashed lines mark where a kernel process ended (grey: the notebook's kernel was shut down or changed)."
    );
  });
});

describe('MemoryTimeline: how much history it shows', () => {
  function attached(
    onPick: ((minutes: number) => void) | null,
    windowMinutes = 5
  ) {
    const view = new MemoryTimeline(
      { ...DEFAULT_SETTINGS, timelineWindowMinutes: windowMinutes },
      onPick
    );
    Widget.attach(view, document.body);
    view.model = new KernelMemoryModel({ historyCapacity: 100 });
    MessageLoop.flush();
    return view;
  }

  it('offers spans from 5 minutes to 24 hours, the current one chosen, and says which the user picks', () => {
    const picked: number[] = [];
    const view = attached(minutes => picked.push(minutes));
    const select = view.node.querySelector<HTMLSelectElement>(
      '[data-vram-role="timeline-window"]'
    )!;
    expect(Array.from(select.options, o => o.textContent)).toEqual([
      '5 min',
      '30 min',
      '2 h',
      '12 h',
      '24 h'
    ]);
    expect(select.value).toBe('5');
    select.value = '720';
    select.dispatchEvent(new Event('change'));
    expect(picked).toEqual([720]);
    view.dispose();
  });

  it('offers a span set another way (the Settings Editor) among the others', () => {
    const view = attached(() => undefined, 45);
    const select = view.node.querySelector<HTMLSelectElement>(
      '[data-vram-role="timeline-window"]'
    )!;
    expect(Array.from(select.options, o => o.textContent)).toEqual([
      '5 min',
      '30 min',
      '45 min',
      '2 h',
      '12 h',
      '24 h'
    ]);
    expect(select.value).toBe('45');
    view.dispose();
  });

  it('only says the span when no choice is wired', () => {
    const view = attached(null, 120);
    expect(view.node.querySelector('select')).toBeNull();
    expect(view.node.textContent).toContain('Last 2 h');
    view.dispose();
  });
});

describe('the set-timeline-window command', () => {
  it('sets the span within its limits, and refuses what is not a number', async () => {
    const commands = new CommandRegistry();
    const set: [string, unknown][] = [];
    const monitor = new MemoryMonitor({
      notebooks: { currentWidget: null, currentChanged: new Signal({}) }
    });
    registerTestCommands(commands, {
      monitor,
      sidebar: { showTab: () => undefined } as any,
      setSetting: async (key, value) => {
        set.push([key, value]);
      }
    });
    await commands.execute(CommandIDs.setTimelineWindow, { minutes: 720 });
    await commands.execute(CommandIDs.setTimelineWindow, { minutes: 1e9 });
    expect(set).toEqual([
      ['timelineWindowMinutes', 720],
      ['timelineWindowMinutes', 1440]
    ]);
    await expect(
      commands.execute(CommandIDs.setTimelineWindow, { minutes: 'lots' })
    ).rejects.toThrow('number of minutes');
    monitor.dispose();
  });
});

describe('MemoryTimeline: samples on a long span', () => {
  function laidOut(windowMinutes: number) {
    const view = new MemoryTimeline({
      ...DEFAULT_SETTINGS,
      timelineWindowMinutes: windowMinutes
    });
    Widget.attach(view, document.body);
    const host = view.node.querySelector<HTMLElement>(
      '.jp-vram-Timeline-plot'
    )!;
    Object.defineProperty(host, 'clientWidth', { value: 300 });
    const model = new KernelMemoryModel({ historyCapacity: 1000 });
    view.model = model;
    MessageLoop.flush();
    const renders = jest.spyOn(view, 'renderNow');
    const feed = (count: number) => {
      for (let i = 0; i < count; i++) {
        model.ingest(
          wire(
            makeCpuSample({
              seq: renders.mock.calls.length * 100 + i + 1,
              time: 1000 + i
            })
          )
        );
        MessageLoop.flush();
      }
    };
    return { view, renders, feed };
  }

  afterEach(() => jest.useRealTimers());

  it('draws the samples of a second together where a pixel spans minutes', () => {
    jest.useFakeTimers();
    const { view, renders, feed } = laidOut(1440); // A pixel spans 288 s.
    feed(10);
    expect(renders).toHaveBeenCalledTimes(0);
    jest.advanceTimersByTime(1000);
    MessageLoop.flush();
    expect(renders).toHaveBeenCalledTimes(1);
    view.dispose();
  });

  it('draws every sample where a pixel is a second', () => {
    const { view, renders, feed } = laidOut(5);
    feed(10);
    expect(renders).toHaveBeenCalledTimes(10);
    view.dispose();
  });
});
