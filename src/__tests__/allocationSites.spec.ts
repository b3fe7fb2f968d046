import { Widget } from '@lumino/widgets';
import { MessageLoop } from '@lumino/messaging';
import { Signal } from '@lumino/signaling';

import {
  AllocationSitesResult,
  gpuHistoryReadable,
  parseAllocationSites,
  parseAllocationSnapshot,
  parseRecordingBroadcast,
  parseRecordingState,
  RecordingState
} from '../allocationProtocol';
import { AllocationRecorder } from '../model/AllocationRecorder';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import {
  cellIdsByCount,
  foldSmallSites,
  SiteRow,
  siteRow,
  siteRows,
  sitesToCsv
} from '../model/siteRows';
import { DEFAULT_SETTINGS } from '../settings';
import { clockTime } from '../clockText';
import { AllocationSitesView, asOfText, statusText } from '../views/AllocationSitesView';
import { findTargetCell, IRevealCell, revealLine } from '../views/revealLine';
import { EVIL, MiB, wire } from './fixtures';
import { makeCellRecord } from './cellFixtures';
import { settle } from './fakeKernel';
import { FakeConsoles } from './fakeConsoles';
import { ConsoleCells } from '../model/ConsoleCells';

const ON: RecordingState = {
  enabled: true,
  host: {
    state: 'recording',
    frames: 16,
    started: 1.5,
    overhead_bytes: 5 * MiB,
    restarted_at: null,
    restart_reason: null
  },
  gpu: {
    state: 'waiting',
    max_entries: 100000,
    started: null,
    allocated_before_bytes: null,
    reason: 'CUDA is not initialised yet: recording starts at the first cell boundary after it is',
    restarted_at: null,
    restart_kept_stacks: null,
    restart_reason: null
  }
};

const OFF: RecordingState = {
  enabled: false,
  host: {
    state: 'off',
    frames: null,
    started: null,
    overhead_bytes: 0,
    restarted_at: null,
    restart_reason: null
  },
  gpu: {
    state: 'off',
    max_entries: null,
    started: null,
    allocated_before_bytes: null,
    reason: null,
    restarted_at: null,
    restart_kept_stacks: null,
    restart_reason: null
  }
};

/** 12:03:04 today, local time, in seconds since the epoch (as the kernel sends times). */
const AT_12_03_04 = new Date(2024, 10, 21, 12, 3, 4).getTime() / 1000;

/** Recording after the settings changed: tracemalloc restarted at 32 frames, the GPU history resized. */
const RESTARTED: RecordingState = {
  enabled: true,
  host: {
    state: 'recording',
    frames: 32,
    started: AT_12_03_04,
    overhead_bytes: MiB,
    restarted_at: AT_12_03_04,
    restart_reason: 'frames'
  },
  gpu: {
    state: 'recording',
    max_entries: 200_000,
    started: 1.5,
    allocated_before_bytes: 0,
    reason: null,
    restarted_at: AT_12_03_04 + 1,
    restart_kept_stacks: true,
    restart_reason: 'max_entries'
  }
};

/** A reply as the kernel sends it (shape of tests/e2e/test_allocation_sites_e2e.py). */
function kernelListing(): unknown {
  return {
    recording: ON,
    elapsed_ms: 12.5,
    devices: [
      {
        device: 'host',
        total_bytes: 60_000_000,
        count: 5020,
        unattributed_bytes: 0,
        helper_bytes: 2048,
        helper_count: 6,
        truncated: false,
        sites: [
          {
            device: 'host',
            cell: { execution_count: 7, cell_id: null, line: 2 },
            frame: null,
            code: 'data = json.loads(text)',
            library_frame: {
              filename: '/usr/lib/python3.11/json/decoder.py',
              line: 353,
              function: null
            },
            bytes: 5_000_000,
            count: 5001
          },
          {
            device: 'host',
            cell: { execution_count: 9, cell_id: 'cell-a', line: 3 },
            frame: null,
            code: 'big = np.zeros(4_000_000)',
            library_frame: null,
            bytes: 32_000_112,
            count: 1
          },
          {
            device: 'host',
            cell: null,
            frame: { filename: '/venv/lib/site-packages/pandas/core/frame.py', line: 702, function: 'f' },
            code: null,
            library_frame: null,
            bytes: 80_000,
            count: 12
          }
        ]
      }
    ],
    cells: [
      {
        execution_count: 9,
        cell_id: 'cell-a',
        alive_bytes: { host: 32_000_112 },
        total_bytes: 32_000_112
      }
    ]
  };
}

