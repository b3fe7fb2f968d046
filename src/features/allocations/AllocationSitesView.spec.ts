/**
 * Tests for AllocationSitesView, the Lines tab: its rows, folds, headings and
 * recording status.
 */
import { Widget } from '@lumino/widgets';
import { MessageLoop } from '@lumino/messaging';

import { gpuHistoryReadable, RecordingState } from '../../protocol/allocation';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { clockTime } from '../../text/clockText';
import { AllocationSitesView, statusText } from './AllocationSitesView';
import { EVIL } from '../../testing/fixtures';
import { settle } from '../../testing/fakeKernel';
import { FakeConsoles } from '../../testing/fakeConsoles';
import { ConsoleCells } from '../../model/ConsoleCells';
import {
  AT_12_03_04,
  liveRecorder,
  OFF,
  ON,
  parsedListing,
  RESTARTED
} from '../../testing/allocationSitesFixtures';

describe('AllocationSitesView', () => {
  it('renders rows as text, and a click on a notebook line asks to jump there', async () => {
    const { model, recorder } = liveRecorder();
    model.cells.merge([]);
    const actions = {
      setRecording: jest.fn(),
      jumpTo: jest.fn(),
      exportGpuSnapshot: jest.fn(),
      exportHostCsv: jest.fn()
    };
    const view = new AllocationSitesView({
      settings: DEFAULT_SETTINGS,
      actions
    });
    Widget.attach(view, document.body);
    view.model = model;
    view.recorder = recorder;
    const listing = parsedListing();
    listing.devices[0].sites[0].code = EVIL;
    (recorder as any)._listing = listing;
    (recorder as any)._recording = ON;
    view.renderNow();

    expect(view.node.querySelector('img')).toBeNull();
    const rows = view.node.querySelectorAll<HTMLElement>(
      '[data-vram-role="site-row"]'
    );
    expect(rows).toHaveLength(3);
    expect(rows[0].dataset.vramCellId).toBe('cell-a');
    expect(rows[0].dataset.vramLine).toBe('3');
    expect(rows[0].dataset.vramBytes).toBe('32000112');
    expect(rows[0].textContent).toContain(EVIL);
    rows[0].click();
    expect(actions.jumpTo).toHaveBeenCalledWith(
      expect.objectContaining({ cellId: 'cell-a', line: 3, executionCount: 9 })
    );
    // The third site lies outside the notebook, so clicking it goes nowhere.
    rows[2].click();
    expect(actions.jumpTo).toHaveBeenCalledTimes(1);

    const toggle = view.node.querySelector<HTMLInputElement>(
      '[data-vram-role="record-allocations"]'
    )!;
    expect(toggle.checked).toBe(true);
    toggle.checked = false;
    toggle.dispatchEvent(new Event('change'));
    expect(actions.setRecording).toHaveBeenCalledWith(false);
    const status = view.node.querySelector(
      '[data-vram-role="recording-status"]'
    )!.textContent;
    expect(status).toContain('tracemalloc, 16 frames, 5 MiB of traces');
    expect(status).toContain('GPU waiting: CUDA is not initialised');
    expect(
      view.node.querySelector<HTMLButtonElement>(
        '[data-vram-role="export-gpu-snapshot"]'
      )!.disabled
    ).toBe(true);
    // The heading must add up to the rows, so it leaves out the monitor's own
    // allocations and says that it does.
    expect(
      view.node.querySelector('.jp-vram-Holders-heading')!.textContent
    ).toBe(
      "Host (tracemalloc: Python objects and NumPy arrays, not PyTorch CPU tensors): 57.2 MiB live in 5,014 allocations; not counted: this monitor's own 2 KiB in 6 allocations"
    );
    view.dispose();
    await settle();
  });

  it("labels a console's lines as a console's, with no jump to a cell", async () => {
    const { model, recorder } = liveRecorder();
    model.cells.merge([]);
    const actions = {
      setRecording: jest.fn(),
      jumpTo: jest.fn(),
      exportGpuSnapshot: jest.fn(),
      exportHostCsv: jest.fn()
    };
    const consoles = new FakeConsoles();
    const console = consoles.open();
    const consoleCells = new ConsoleCells(consoles);
    const view = new AllocationSitesView({
      settings: DEFAULT_SETTINGS,
      actions,
      consoleCells
    });
    Widget.attach(view, document.body);
    view.model = model;
    view.recorder = recorder;
    (recorder as any)._listing = parsedListing();
    (recorder as any)._recording = ON;
    view.renderNow();
    const first = () =>
      view.node.querySelector<HTMLElement>('[data-vram-role="site-row"]')!;
    expect(first().textContent).toContain('[9] line 3');
    // When 'cell-a' turns out to be a console's cell, the open view relabels it
    // without waiting for a new listing.
    console.run('cell-a');
    MessageLoop.flush();
    expect(first().textContent).toContain('[9] console, line 3');
    expect(first().dataset.vramConsole).toBe('true');
    expect(first().title).toBe('Ran in a console: there is no cell to go to.');
    first().click();
    expect(actions.jumpTo).not.toHaveBeenCalled();
    view.dispose();
    consoleCells.dispose();
    await settle();
  });

  it("says what a GPU's memory without a stack may be: the gradients of a backward pass too", async () => {
    const { model, recorder } = liveRecorder();
    model.cells.merge([]);
    const view = new AllocationSitesView({
      settings: DEFAULT_SETTINGS,
      actions: {} as any
    });
    Widget.attach(view, document.body);
    view.model = model;
    view.recorder = recorder;
    const listing = parsedListing();
    const host = listing.devices[0];
    listing.devices = [
      { ...host, unattributed_bytes: 1024 },
      {
        ...host,
        device: 'cuda:0',
        unattributed_bytes: 4 * 1024 * 1024,
        sites: []
      }
    ];
    (recorder as any)._listing = listing;
    (recorder as any)._recording = ON;
    view.renderNow();
    const headings = Array.from(
      view.node.querySelectorAll('.jp-vram-Holders-heading'),
      h => h.textContent
    );
    expect(headings[0]).toContain(
      '; 1 KiB without a stack (allocated before recording);'
    );
    expect(headings[1]).toContain(
      '; 4 MiB without a stack (allocated before recording, or by the backward pass, which runs outside Python)'
    );
    view.dispose();
    await settle();
  });

  it('folds the small library sites behind one line that adds them up, and keeps it open across refreshes', async () => {
    const { model, recorder } = liveRecorder();
    model.cells.merge([]);
    const actions = {
      setRecording: jest.fn(),
      jumpTo: jest.fn(),
      exportGpuSnapshot: jest.fn(),
      exportHostCsv: jest.fn()
    };
    const view = new AllocationSitesView({
      settings: DEFAULT_SETTINGS,
      actions
    });
    Widget.attach(view, document.body);
    view.model = model;
    view.recorder = recorder;
    const listing = parsedListing();
    const pandas = listing.devices[0].sites[2];
    listing.devices[0].sites.push({
      ...pandas,
      frame: { ...pandas.frame!, line: 9 },
      code: EVIL,
      bytes: 1024,
      count: 3
    });
    (recorder as any)._listing = listing;
    (recorder as any)._recording = ON;
    view.renderNow();

    const fold = view.node.querySelector<HTMLDetailsElement>(
      '[data-vram-role="site-fold"]'
    )!;
    expect(fold.open).toBe(false);
    expect(fold.dataset.vramBytes).toBe('81024');
    expect(fold.querySelector('summary')!.textContent).toBe(
      '2 smaller sites outside the notebook: 79.1 KiB in 15 allocations'
    );
    // Every site is still a row, so that the CSV and the tests see them all; the
    // notebook's own sites come first and stay unfolded.
    const rows = view.node.querySelectorAll<HTMLElement>(
      '[data-vram-role="site-row"]'
    );
    expect(rows).toHaveLength(4);
    expect(fold.querySelectorAll('[data-vram-role="site-row"]')).toHaveLength(
      2
    );
    expect(fold.textContent).toContain(EVIL);
    expect(fold.querySelector('img')).toBeNull();

    fold.open = true;
    fold.dispatchEvent(new Event('toggle'));
    view.renderNow();
    expect(
      view.node.querySelector<HTMLDetailsElement>(
        '[data-vram-role="site-fold"]'
      )!.open
    ).toBe(true);
    // The open fold belongs to this kernel, so another notebook's kernel starts
    // with its fold closed.
    const other = liveRecorder().recorder;
    (other as any)._listing = listing;
    (other as any)._recording = ON;
    view.recorder = other;
    view.renderNow();
    expect(
      view.node.querySelector<HTMLDetailsElement>(
        '[data-vram-role="site-fold"]'
      )!.open
    ).toBe(false);
    view.dispose();
    await settle();
  });

  it('says, as text, that a changed setting restarted recording and what was lost', () => {
    expect(clockTime(AT_12_03_04)).toBe('12:03:04');
    const text = statusText(RESTARTED, true, false, DEFAULT_SETTINGS);
    expect(text).toContain(
      'Host recording restarted with 32 frames at 12:03:04; earlier host allocations are not attributed.'
    );
    expect(text).toContain(
      'GPU history restarted with 200,000 events at 12:03:05: earlier alloc/free events are gone from the snapshot; live memory keeps its lines.'
    );
    const stopped = {
      ...RESTARTED,
      gpu: { ...RESTARTED.gpu, restart_kept_stacks: false }
    };
    expect(statusText(stopped, true, false, DEFAULT_SETTINGS)).toContain(
      'GPU recording restarted with 200,000 events at 12:03:05; earlier GPU allocations may not be attributed.'
    );
    expect(statusText(ON, true, false, DEFAULT_SETTINGS)).not.toContain(
      'restarted'
    );
    // Recording also restarts without a request, around PyTorch's first stack
    // symbolization, and the status must say why.
    const symbolizer = {
      ...RESTARTED,
      host: { ...RESTARTED.host, restart_reason: 'symbolizer' }
    };
    expect(statusText(symbolizer, true, false, DEFAULT_SETTINGS)).toContain(
      'Host recording restarted at 12:03:04 while PyTorch loaded its stack symbolizer (recording that load ' +
        'would have taken minutes); earlier host allocations are not attributed.'
    );

    // When a cell stops recording (with tracemalloc.stop(), or with PyTorch's
    // recipe that ends in enabled=None), recording starts again, and the status
    // must say so.
    const elsewhere = {
      ...RESTARTED,
      host: { ...RESTARTED.host, restart_reason: 'stopped_elsewhere' },
      gpu: {
        ...RESTARTED.gpu,
        restart_kept_stacks: false,
        restart_reason: 'stopped_elsewhere'
      }
    };
    const elsewhereText = statusText(elsewhere, true, false, DEFAULT_SETTINGS);
    expect(elsewhereText).toContain(
      'tracemalloc was stopped outside this panel; host recording started it again with 32 frames at ' +
        '12:03:04: earlier host allocations are not attributed.'
    );
    expect(elsewhereText).toContain(
      "PyTorch's allocator history was switched off outside this panel; GPU recording started it again " +
        'with 200,000 events at 12:03:05: GPU memory allocated while it was off is not attributed.'
    );
    expect(elsewhereText).not.toContain('restarted');

    const { model, recorder } = liveRecorder();
    const view = new AllocationSitesView({
      settings: DEFAULT_SETTINGS,
      actions: {
        setRecording: jest.fn(),
        jumpTo: jest.fn(),
        exportGpuSnapshot: jest.fn(),
        exportHostCsv: jest.fn()
      }
    });
    Widget.attach(view, document.body);
    view.model = model;
    view.recorder = recorder;
    (recorder as any)._recording = RESTARTED;
    view.renderNow();
    const status = view.node.querySelector<HTMLElement>(
      '[data-vram-role="recording-status"]'
    )!;
    expect(status.textContent).toContain(
      'Host recording restarted with 32 frames at 12:03:04'
    );
    // The status is plain text, with no markup.
    expect(status.children).toHaveLength(0);
    view.dispose();
  });

  it('asks the kernel for its recording state when shown, instead of waiting for a click', async () => {
    const { model, connection, recorder } = liveRecorder();
    connection.allocationSites.mockImplementation(async () => ({
      ...parsedListing(),
      recording: OFF,
      devices: []
    }));
    const view = new AllocationSitesView({
      settings: DEFAULT_SETTINGS,
      actions: {} as any
    });
    view.model = model;
    view.recorder = recorder;
    // The view is not shown yet, so it asks nothing.
    expect(connection.allocationSites).not.toHaveBeenCalled();
    Widget.attach(view, document.body);
    MessageLoop.flush();
    await settle();
    MessageLoop.flush();
    expect(connection.allocationSites).toHaveBeenCalledTimes(1);
    expect(
      view.node.querySelector('[data-vram-role="recording-status"]')!
        .textContent
    ).toBe(
      'Recording is off: it costs nothing. Tick "Record allocations" to see which lines hold memory.'
    );
    view.dispose();
  });

  it('says that recording off costs nothing', () => {
    expect(statusText(OFF, true, false, DEFAULT_SETTINGS)).toBe(
      'Recording is off: it costs nothing. Tick "Record allocations" to see which lines hold memory.'
    );
    expect(statusText(null, false, false, DEFAULT_SETTINGS)).toContain(
      'not running'
    );
  });

  it('says the host only is recorded where the kernel sees no GPU, rather than that the GPU waits for CUDA', () => {
    const waiting = statusText(ON, true, false, DEFAULT_SETTINGS);
    expect(waiting).toContain('GPU waiting: CUDA is not initialised');
    const noGpu = statusText(ON, true, false, DEFAULT_SETTINGS, false);
    expect(noGpu).toContain(
      'no GPU is visible to this kernel, so only the host is recorded'
    );
    expect(noGpu).not.toContain('CUDA is not initialised');
    expect(statusText(ON, true, false, DEFAULT_SETTINGS, true)).toBe(waiting);
  });

  it('says an allocator history someone else started is read as it is, and lets its snapshot be downloaded', () => {
    const shared: RecordingState = {
      ...ON,
      gpu: {
        ...ON.gpu,
        state: 'shared',
        max_entries: null,
        started: 2.5,
        reason: null
      }
    };
    expect(statusText(shared, true, false, DEFAULT_SETTINGS)).toContain(
      "GPU: PyTorch's allocator history as someone else started it (read as it is, left running when off)"
    );
    expect(gpuHistoryReadable(shared.gpu)).toBe(true);
    expect(gpuHistoryReadable(ON.gpu)).toBe(false);
  });
});
