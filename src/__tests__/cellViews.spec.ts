import { PromiseDelegate } from '@lumino/coreutils';
import { MessageLoop } from '@lumino/messaging';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { ConsoleCells } from '../model/ConsoleCells';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { CELL_METADATA_KEY } from '../model/cellMetadata';
import { DEFAULT_SETTINGS, VramSettings } from '../settings';
import { CELL_ROW_HEIGHT } from '../views/CellHistoryRow';
import { CellHistoryView } from '../views/CellHistoryView';
import { MemorySidebar } from '../views/MemorySidebar';
import { NotebookCellBadges } from '../views/NotebookCellBadges';
import { makeCellGpu, makeCellRecord, manyRecords, oomRecord } from './cellFixtures';
import { EVIL, FakeMonitor, GiB, makeHello, makeSample, wire } from './fixtures';
import { settle } from './fakeKernel';
import { FakeConsoles } from './fakeConsoles';


class FakeCellModel {
  constructor(
    readonly id: string,
    readonly type = 'code'
  ) {}
  metadata: { [key: string]: unknown } = {};
  getMetadata(key: string) {
    return this.metadata[key];
  }
  setMetadata(key: string, value: unknown) {
    this.metadata[key] = value;
  }
}

/** A cell that starts as a placeholder, like in a windowed notebook. */
class FakeCell {
  constructor(id: string, type = 'code') {
    this.model = new FakeCellModel(id, type);
    this.node.className = 'jp-Cell';
  }
  model: FakeCellModel;
  node = document.createElement('div');
  inputArea: { node: HTMLElement } | null = null;
  isDisposed = false;
  private _ready = new PromiseDelegate<void>();
  get ready() {
    return this._ready.promise;
  }
  /** The notebook renders the cell (scrolled into view). */
  render(): this {
    const wrapper = document.createElement('div');
    wrapper.className = 'jp-Cell-inputWrapper';
    const input = document.createElement('div');
    input.className = 'jp-InputArea';
    wrapper.appendChild(input);
    this.node.appendChild(wrapper);
    this.inputArea = { node: input };
    this._ready.resolve();
    return this;
  }
  get badge(): HTMLElement | null {
    return this.node.querySelector('[data-vram-role="cell-badge"]');
  }
}

class FakeNotebook {
  constructor(public widgets: FakeCell[]) {}
  model = { cells: { changed: new Signal<any, any>(this) } };
  modelChanged = new Signal<any, void>(this);
  isDisposed = false;
  /** Cells inserted/moved/deleted: the notebook has its new widgets. */
  setCells(widgets: FakeCell[]) {
    this.widgets = widgets;
    this.model.cells.changed.emit({});
  }
}

function liveModel(): KernelMemoryModel {
  const model = new KernelMemoryModel({ historyCapacity: 10 });
  model.ingest(wire(makeHello()));
  return model;
}

function cellMsg(record: ReturnType<typeof makeCellRecord>) {
  return wire({ type: 'cells', records: [record] });
}