function parsedListing(): AllocationSitesResult {
  const parsed = parseAllocationSites(kernelListing());
  if (!('value' in parsed)) {
    throw new Error(parsed.error);
  }
  return parsed.value;
}

describe('allocation protocol', () => {
  it('reads a listing, largest site first', () => {
    const listing = parsedListing();
    expect(listing.devices[0].sites.map(s => s.bytes)).toEqual([
      32_000_112, 5_000_000, 80_000
    ]);
    expect(listing.recording).toEqual(ON);
    expect(listing.cells[0].alive_bytes).toEqual({ host: 32_000_112 });
  });

  it('names the offending field of a malformed listing', () => {
    const bad = kernelListing() as any;
    bad.devices[0].sites[1].bytes = -1;
    const parsed = parseAllocationSites(bad);
    expect(parsed).toEqual({
      error: expect.stringContaining('allocation_sites.devices[0].sites[1].bytes')
    });
    expect(parseRecordingState({ enabled: 'yes' })).toEqual({
      error: expect.stringContaining('record_allocations.host')
    });
  });

  it('reads the restart times, and their absence from an older helper as null', () => {
    expect(parseRecordingState(RESTARTED)).toEqual({ value: RESTARTED });
    const older = JSON.parse(JSON.stringify(RESTARTED));
    delete older.host.restarted_at;
    delete older.host.restart_reason;
    delete older.gpu.restarted_at;
    delete older.gpu.restart_kept_stacks;
    delete older.gpu.restart_reason;
    const parsed = parseRecordingState(older);
    expect('value' in parsed && parsed.value.host.restarted_at).toBeNull();
    expect('value' in parsed && parsed.value.host.restart_reason).toBeNull();
    expect('value' in parsed && parsed.value.gpu.restarted_at).toBeNull();
    expect('value' in parsed && parsed.value.gpu.restart_kept_stacks).toBeNull();
    expect('value' in parsed && parsed.value.gpu.restart_reason).toBeNull();
    expect(
      parseRecordingState({ ...RESTARTED, gpu: { ...RESTARTED.gpu, restart_reason: 7 } })
    ).toEqual({ error: expect.stringContaining('record_allocations.gpu.restart_reason') });
    expect(
      parseRecordingState({ ...RESTARTED, host: { ...RESTARTED.host, restarted_at: 'noon' } })
    ).toEqual({ error: expect.stringContaining('record_allocations.host.restarted_at') });
  });

  it('reads the broadcast and the snapshot', () => {
    expect(parseRecordingBroadcast({ type: 'allocation_recording', recording: OFF })).toEqual(OFF);
    expect(parseRecordingBroadcast({ type: 'sample' })).toBeNull();
    expect(parseRecordingBroadcast({ type: 'allocation_recording', recording: 3 })).toBeNull();
    expect(
      parseAllocationSnapshot({ format: 'pickle', data_base64: null, bytes: 0, reason: 'not recording' })
    ).toEqual({ value: { format: 'pickle', data_base64: null, bytes: 0, reason: 'not recording' } });
  });
});

