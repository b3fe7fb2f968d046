/**
 * Tests for what is still alive from each cell: the Alive column of the
 * Cells tab, its sort, and the words in the tooltips.
 */
import { MessageLoop } from '@lumino/messaging';
import { PromiseDelegate } from '@lumino/coreutils';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { parseCellAliveMessage } from '../../protocol/allocation';
import { AllocationRecorder } from '../allocations/AllocationRecorder';
import { cellAliveText, hostTracedText } from './cellAlive';
import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { CellHistoryView } from './CellHistoryView';
import { NotebookCellBadges } from './NotebookCellBadges';
import { makeCellRecord } from '../../testing/cellFixtures';
import { makeHello, MiB, wire } from '../../testing/fixtures';
import { settle } from '../../testing/fakeKernel';

/** A `cell_alive` message as the kernel sends it (tests/e2e/test_allocation_sites_e2e.py). */
const ALIVE = {
  type: 'cell_alive',
  cells: [
    {
      execution_count: 5,
      cell_id: 'leaky',
      alive_bytes: { host: 12 * MiB },
      total_bytes: 12 * MiB,
      runs: [
        { execution_count: 3, total_bytes: 4 * MiB },
        { execution_count: 4, total_bytes: 8 * MiB },
        { execution_count: 5, total_bytes: 12 * MiB }
      ],
      growing: true
    },
    {
      execution_count: 2,
      cell_id: 'steady',
      alive_bytes: { host: 4 * MiB },
      total_bytes: 4 * MiB,
      runs: [],
      growing: false
    }
  ]
};

function setup() {
  const model = new KernelMemoryModel({ historyCapacity: 10 });
  model.ingest(wire(makeHello()));
  const otherMessage = new Signal<unknown, unknown>({});
  const recorder = new AllocationRecorder({
    connection: {
      otherMessage,
      recordAllocations: jest.fn(),
      allocationSites: jest.fn(),
      allocationSnapshot: jest.fn()
    } as any,
    model,
    settings: () => DEFAULT_SETTINGS
  });
  return { model, recorder, otherMessage };
}

/**
 * Sends one `cells` message with a record per [execution count, cell id]
 * run, whose record ids are 1, 2, …
 */
function ingestRuns(
  model: KernelMemoryModel,
  runs: [number, string | null][]
): void {
  const records = runs.map(([count, cellId], i) =>
    makeCellRecord({
      record_id: i + 1,
      execution_count: count,
      cell_id: cellId
    })
  );
  model.ingest(wire({ type: 'cells', records }));
}

/** The Cells table, attached to the page, that shows `model` with `recorder`'s Alive figures. */
function attachedView(
  model: KernelMemoryModel,
  recorder: AllocationRecorder
): CellHistoryView {
  const view = new CellHistoryView({ settings: { ...DEFAULT_SETTINGS } });
  Widget.attach(view, document.body);
  view.model = model;
  view.recorder = recorder;
  return view;
}

describe('the Cells tab of a page that does not know the recording state', () => {
  it('asks the kernel once when shown, so a reloaded page has its Alive column without a visit to the Lines tab', async () => {
    const { model, recorder } = setup();
    model.setState('live');
    const connection = (recorder as any)._connection;
    connection.allocationSites.mockImplementation(async () => ({
      recording: {
        enabled: true,
        host: {
          state: 'recording',
          frames: 16,
          overhead_bytes: 1,
          restarted_at: null
        },
        gpu: {
          state: 'off',
          reason: null,
          max_entries: null,
          restarted_at: null,
          restart_kept_stacks: null
        }
      },
      elapsed_ms: 1,
      devices: [],
      cells: []
    }));
    const view = attachedView(model, recorder);
    MessageLoop.flush();
    await settle();
    MessageLoop.flush();
    expect(connection.allocationSites).toHaveBeenCalledTimes(1);
    view.renderNow();
    // The kernel is asked once, not at every render.
    expect(connection.allocationSites).toHaveBeenCalledTimes(1);
    view.dispose();
  });
});