describe('NotebookCellBadges', () => {
  function setup(cells: FakeCell[], settings: Partial<VramSettings> = {}) {
    const notebook = new FakeNotebook(cells);
    const model = liveModel();
    const badges = new NotebookCellBadges({
      notebook,
      model,
      settings: { ...DEFAULT_SETTINGS, ...settings }
    });
    return { notebook, model, badges };
  }

  it('puts a badge with exact figures on the executed cell', () => {
    const a = new FakeCell('cell-a').render();
    const b = new FakeCell('cell-b').render();
    const { model } = setup([a, b]);
    model.ingest(cellMsg(makeCellRecord({ record_id: 1, execution_count: 7 })));
    const badge = a.badge!;
    expect(badge).not.toBeNull();
    expect(b.badge).toBeNull();
    expect(badge.closest('.jp-Cell')).toBe(a.node);
    expect(badge.parentElement!.className).toContain('jp-Cell-inputWrapper');
    expect(badge.textContent).toBe('+1 GiB \u00b7 peak 3 GiB \u00b7 2.1 s');
    expect(badge.dataset).toMatchObject({
      vramDeltaBytes: String(GiB),
      vramPeakBytes: String(3 * GiB),
      vramDurationS: '2.1',
      vramStatus: 'ok',
      vramLevel: 'normal',
      vramExecutionCount: '7',
      vramSource: 'gpu'
    });
    expect(badge.title).toContain('GPU 0: allocated');
  });

  it("marks a badge of an earlier kernel process, and of a kernel that sends no records", () => {
    const a = new FakeCell('cell-a').render();
    const { model } = setup([a]);
    model.ingest(cellMsg(makeCellRecord({ record_id: 1, execution_count: 7, cell_id: 'cell-a' })));
    expect(a.badge!.dataset.vramEarlier).toBeUndefined();
    // The notebook switches to a kernel without our helper: its runs bring no figures.
    model.startKernelSession();
    model.setState('non-python', 'This kernel runs echo.');
    expect(a.badge!.dataset.vramEarlier).toBe('true');
    expect(a.badge!.classList.contains('jp-vram-CellBadge-earlier')).toBe(true);
    expect(a.badge!.title).toContain('From an earlier kernel process');
    // Back on a Python kernel: a new process (its own record series).
    model.setState('kernel-starting');
    model.ingest(wire(makeHello({ pid: 999, record_series: 'series-2' })));
    expect(a.badge!.dataset.vramEarlier).toBe('true'); // still the first process's figures
    model.ingest(cellMsg(makeCellRecord({ record_id: 1, execution_count: 1, cell_id: 'cell-a' })));
    expect(a.badge!.dataset.vramEarlier).toBeUndefined();
    expect(a.badge!.title).not.toContain('earlier kernel');
    expect(a.badge!.dataset.vramExecutionCount).toBe('1');
  });

  it('omits the peak attribute when the peak is unknown', () => {
    const a = new FakeCell('cell-a').render();
    const { model } = setup([a]);
    model.ingest(cellMsg(makeCellRecord({ gpus: [makeCellGpu({ allocated_peak_bytes: null })] })));
    expect(a.badge!.dataset.vramPeakBytes).toBeUndefined();
  });

  it('waits for a placeholder cell to be rendered (windowed notebook)', async () => {
    const a = new FakeCell('cell-a');
    const { model } = setup([a]);
    model.ingest(cellMsg(makeCellRecord()));
    expect(a.badge).toBeNull();
    a.render();
    await settle();
    expect(a.badge).not.toBeNull();
  });

  it('updates the badge on re-run and touches no other cell', () => {
    const cells = Array.from({ length: 50 }, (_, i) => new FakeCell(`cell-${i + 1}`).render());
    const { model } = setup(cells);
    model.cells.merge(manyRecords(50));
    const other = cells[10].badge!;
    const otherText = other.textContent;
    const node = cells[3].badge!;
    model.ingest(cellMsg(makeCellRecord({ record_id: 51, cell_id: 'cell-4', execution_count: 51 })));
    expect(cells[3].badge).toBe(node); // same node, updated in place
    expect(node.dataset.vramExecutionCount).toBe('51');
    expect(other.textContent).toBe(otherText);
  });

  it('follows a moved cell by its model id, not its index', async () => {
    const a = new FakeCell('cell-a').render();
    const b = new FakeCell('cell-b').render();
    const { notebook, model } = setup([a, b]);
    model.ingest(cellMsg(makeCellRecord({ cell_id: 'cell-a' })));
    // JupyterLab may re-create a moved cell's widget: same model id.
    const moved = new FakeCell('cell-a').render();
    notebook.setCells([b, moved]);
    await settle();
    expect(moved.badge).not.toBeNull();
    expect(b.badge).toBeNull();
    model.ingest(cellMsg(makeCellRecord({ record_id: 2, cell_id: 'cell-a', execution_count: 2 })));
    expect(moved.badge!.dataset.vramExecutionCount).toBe('2');
  });

  it('warns above the threshold of the device total, and on OOM', () => {
    const a = new FakeCell('cell-a').render();
    const b = new FakeCell('cell-b').render();
    const { model } = setup([a, b], { warningThresholdPercent: 50 });
    model.ingest(wire(makeSample()));
    model.ingest(
      cellMsg(makeCellRecord({ gpus: [makeCellGpu({ allocated_peak_bytes: 60 * GiB })] }))
    );
    expect(a.badge!.dataset.vramLevel).toBe('warning');
    expect(a.badge!.classList.contains('jp-vram-warning')).toBe(true);
    model.ingest(cellMsg(oomRecord({ record_id: 2, cell_id: 'cell-b' })));
    expect(b.badge!.dataset.vramLevel).toBe('warning');
    expect(b.badge!.dataset.vramStatus).toBe('error');
  });

  it('renders kernel text as text', () => {
    const a = new FakeCell('cell-a').render();
    const { model } = setup([a]);
    model.ingest(
      cellMsg(makeCellRecord({ status: 'error', error: { type: EVIL, message_head: EVIL, out_of_memory: false } }))
    );
    expect(a.node.querySelector('img')).toBeNull();
    expect(a.badge!.title).toContain(EVIL);
  });

  it('hides and shows every badge with the setting', () => {
    const a = new FakeCell('cell-a').render();
    const { model, badges } = setup([a]);
    model.ingest(cellMsg(makeCellRecord()));
    badges.settings = { ...DEFAULT_SETTINGS, showCellBadges: false };
    expect(a.badge).toBeNull();
    model.ingest(cellMsg(makeCellRecord({ record_id: 2 })));
    expect(a.badge).toBeNull();
    badges.settings = { ...DEFAULT_SETTINGS, showCellBadges: true };
    expect(a.badge).not.toBeNull();
  });

  it('removes badges when the history is cleared', () => {
    const a = new FakeCell('cell-a').render();
    const { model, badges } = setup([a]);
    model.ingest(cellMsg(makeCellRecord()));
    model.cells.clear();
    expect(a.badge).toBeNull();
    expect(badges.badgeCount).toBe(0);
  });

  it('saves numbers to metadata when asked, and renders them as "saved" later', () => {
    const a = new FakeCell('cell-a').render();
    const { model, badges } = setup([a], { storeRecordsInNotebookMetadata: true });
    model.ingest(cellMsg(oomRecord({ execution_count: 4 })));
    const saved = a.model.metadata[CELL_METADATA_KEY] as any;
    expect(saved).toMatchObject({
      version: 1,
      execution_count: 4,
      outcome: 'oom',
      source: 'gpu',
      delta_bytes: GiB,
      peak_bytes: 3 * GiB,
      peak_exact: true
    });
    expect(JSON.stringify(saved)).not.toContain('CUDA');
    badges.dispose();

    // Reopened: no live record, the badge comes from metadata.
    const reopened = new FakeCell('cell-a').render();
    reopened.model.metadata[CELL_METADATA_KEY] = saved;
    setup([reopened]);
    const badge = reopened.badge!;
    expect(badge.dataset.vramSaved).toBe('true');
    expect(badge.dataset.vramPeakBytes).toBe(String(3 * GiB));
    expect(badge.title).toContain('saved with the notebook');
  });

  it('does not write metadata by default', () => {
    const a = new FakeCell('cell-a').render();
    const { model } = setup([a]);
    model.ingest(cellMsg(makeCellRecord()));
    expect(a.model.metadata[CELL_METADATA_KEY]).toBeUndefined();
  });
});