describe('site rows', () => {
  it('maps sites to cells: by id, else by execution count through the cell records', () => {
    const cellIds = cellIdsByCount([
      { execution_count: 7, cell_id: 'cell-b' },
      { execution_count: 8, cell_id: null },
      { execution_count: 9, cell_id: 'cell-a' }
    ]);
    const [host] = siteRows(parsedListing(), cellIds);
    const [big, json, outside] = host.rows;
    expect(big).toMatchObject({
      label: '[9] line 3',
      cellId: 'cell-a',
      executionCount: 9,
      line: 3,
      inNotebook: true,
      library: null
    });
    expect(json).toMatchObject({
      label: '[7] line 2',
      cellId: 'cell-b', // the kernel did not know it: the record of In[7] does
      line: 2,
      library: 'python3.11/json/decoder.py:353'
    });
    expect(outside).toMatchObject({
      label: 'pandas/core/frame.py:702 in f',
      cellId: null,
      executionCount: null,
      inNotebook: false
    });
  });

  it('says a line is one of the cells with the same code, whose allocations cannot be told apart', () => {
    const listing = kernelListing() as any;
    listing.devices[0].sites[1].cell = {
      execution_count: 9,
      cell_id: 'cell-b',
      line: 1,
      same_code_cells: ['cell-a', 'cell-b']
    };
    const parsed = parseAllocationSites(listing);
    if (!('value' in parsed)) {
      throw new Error(parsed.error);
    }
    const site = parsed.value.devices[0].sites.find(s => s.cell?.cell_id === 'cell-b')!;
    const row = siteRow(site, new Map());
    expect(row.label).toBe('[9] line 1, one of 2 cells with this code');
    expect(row.cellId).toBe('cell-b'); // the one that ran last
    listing.devices[0].sites[1].cell.same_code_cells = [7];
    expect(parseAllocationSites(listing)).toEqual({
      error: expect.stringContaining('same_code_cells[0]: expected a string')
    });
  });

  it('leaves a cell unknown when nothing names it', () => {
    const row = siteRow(
      {
        device: 'host',
        cell: { execution_count: 3, cell_id: null, line: 1 },
        frame: null,
        code: null,
        library_frame: null,
        bytes: 1,
        count: 1
      },
      new Map()
    );
    expect(row.cellId).toBeNull();
    expect(row.executionCount).toBe(3);
  });

  /** A host site row of `bytes` (its line number too), in the notebook or a library's. */
  const siteOf = (bytes: number, inNotebook: boolean, count = 1): SiteRow => ({
    device: 'host',
    label: inNotebook ? `[1] line ${bytes}` : `lib.py:${bytes}`,
    cellId: null,
    executionCount: inNotebook ? 1 : null,
    line: bytes,
    inNotebook,
    inConsole: false,
    code: null,
    library: null,
    bytes,
    count
  });

  it('folds the small sites outside the notebook, never a notebook line, and never one alone', () => {
    const row = siteOf;
    // 100,000,000 listed: the limit is 1,000,000 bytes (1%, above the 64 KiB floor).
    const rows = [row(90_000_000, true), row(6_000_000, false), row(2_000_000, false), row(999_999, false, 3), row(10, true), row(999_991, false, 4)];
    const { shown, folded, foldedBytes, foldedCount } = foldSmallSites(rows);
    expect(shown.map(r => r.bytes)).toEqual([90_000_000, 6_000_000, 2_000_000, 10]);
    expect(folded.map(r => r.bytes)).toEqual([999_999, 999_991]);
    expect(foldedBytes).toBe(1_999_990);
    expect(foldedCount).toBe(7);
    // A single small site is shown where it stands: a fold would hide one row behind one line.
    const one = foldSmallSites(rows.slice(0, 5));
    expect(one.folded).toEqual([]);
    expect(one.shown).toHaveLength(5);
    expect(foldSmallSites([])).toEqual({ shown: [], folded: [], foldedBytes: 0, foldedCount: 0 });
  });

  it("folds the kernel's own few-KiB sites even where nothing of the notebook is listed yet", () => {
    const row = (bytes: number, inNotebook = false) => siteOf(bytes, inNotebook);
    // Just after recording starts: 30 sites of a few KiB, each well above 1% of the 120 KiB listed.
    const early = Array.from({ length: 30 }, (_, i) => row(2_000 + i * 100));
    const { shown, folded } = foldSmallSites(early);
    expect(shown).toEqual([]);
    expect(folded).toHaveLength(30);
    // At or above the floor a site outside the notebook is shown; a notebook line always is.
    const later = foldSmallSites([row(64 * 1024), row(1_000), row(2_000), row(5, true)]);
    expect(later.shown.map(r => r.bytes)).toEqual([64 * 1024, 5]);
  });

  it('writes CSV with quoting and without spreadsheet formulas', () => {
    const [host] = siteRows(parsedListing(), new Map());
    host.rows[0].code = '=HYPERLINK("x"), b';
    const csv = sitesToCsv(host.rows).split('\n');
    expect(csv[0]).toBe(
      'device,execution_count,cell_id,line,in_notebook,bytes,allocations,code,library_frame,where'
    );
    expect(csv[1]).toBe(
      'host,9,cell-a,3,true,32000112,1,"\'=HYPERLINK(""x""), b",,[9] line 3'
    );
    expect(csv).toHaveLength(5); // header, 3 rows, final newline
  });

  it('defuses a leading tab or carriage return in CSV as a formula too', () => {
    const [host] = siteRows(parsedListing(), new Map());
    host.rows[0].code = '\t=1+1';
    host.rows[0].label = '\r=1+1';
    const fields = sitesToCsv(host.rows).split('\n')[1];
    expect(fields).toContain(',\'\t=1+1,');
    expect(fields.endsWith(',"\'\r=1+1"')).toBe(true);
  });
});