describe('still alive from a cell', () => {
  it('is read from the broadcast and said in words', () => {
    const cells = parseCellAliveMessage(ALIVE)!;
    expect(cells.map(c => [c.cell_id, c.growing])).toEqual([
      ['leaky', true],
      ['steady', false]
    ]);
    expect(
      parseCellAliveMessage({
        type: 'cell_alive',
        cells: [{ total_bytes: -1 }]
      })
    ).toBeNull();
    const text = cellAliveText(cells[0], 'binary')!;
    expect(text.short).toBe('12 MiB \u26a0');
    expect(text.lines).toEqual([
      'Still alive from this cell: 12 MiB (host 12 MiB)',
      hostTracedText(),
      'Likely leak: its live memory grew at each of its last runs (4 MiB \u2192 8 MiB \u2192 12 MiB).'
    ]);
    expect(hostTracedText()).toContain('PyTorch CPU tensors are not traced');
    expect(cellAliveText(cells[1], 'binary')!.lines).toHaveLength(2);
    // With GPU figures alone, there is nothing to say about tracemalloc.
    const gpuOnly = { ...cells[1], alive_bytes: { 'cuda:0': 4 * MiB } };
    expect(cellAliveText(gpuOnly, 'binary')!.lines).toEqual([
      'Still alive from this cell: 4 MiB (cuda:0 4 MiB)'
    ]);
    expect(cellAliveText(undefined, 'binary')).toBeNull();
  });

  it('fills the Alive column on the latest run of each cell, and is forgotten at a restart', async () => {
    const { model, recorder, otherMessage } = setup();
    const view = attachedView(model, recorder);
    ingestRuns(model, [
      [4, 'leaky'],
      [5, 'leaky'],
      [6, 'other']
    ]);
    otherMessage.emit(ALIVE);
    await settle(); // The message's parser loads on demand.
    MessageLoop.flush();
    const row = (id: string) =>
      view.node.querySelector<HTMLElement>(
        `[data-vram-role="cell-row"][data-vram-record-id="${id}"]`
      )!;
    expect(row('2').dataset.vramAlive).toBe('12 MiB \u26a0');
    expect(row('2').dataset.vramGrowing).toBe('true');
    expect(row('2').title).toContain('Likely leak');
    expect(row('1').dataset.vramAlive).toBe(''); // An earlier run of the same cell.
    expect(row('3').dataset.vramAlive).toBe(''); // Nothing was recorded for it.
    model.setState('kernel-starting');
    model.ingest(wire(makeHello({ pid: 4321 })));
    MessageLoop.flush();
    expect(recorder.alive.size).toBe(0);
    view.dispose();
  });

  it('shows the Alive column only while recording is on or it has figures', async () => {
    const { model, recorder, otherMessage } = setup();
    const view = attachedView(model, recorder);
    const table = view.node.querySelector<HTMLElement>('.jp-vram-CellTable')!;
    ingestRuns(model, [[1, 'leaky']]);
    MessageLoop.flush();
    // While nothing was recorded, the column's room goes to the figures of a
    // narrow sidebar.
    expect(table.classList.contains('jp-vram-CellTable-noAlive')).toBe(true);
    otherMessage.emit(ALIVE);
    await settle();
    MessageLoop.flush();
    expect(table.classList.contains('jp-vram-CellTable-noAlive')).toBe(false);
    model.setState('kernel-starting');
    // A new kernel forgets the figures, and it does not record.
    model.ingest(wire(makeHello({ pid: 4321 })));
    MessageLoop.flush();
    expect(table.classList.contains('jp-vram-CellTable-noAlive')).toBe(true);
    view.dispose();
  });

  it('sorts by Alive from its header, figures missing last, and again when new figures arrive', async () => {
    const { model, recorder, otherMessage } = setup();
    const view = attachedView(model, recorder);
    ingestRuns(model, [
      [1, 'steady'],
      [2, 'none'],
      [3, 'leaky'],
      [4, null],
      [5, 'steady']
    ]);
    otherMessage.emit(ALIVE); // leaky holds 12 MiB, and steady 4 MiB.
    await settle();
    MessageLoop.flush();
    const order = () => view.orderedEntries.map(e => e.record.record_id);
    const header = view.node.querySelector<HTMLElement>(
      '[data-vram-role="cell-sort"][data-vram-sort-key="alive"]'
    )!;
    expect(header.textContent).toBe('Alive');
    expect(header.getAttribute('aria-sort')).toBe('none');
    header.click();
    MessageLoop.flush();
    // The largest come first at the first click.
    expect(header.getAttribute('aria-sort')).toBe('descending');
    expect(view.sort).toEqual({ key: 'alive', direction: 'descending' });
    expect(order()).toEqual([3, 5, 1, 2, 4]);
    header.click();
    MessageLoop.flush();
    expect(header.getAttribute('aria-sort')).toBe('ascending');
    // 5 (steady's latest run, 4 MiB) and 3 (leaky, 12 MiB) come first; then,
    // in record order, those without a figure: an earlier run of steady, a
    // cell with none, and a console run.
    expect(order()).toEqual([5, 3, 1, 2, 4]);
    // Only the growing cell carries the leak mark; the tooltip alone would
    // not tell, because it has more than one line either way.
    const rowOf = (id: number) =>
      view.node.querySelector<HTMLElement>(
        `[data-vram-role="cell-row"][data-vram-record-id="${id}"]`
      )!;
    expect([
      rowOf(5).dataset.vramGrowing,
      rowOf(3).dataset.vramGrowing
    ]).toEqual(['false', 'true']);
    expect(
      rowOf(5)
        .querySelector('.jp-vram-CellCol-alive')!
        .classList.contains('jp-vram-warning')
    ).toBe(false);
    const shown = () =>
      [
        ...view.node.querySelectorAll<HTMLElement>(
          '[data-vram-role="cell-row"]'
        )
      ]
        .filter(r => !r.hidden)
        .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
        .map(r => r.dataset.vramRecordId);
    expect(shown()).toEqual(['5', '3', '1', '2', '4']);
    header.click();
    MessageLoop.flush();
    expect(header.getAttribute('aria-sort')).toBe('descending');
    expect(order()).toEqual([3, 5, 1, 2, 4]);
    // In the new figures, steady holds more than leaky, and the cell without
    // a figure has one.
    otherMessage.emit({
      type: 'cell_alive',
      cells: [
        {
          execution_count: 5,
          cell_id: 'steady',
          alive_bytes: { host: 64 * MiB },
          total_bytes: 64 * MiB,
          runs: [],
          growing: false
        },
        {
          execution_count: 3,
          cell_id: 'leaky',
          alive_bytes: { host: 12 * MiB },
          total_bytes: 12 * MiB,
          runs: [],
          growing: false
        },
        {
          execution_count: 2,
          cell_id: 'none',
          alive_bytes: { host: 1 * MiB },
          total_bytes: 1 * MiB,
          runs: [],
          growing: false
        }
      ]
    });
    await settle();
    MessageLoop.flush();
    expect(order()).toEqual([5, 3, 2, 1, 4]);
    expect(shown()).toEqual(['5', '3', '2', '1', '4']);
    view.dispose();
  });

  it('is in the badge tooltip', async () => {
    const { model, recorder, otherMessage } = setup();
    const node = document.createElement('div');
    const wrapper = document.createElement('div');
    wrapper.className = 'jp-Cell-inputWrapper';
    const input = document.createElement('div');
    wrapper.appendChild(input);
    node.appendChild(wrapper);
    const ready = new PromiseDelegate<void>();
    ready.resolve();
    const cell = {
      model: {
        id: 'leaky',
        type: 'code',
        getMetadata: () => undefined,
        setMetadata: () => undefined
      },
      node,
      inputArea: { node: input },
      isDisposed: false,
      ready: ready.promise
    };
    const notebook = {
      widgets: [cell],
      model: { cells: { changed: new Signal<any, any>({}) } },
      modelChanged: new Signal<any, void>({}),
      isDisposed: false
    };
    const badges = new NotebookCellBadges({
      notebook: notebook as any,
      model,
      settings: DEFAULT_SETTINGS,
      alive: recorder
    });
    model.ingest(
      wire({
        type: 'cells',
        records: [
          makeCellRecord({ record_id: 1, execution_count: 5, cell_id: 'leaky' })
        ]
      })
    );
    const badge = () =>
      node.querySelector<HTMLElement>('[data-vram-role="cell-badge"]')!;
    expect(badge().title).not.toContain('Still alive');
    otherMessage.emit(ALIVE);
    await settle();
    expect(badge().title).toContain(
      'Still alive from this cell: 12 MiB (host 12 MiB)'
    );
    expect(badge().title).toContain('Likely leak');
    badges.dispose();
  });
});