describe('CellHistoryView', () => {
  function setup(records = manyRecords(3), consoleCells: ConsoleCells | null = null) {
    const model = liveModel();
    model.cells.merge(records);
    const revealed: string[] = [];
    const actions = {
      exported: [] as string[],
      cleared: 0,
      found: true
    };
    const view = new CellHistoryView({
      settings: { ...DEFAULT_SETTINGS },
      actions: {
        revealCell: async entry => {
          revealed.push(entry.record.cell_id!);
          return actions.found;
        },
        exportHistory: format => actions.exported.push(format),
        clearHistory: () => actions.cleared++
      },
      consoleCells
    });
    Widget.attach(view, document.body);
    view.model = model;
    MessageLoop.flush();
    return { model, view, revealed, actions };
  }

  it('marks the records of an earlier kernel process with the start they came from', () => {
    const { model, view } = setup(manyRecords(2));
    const note = view.node.querySelector<HTMLElement>('[data-vram-role="earlier-rows-note"]')!;
    expect(note.hidden).toBe(true); // one process so far
    model.ingest(wire(makeHello({ pid: 777, record_series: 'series-2' })));
    model.ingest(cellMsg(makeCellRecord({ record_id: 1, execution_count: 1 })));
    MessageLoop.flush();
    const rows = Array.from(view.node.querySelectorAll<HTMLElement>('[data-vram-role="cell-row"]')).filter(
      row => !row.hidden
    );
    expect(rows).toHaveLength(3);
    const earlier = rows.filter(row => row.classList.contains('jp-vram-CellRow-earlier'));
    expect(earlier).toHaveLength(2);
    expect(earlier.every(row => row.title.includes('From an earlier kernel process (kernel start 1)'))).toBe(true);
    const current = rows.find(row => !row.classList.contains('jp-vram-CellRow-earlier'))!;
    expect(current.dataset.vramKernelStart).toBe('2');
    expect(current.title).not.toContain('earlier kernel');
    expect(note.hidden).toBe(false); // what the dimming means, said once above the table
    expect(note.textContent).toBe(
      'Dimmed rows: cells an earlier kernel process ran (before a restart). Hover one for its kernel start.'
    );
    view.dispose();
  });

  const rows = (view: CellHistoryView) =>
    Array.from(
      view.node.querySelectorAll<HTMLElement>('[data-vram-role="cell-row"]')
    ).filter(r => !r.hidden);

  it('shows one row per run, newest first, with hooks', () => {
    const { view } = setup();
    expect(view.node.dataset.vramRole).toBe('cell-history');
    const r = rows(view);
    expect(r.map(x => x.dataset.vramRecordId)).toEqual(['3', '2', '1']);
    expect(r[0].dataset.vramExecutionCount).toBe('3');
    expect(r[0].textContent).toContain('[3]');
    view.dispose();
  });

  it('renders only the visible rows of 10,000 records', () => {
    const { view, model } = setup([]);
    model.cells.setCapacity(10_000);
    model.cells.merge(manyRecords(10_000));
    const t0 = performance.now();
    view.renderNow();
    const elapsed = performance.now() - t0;
    const visible = rows(view).length;
    expect(visible).toBeGreaterThan(0);
    expect(visible).toBeLessThan(40);
    expect(view.renderedRowCount).toBe(visible);
    const spacer = view.node.querySelector<HTMLElement>('.jp-vram-CellTable-spacer')!;
    expect(spacer.style.height).toBe(`${10_000 * CELL_ROW_HEIGHT}px`);
    expect(elapsed).toBeLessThan(500); // jsdom on a shared box; the browser bench measures 16 ms
    // Scrolling reuses the row nodes.
    const viewport = view.node.querySelector<HTMLElement>('[data-vram-role="cell-rows"]')!;
    viewport.scrollTop = 5000 * CELL_ROW_HEIGHT;
    viewport.dispatchEvent(new Event('scroll'));
    const after = rows(view);
    expect(after.length).toBeLessThan(40);
    const atTop = after.find(r => r.style.top === `${5000 * CELL_ROW_HEIGHT}px`)!;
    expect(atTop.dataset.vramRecordId).toBe('5000'); // newest first
    expect(view.node.querySelectorAll('[data-vram-role="cell-row"]').length).toBeLessThan(40);
    view.dispose();
  });

  it('sorts by every column from its header, with aria-sort', () => {
    const { view } = setup();
    // The figures sort largest first at the first click; the count and the status in reading order.
    const first = { execution_count: 'ascending', delta: 'descending', peak: 'descending', duration: 'descending', status: 'ascending', alive: 'descending' };
    const flip = { ascending: 'descending', descending: 'ascending' };
    for (const [key, direction] of Object.entries(first)) {
      const header = view.node.querySelector<HTMLElement>(
        `[data-vram-role="cell-sort"][data-vram-sort-key="${key}"]`
      )!;
      expect(header.getAttribute('aria-sort')).toBe('none');
      header.click();
      expect(header.getAttribute('aria-sort')).toBe(direction);
      header.click();
      expect(header.getAttribute('aria-sort')).toBe(flip[direction as 'ascending' | 'descending']);
    }
    const count = view.node.querySelector<HTMLElement>('[data-vram-sort-key="execution_count"]')!;
    count.click();
    MessageLoop.flush();
    expect(count.getAttribute('aria-sort')).toBe('ascending');
    expect(view.node.querySelector('[data-vram-sort-key="status"]')!.getAttribute('aria-sort')).toBe('none');
    expect(rows(view).map(x => x.dataset.vramExecutionCount)).toEqual(['1', '2', '3']);
    view.dispose();
  });

  it('goes to the cell on click, and says when it is gone', async () => {
    const { view, revealed, actions } = setup();
    rows(view)[0].click();
    await settle();
    expect(revealed).toEqual(['cell-3']);
    const message = view.node.querySelector<HTMLElement>('[data-vram-role="cell-message"]')!;
    expect(message.hidden).toBe(true);
    actions.found = false;
    rows(view)[1].click();
    await settle();
    expect(message.hidden).toBe(false);
    expect(message.textContent).toContain('[2] is not in this notebook');
    expect(message.textContent).toContain('console');
    view.dispose();
  });

  it('goes to the cell from the keyboard: each row takes focus, Enter and Space activate it', async () => {
    const { view, revealed } = setup();
    const [first, second] = rows(view);
    expect(first.tabIndex).toBe(0);
    expect(second.tabIndex).toBe(0);
    first.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
    await settle();
    expect(revealed).toEqual(['cell-3']);
    const space = new KeyboardEvent('keydown', { key: ' ', bubbles: true, cancelable: true });
    second.dispatchEvent(space);
    await settle();
    expect(revealed).toEqual(['cell-3', 'cell-2']);
    expect(space.defaultPrevented).toBe(true); // no scrolling of the list
    // Other keys are the page's (Tab moves on).
    second.dispatchEvent(new KeyboardEvent('keydown', { key: 'Tab', bubbles: true, cancelable: true }));
    await settle();
    expect(revealed).toHaveLength(2);
    // The sort headers as well.
    const header = view.node.querySelector<HTMLElement>('[data-vram-sort-key="execution_count"]')!;
    expect(header.tabIndex).toBe(0);
    header.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
    expect(header.getAttribute('aria-sort')).toBe('ascending');
    view.dispose();
  });

  it('keeps the keyboard focus on its record when the reused rows shift', async () => {
    const { model, view, revealed } = setup();
    const focused = rows(view).find(r => r.dataset.vramRecordId === '3')!;
    focused.focus();
    expect(document.activeElement).toBe(focused);
    // A new run comes first (newest first): every record moves down a row.
    model.cells.merge(manyRecords(1, 4));
    MessageLoop.flush();
    const active = document.activeElement as HTMLElement;
    expect(active.dataset.vramRole).toBe('cell-row');
    expect(active.dataset.vramRecordId).toBe('3');
    active.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
    await settle();
    expect(revealed).toEqual(['cell-3']);
    view.dispose();
  });

  it('shows console runs without a jump target', async () => {
    const { view, revealed } = setup([makeCellRecord({ cell_id: null, execution_count: 5 })]);
    const row = rows(view)[0];
    expect(row.textContent).toContain('console');
    row.click();
    await settle();
    expect(revealed).toEqual([]);
    expect(view.node.querySelector('[data-vram-role="cell-message"]')!.textContent).toContain('console');
    view.dispose();
  });

  it("labels the runs of a JupyterLab console, which sends its own cell's id, as a console's", async () => {
    const consoles = new FakeConsoles();
    const console = consoles.open(['console-cell-1']);
    const consoleCells = new ConsoleCells(consoles);
    const { view, revealed } = setup(
      [
        makeCellRecord({ record_id: 1, cell_id: 'cell-1', execution_count: 1 }),
        makeCellRecord({ record_id: 2, cell_id: 'console-cell-1', execution_count: 2 }),
        makeCellRecord({ record_id: 3, cell_id: 'console-cell-2', execution_count: 3 })
      ],
      consoleCells
    );
    const countText = () =>
      rows(view).map(r => r.querySelector('.jp-vram-CellCol-execution_count')!.textContent);
    expect(countText()).toEqual(['[3]', '[2] console', '[1]']);
    rows(view)[1].click();
    await settle();
    expect(revealed).toEqual([]);
    const message = view.node.querySelector<HTMLElement>('[data-vram-role="cell-message"]')!;
    expect(message.textContent).toBe('[2] ran in a console: there is no cell to go to.');
    // The console runs a cell whose record is already listed: the row is relabelled.
    console.run('console-cell-2');
    MessageLoop.flush();
    expect(countText()).toEqual(['[3] console', '[2] console', '[1]']);
    expect(rows(view)[0].title).toContain('Run from a console');
    rows(view)[2].click();
    await settle();
    expect(revealed).toEqual(['cell-1']);
    view.dispose();
    consoleCells.dispose();
  });

  it('says the history was cleared, not that no cell has run, once it is', () => {
    const { model, view } = setup();
    const empty = view.node.querySelector<HTMLElement>('.jp-vram-CellHistory-empty')!;
    expect(empty.hidden).toBe(true);
    model.cells.clear();
    MessageLoop.flush();
    expect(empty.hidden).toBe(false);
    expect(empty.textContent).toBe('The cell history was cleared. Cells that run from now on appear here.');
    view.dispose();
    const fresh = setup([]);
    const none = fresh.view.node.querySelector<HTMLElement>('.jp-vram-CellHistory-empty')!;
    expect(none.textContent).toContain('No cell has run since the memory helper started');
    fresh.view.dispose();
  });

  it('wires export and clear buttons', () => {
    const { view, actions } = setup();
    view.node.querySelector<HTMLElement>('[data-vram-role="export-csv"]')!.click();
    view.node.querySelector<HTMLElement>('[data-vram-role="export-json"]')!.click();
    view.node.querySelector<HTMLElement>('[data-vram-role="clear-history"]')!.click();
    expect(actions.exported).toEqual(['csv', 'json']);
    expect(actions.cleared).toBe(1);
    view.dispose();
  });

  it('renders kernel text (error type and message) as text, not HTML', () => {
    const { view } = setup([
      makeCellRecord({ status: 'error', error: { type: EVIL, message_head: EVIL, out_of_memory: false } })
    ]);
    expect(view.node.querySelector('img')).toBeNull();
    const row = rows(view)[0];
    // The error's class name is in the row's tooltip (the status column says "error").
    expect(row.textContent).toContain('error');
    expect(row.title).toContain(EVIL);
    view.dispose();
  });
});

describe('MemorySidebar: Cells tab', () => {
  it('switches between the memory figures and the cell history', () => {
    const monitor = new FakeMonitor();
    const sidebar = new MemorySidebar({ monitor });
    Widget.attach(sidebar, document.body);
    const cellsTab = sidebar.node.querySelector<HTMLElement>('[data-vram-role="cells-tab"]')!;
    const history = sidebar.node.querySelector<HTMLElement>('[data-vram-role="cell-history"]')!;
    expect(sidebar.cells.isHidden).toBe(true);
    cellsTab.click();
    expect(sidebar.tab).toBe('cells');
    expect(sidebar.cells.isHidden).toBe(false);
    expect(sidebar.timeline.isHidden).toBe(true);
    expect(cellsTab.getAttribute('aria-selected')).toBe('true');
    expect(history).toBe(sidebar.cells.node);
    sidebar.dispose();
  });
});