function fakeConnection() {
  const otherMessage = new Signal<unknown, unknown>({});
  return {
    otherMessage,
    recordAllocations: jest.fn(async (request: { enabled: boolean }) =>
      request.enabled ? ON : OFF
    ),
    allocationSites: jest.fn(async () => parsedListing()),
    allocationSnapshot: jest.fn(async () => ({
      format: 'pickle',
      data_base64: null,
      bytes: 0,
      reason: 'x'
    }))
  };
}

/** A recorder of a live kernel; `settings` is read at each request (a test may change it). */
function liveRecorder(settings = { frames: 8, entries: 5000 }) {
  const model = new KernelMemoryModel({ historyCapacity: 10 });
  model.setState('live');
  const connection = fakeConnection();
  const recorder = new AllocationRecorder({
    connection,
    model,
    settings: () => ({
      ...DEFAULT_SETTINGS,
      allocationHostFrames: settings.frames,
      allocationHistoryMaxEntries: settings.entries
    })
  });
  return { model, connection, recorder };
}

describe('AllocationRecorder', () => {
  it('sends the settings with the toggle and keeps the state', async () => {
    const { connection, recorder } = liveRecorder();
    expect(recorder.recording).toBeNull();
    await recorder.setRecording(true);
    expect(connection.recordAllocations).toHaveBeenCalledWith({
      enabled: true,
      host_frames: 8,
      gpu_max_entries: 5000
    });
    expect(recorder.enabled).toBe(true);
    await recorder.refresh();
    expect(recorder.listing?.devices).toHaveLength(1);
    await recorder.setRecording(false);
    expect(recorder.enabled).toBe(false);
    expect(recorder.listing).toBeNull(); // off frees the kernel's history: nothing to show
  });

  it('says when its listing was made and how many cells ran since', async () => {
    const { model, recorder } = liveRecorder();
    const view = new AllocationSitesView({ settings: DEFAULT_SETTINGS, actions: {} as any });
    Widget.attach(view, document.body);
    view.model = model;
    view.recorder = recorder;
    const asOf = () => view.node.querySelector<HTMLElement>('[data-vram-role="sites-as-of"]')!;
    view.renderNow();
    expect(asOf().hidden).toBe(true);
    const before = Date.now() / 1000;
    await recorder.refresh();
    expect(recorder.listedAt).toBeGreaterThanOrEqual(before);
    view.renderNow();
    expect(asOf().hidden).toBe(false);
    expect(asOf().textContent).toBe(asOfText(recorder.listedAt!, 0));
    expect(asOf().textContent).toMatch(/^Listed at \d\d:\d\d:\d\d\.$/);
    model.ingest(wire({ type: 'cells', records: [makeCellRecord({ record_id: 1 }), makeCellRecord({ record_id: 2 })] }));
    expect(recorder.cellsRunSinceListing).toBe(2);
    view.renderNow();
    expect(asOf().textContent).toContain('2 cells have run since: Refresh to see what the lines hold now.');
    await recorder.refresh();
    expect(recorder.cellsRunSinceListing).toBe(0);
    view.dispose();
  });

  it('follows broadcasts and forgets everything when the kernel restarts', async () => {
    const { model, connection, recorder } = liveRecorder();
    connection.otherMessage.emit({ type: 'allocation_recording', recording: ON });
    await settle(); // the parser loads on demand
    expect(recorder.recording).toEqual(ON);
    await recorder.refresh();
    model.setState('kernel-starting');
    expect(recorder.recording).toBeNull();
    expect(recorder.listing).toBeNull();
  });

  it('asks a kernel whose recording state is unknown once, and again after a restart', async () => {
    const { model, connection, recorder } = liveRecorder();
    connection.allocationSites.mockImplementation(async () => ({ ...parsedListing(), recording: OFF, devices: [] }));
    recorder.ensureKnown();
    recorder.ensureKnown(); // an answer is on its way
    await settle();
    expect(connection.allocationSites).toHaveBeenCalledTimes(1);
    expect(recorder.enabled).toBe(false);
    recorder.ensureKnown(); // known: nothing to ask
    expect(connection.allocationSites).toHaveBeenCalledTimes(1);
    model.setState('kernel-starting'); // a restart: recording ended, state unknown again
    recorder.ensureKnown(); // not live: cannot ask yet
    expect(connection.allocationSites).toHaveBeenCalledTimes(1);
    const changes: string[] = [];
    recorder.changed.connect((_, change) => changes.push(change));
    model.setState('live');
    expect(changes).toContain('available'); // the Lines tab renders, and asks
    recorder.ensureKnown();
    await settle();
    expect(connection.allocationSites).toHaveBeenCalledTimes(2);
    // A failed question is not repeated at every render of the same kernel.
    model.setState('kernel-starting');
    model.setState('live');
    connection.allocationSites.mockRejectedValueOnce(new Error('timed out'));
    recorder.ensureKnown();
    await settle();
    recorder.ensureKnown();
    expect(connection.allocationSites).toHaveBeenCalledTimes(3);
    expect(recorder.recording).toBeNull();
  });

  it('says why it cannot ask, and reports failures as sentences', async () => {
    const { model, connection, recorder } = liveRecorder();
    connection.allocationSites.mockRejectedValueOnce(new Error('The kernel helper reported boom'));
    expect(await recorder.refresh()).toBeNull();
    expect(recorder.error).toBe('The kernel helper reported boom');
    model.setState('disconnected');
    expect(await recorder.setRecording(true)).toBeNull();
    expect(recorder.error).toContain('not running');
    expect(connection.recordAllocations).not.toHaveBeenCalled();
  });
});

describe('AllocationRecorder: settings changed while recording', () => {
  it('sends the request again with the new values to a kernel that records', async () => {
    const settings = { frames: 16, entries: 100_000 };
    const { connection, recorder } = liveRecorder(settings);
    await recorder.setRecording(true); // ON: 16 frames, 100,000 entries
    connection.recordAllocations.mockClear();
    expect(await recorder.applySettings()).toBeNull(); // nothing changed: nothing sent
    settings.frames = 32;
    connection.recordAllocations.mockResolvedValueOnce(RESTARTED);
    expect(await recorder.applySettings()).toEqual(RESTARTED);
    expect(connection.recordAllocations).toHaveBeenCalledWith({
      enabled: true,
      host_frames: 32,
      gpu_max_entries: 100_000
    });
    expect(recorder.recording).toEqual(RESTARTED);
    // the GPU bound alone counts too
    settings.entries = 300_000;
    await recorder.applySettings();
    expect(connection.recordAllocations).toHaveBeenLastCalledWith({
      enabled: true,
      host_frames: 32,
      gpu_max_entries: 300_000
    });
  });

  it('sends nothing while recording is off, unknown, or for a depth it cannot set', async () => {
    const settings = { frames: 32, entries: 100_000 };
    const { connection, recorder } = liveRecorder(settings);
    expect(await recorder.applySettings()).toBeNull(); // unknown
    await recorder.setRecording(false);
    connection.recordAllocations.mockClear();
    expect(await recorder.applySettings()).toBeNull(); // off: the next start takes them
    connection.otherMessage.emit({
      type: 'allocation_recording',
      recording: { ...ON, host: { ...ON.host, state: 'shared', frames: 5 } }
    });
    await settle();
    expect(recorder.enabled).toBe(true);
    expect(await recorder.applySettings()).toBeNull(); // someone else's tracemalloc keeps its depth
    connection.otherMessage.emit({
      type: 'allocation_recording',
      recording: {
        ...ON,
        host: { ...ON.host, state: 'shared', frames: 5 },
        gpu: { ...ON.gpu, state: 'shared', max_entries: null, reason: null, started: 2.5 }
      }
    });
    await settle();
    expect(await recorder.applySettings()).toBeNull(); // and someone else's allocator history its size
    expect(connection.recordAllocations).not.toHaveBeenCalled();
  });
});

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
    const view = new AllocationSitesView({ settings: DEFAULT_SETTINGS, actions });
    Widget.attach(view, document.body);
    view.model = model;
    view.recorder = recorder;
    const listing = parsedListing();
    listing.devices[0].sites[0].code = EVIL;
    (recorder as any)._listing = listing;
    (recorder as any)._recording = ON;
    view.renderNow();

    expect(view.node.querySelector('img')).toBeNull();
    const rows = view.node.querySelectorAll<HTMLElement>('[data-vram-role="site-row"]');
    expect(rows).toHaveLength(3);
    expect(rows[0].dataset.vramCellId).toBe('cell-a');
    expect(rows[0].dataset.vramLine).toBe('3');
    expect(rows[0].dataset.vramBytes).toBe('32000112');
    expect(rows[0].textContent).toContain(EVIL);
    rows[0].click();
    expect(actions.jumpTo).toHaveBeenCalledWith(
      expect.objectContaining({ cellId: 'cell-a', line: 3, executionCount: 9 })
    );
    rows[2].click(); // outside the notebook: nowhere to go
    expect(actions.jumpTo).toHaveBeenCalledTimes(1);

    const toggle = view.node.querySelector<HTMLInputElement>('[data-vram-role="record-allocations"]')!;
    expect(toggle.checked).toBe(true);
    toggle.checked = false;
    toggle.dispatchEvent(new Event('change'));
    expect(actions.setRecording).toHaveBeenCalledWith(false);
    const status = view.node.querySelector('[data-vram-role="recording-status"]')!.textContent;
    expect(status).toContain('tracemalloc, 16 frames, 5 MiB of traces');
    expect(status).toContain('GPU waiting: CUDA is not initialised');
    expect(
      view.node.querySelector<HTMLButtonElement>('[data-vram-role="export-gpu-snapshot"]')!.disabled
    ).toBe(true);
    // The heading adds up to the rows: the monitor's own allocations are left out, and said.
    expect(view.node.querySelector('.jp-vram-Holders-heading')!.textContent).toBe(
      'Host (tracemalloc: Python objects and NumPy arrays, not PyTorch CPU tensors): 57.2 MiB live in 5,014 allocations; not counted: this monitor\'s own 2 KiB in 6 allocations'
    );
    view.dispose();
    await settle();
  });

  it("labels a console's lines as a console's, with no jump to a cell", async () => {
    const { model, recorder } = liveRecorder();
    model.cells.merge([]);
    const actions = { setRecording: jest.fn(), jumpTo: jest.fn(), exportGpuSnapshot: jest.fn(), exportHostCsv: jest.fn() };
    const consoles = new FakeConsoles();
    const console = consoles.open();
    const consoleCells = new ConsoleCells(consoles);
    const view = new AllocationSitesView({ settings: DEFAULT_SETTINGS, actions, consoleCells });
    Widget.attach(view, document.body);
    view.model = model;
    view.recorder = recorder;
    (recorder as any)._listing = parsedListing();
    (recorder as any)._recording = ON;
    view.renderNow();
    const first = () => view.node.querySelector<HTMLElement>('[data-vram-role="site-row"]')!;
    expect(first().textContent).toContain('[9] line 3');
    // 'cell-a' turns out to be a console's cell: the open view relabels it.
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
    const view = new AllocationSitesView({ settings: DEFAULT_SETTINGS, actions: {} as any });
    Widget.attach(view, document.body);
    view.model = model;
    view.recorder = recorder;
    const listing = parsedListing();
    const host = listing.devices[0];
    listing.devices = [
      { ...host, unattributed_bytes: 1024 },
      { ...host, device: 'cuda:0', unattributed_bytes: 4 * 1024 * 1024, sites: [] }
    ];
    (recorder as any)._listing = listing;
    (recorder as any)._recording = ON;
    view.renderNow();
    const headings = Array.from(view.node.querySelectorAll('.jp-vram-Holders-heading'), h => h.textContent);
    expect(headings[0]).toContain('; 1 KiB without a stack (allocated before recording);');
    expect(headings[1]).toContain(
      '; 4 MiB without a stack (allocated before recording, or by the backward pass, which runs outside Python)'
    );
    view.dispose();
    await settle();
  });

  it('folds the small library sites behind one line that adds them up, and keeps it open across refreshes', async () => {
    const { model, recorder } = liveRecorder();
    model.cells.merge([]);
    const actions = { setRecording: jest.fn(), jumpTo: jest.fn(), exportGpuSnapshot: jest.fn(), exportHostCsv: jest.fn() };
    const view = new AllocationSitesView({ settings: DEFAULT_SETTINGS, actions });
    Widget.attach(view, document.body);
    view.model = model;
    view.recorder = recorder;
    const listing = parsedListing();
    const pandas = listing.devices[0].sites[2];
    listing.devices[0].sites.push({ ...pandas, frame: { ...pandas.frame!, line: 9 }, code: EVIL, bytes: 1024, count: 3 });
    (recorder as any)._listing = listing;
    (recorder as any)._recording = ON;
    view.renderNow();

    const fold = view.node.querySelector<HTMLDetailsElement>('[data-vram-role="site-fold"]')!;
    expect(fold.open).toBe(false);
    expect(fold.dataset.vramBytes).toBe('81024');
    expect(fold.querySelector('summary')!.textContent).toBe(
      '2 smaller sites outside the notebook: 79.1 KiB in 15 allocations'
    );
    // Every site is still a row (the CSV and the tests see them all); the notebook's come first, unfolded.
    const rows = view.node.querySelectorAll<HTMLElement>('[data-vram-role="site-row"]');
    expect(rows).toHaveLength(4);
    expect(fold.querySelectorAll('[data-vram-role="site-row"]')).toHaveLength(2);
    expect(fold.textContent).toContain(EVIL);
    expect(fold.querySelector('img')).toBeNull();

    fold.open = true;
    fold.dispatchEvent(new Event('toggle'));
    view.renderNow();
    expect(view.node.querySelector<HTMLDetailsElement>('[data-vram-role="site-fold"]')!.open).toBe(true);
    // Another notebook's kernel: its fold starts closed.
    const other = liveRecorder().recorder;
    (other as any)._listing = listing;
    (other as any)._recording = ON;
    view.recorder = other;
    view.renderNow();
    expect(view.node.querySelector<HTMLDetailsElement>('[data-vram-role="site-fold"]')!.open).toBe(false);
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
    const stopped = { ...RESTARTED, gpu: { ...RESTARTED.gpu, restart_kept_stacks: false } };
    expect(statusText(stopped, true, false, DEFAULT_SETTINGS)).toContain(
      'GPU recording restarted with 200,000 events at 12:03:05; earlier GPU allocations may not be attributed.'
    );
    expect(statusText(ON, true, false, DEFAULT_SETTINGS)).not.toContain('restarted');
    // Restarted without a request, around PyTorch's first stack symbolization: said why.
    const symbolizer = { ...RESTARTED, host: { ...RESTARTED.host, restart_reason: 'symbolizer' } };
    expect(statusText(symbolizer, true, false, DEFAULT_SETTINGS)).toContain(
      'Host recording restarted at 12:03:04 while PyTorch loaded its stack symbolizer (recording that load ' +
        'would have taken minutes); earlier host allocations are not attributed.'
    );

    // Stopped in a cell (tracemalloc.stop(), PyTorch's recipe ending in enabled=None): started again, said so.
    const elsewhere = {
      ...RESTARTED,
      host: { ...RESTARTED.host, restart_reason: 'stopped_elsewhere' },
      gpu: { ...RESTARTED.gpu, restart_kept_stacks: false, restart_reason: 'stopped_elsewhere' }
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
      actions: { setRecording: jest.fn(), jumpTo: jest.fn(), exportGpuSnapshot: jest.fn(), exportHostCsv: jest.fn() }
    });
    Widget.attach(view, document.body);
    view.model = model;
    view.recorder = recorder;
    (recorder as any)._recording = RESTARTED;
    view.renderNow();
    const status = view.node.querySelector<HTMLElement>('[data-vram-role="recording-status"]')!;
    expect(status.textContent).toContain('Host recording restarted with 32 frames at 12:03:04');
    expect(status.children).toHaveLength(0); // text, no markup
    view.dispose();
  });

  it('asks the kernel for its recording state when shown, instead of waiting for a click', async () => {
    const { model, connection, recorder } = liveRecorder();
    connection.allocationSites.mockImplementation(async () => ({ ...parsedListing(), recording: OFF, devices: [] }));
    const view = new AllocationSitesView({ settings: DEFAULT_SETTINGS, actions: {} as any });
    view.model = model;
    view.recorder = recorder;
    expect(connection.allocationSites).not.toHaveBeenCalled(); // not shown yet
    Widget.attach(view, document.body);
    MessageLoop.flush();
    await settle();
    MessageLoop.flush();
    expect(connection.allocationSites).toHaveBeenCalledTimes(1);
    expect(view.node.querySelector('[data-vram-role="recording-status"]')!.textContent).toBe(
      'Recording is off: it costs nothing. Tick "Record allocations" to see which lines hold memory.'
    );
    view.dispose();
  });

  it('says that recording off costs nothing', () => {
    expect(statusText(OFF, true, false, DEFAULT_SETTINGS)).toBe('Recording is off: it costs nothing. Tick "Record allocations" to see which lines hold memory.');
    expect(statusText(null, false, false, DEFAULT_SETTINGS)).toContain('not running');
  });

  it('says the host only is recorded where the kernel sees no GPU, rather than that the GPU waits for CUDA', () => {
    const waiting = statusText(ON, true, false, DEFAULT_SETTINGS);
    expect(waiting).toContain('GPU waiting: CUDA is not initialised');
    const noGpu = statusText(ON, true, false, DEFAULT_SETTINGS, false);
    expect(noGpu).toContain('no GPU is visible to this kernel, so only the host is recorded');
    expect(noGpu).not.toContain('CUDA is not initialised');
    expect(statusText(ON, true, false, DEFAULT_SETTINGS, true)).toBe(waiting);
  });

  it("says an allocator history someone else started is read as it is, and lets its snapshot be downloaded", () => {
    const shared: RecordingState = {
      ...ON,
      gpu: { ...ON.gpu, state: 'shared', max_entries: null, started: 2.5, reason: null }
    };
    expect(statusText(shared, true, false, DEFAULT_SETTINGS)).toContain(
      "GPU: PyTorch's allocator history as someone else started it (read as it is, left running when off)"
    );
    expect(gpuHistoryReadable(shared.gpu)).toBe(true);
    expect(gpuHistoryReadable(ON.gpu)).toBe(false);
  });
});

describe('revealLine', () => {
  function cell(id: string, count: number | null, type = 'code') {
    const editor = { setCursorPosition: jest.fn(), focus: jest.fn() };
    return {
      model: { id, type, executionCount: count },
      ready: Promise.resolve(),
      editor
    } satisfies IRevealCell;
  }

  it('finds the cell by id, else by execution count, and puts the cursor on the line', async () => {
    const cells = [cell('a', 1), cell('m', null, 'markdown'), cell('b', 7)];
    const notebook = {
      widgets: cells,
      activeCellIndex: 0,
      mode: 'command' as 'command' | 'edit',
      deselectAll: jest.fn(),
      scrollToItem: jest.fn(async () => undefined)
    };
    expect(findTargetCell(cells, { cellId: 'b', executionCount: null, line: 1 })).toBe(2);
    expect(findTargetCell(cells, { cellId: 'gone', executionCount: 1, line: 1 })).toBe(0);
    expect(findTargetCell(cells, { cellId: null, executionCount: 99, line: 1 })).toBe(-1);

    expect(await revealLine(notebook, { cellId: null, executionCount: 7, line: 3 })).toBe(true);
    expect(notebook.activeCellIndex).toBe(2);
    expect(notebook.scrollToItem).toHaveBeenCalledWith(2, 'center');
    expect(notebook.mode).toBe('edit');
    expect(cells[2].editor.setCursorPosition).toHaveBeenCalledWith({ line: 2, column: 0 });
    expect(cells[2].editor.focus).toHaveBeenCalled();
    expect(await revealLine(notebook, { cellId: 'x', executionCount: null, line: 3 })).toBe(false);
  });
});
