/**
 * Tests for the Cells tab's table of runs (CellHistoryView): virtualised,
 * sortable, and a way back to each cell.
 */
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { ConsoleCells } from '../../model/ConsoleCells';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { CELL_ROW_HEIGHT } from './CellHistoryRow';
import { CellHistoryView } from './CellHistoryView';
import { makeCellRecord, manyRecords } from '../../testing/cellFixtures';
import { EVIL, makeHello, wire } from '../../testing/fixtures';
import { settle } from '../../testing/fakeKernel';
import { FakeConsoles } from '../../testing/fakeConsoles';
import { cellMsg, liveModel } from '../../testing/cellViewsFixtures';

describe('CellHistoryView', () => {
  function setup(
    records = manyRecords(3),
    consoleCells: ConsoleCells | null = null
  ) {
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
    const note = view.node.querySelector<HTMLElement>(
      '[data-vram-role="earlier-rows-note"]'
    )!;
    expect(note.hidden).toBe(true); // There is one kernel process so far.
    model.ingest(wire(makeHello({ pid: 777, record_series: 'series-2' })));
    model.ingest(cellMsg(makeCellRecord({ record_id: 1, execution_count: 1 })));
    MessageLoop.flush();
    const rows = Array.from(
      view.node.querySelectorAll<HTMLElement>('[data-vram-role="cell-row"]')
    ).filter(row => !row.hidden);
    expect(rows).toHaveLength(3);
    const earlier = rows.filter(row =>
      row.classList.contains('jp-vram-CellRow-earlier')
    );
    expect(earlier).toHaveLength(2);
    expect(
      earlier.every(row =>
        row.title.includes('From an earlier kernel process (kernel start 1)')
      )
    ).toBe(true);
    const current = rows.find(
      row => !row.classList.contains('jp-vram-CellRow-earlier')
    )!;
    expect(current.dataset.vramKernelStart).toBe('2');
    expect(current.title).not.toContain('earlier kernel');
    // What the dimming means is said once, above the table.
    expect(note.hidden).toBe(false);
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
    const spacer = view.node.querySelector<HTMLElement>(
      '.jp-vram-CellTable-spacer'
    )!;
    expect(spacer.style.height).toBe(`${10_000 * CELL_ROW_HEIGHT}px`);
    // The bound is loose for jsdom on a shared machine; the browser
    // benchmark measures 16 ms.
    expect(elapsed).toBeLessThan(500);
    // Scrolling reuses the row nodes.
    const viewport = view.node.querySelector<HTMLElement>(
      '[data-vram-role="cell-rows"]'
    )!;
    viewport.scrollTop = 5000 * CELL_ROW_HEIGHT;
    viewport.dispatchEvent(new Event('scroll'));
    const after = rows(view);
    expect(after.length).toBeLessThan(40);
    const atTop = after.find(
      r => r.style.top === `${5000 * CELL_ROW_HEIGHT}px`
    )!;
    expect(atTop.dataset.vramRecordId).toBe('5000'); // The newest come first.
    expect(
      view.node.querySelectorAll('[data-vram-role="cell-row"]').length
    ).toBeLessThan(40);
    view.dispose();
  });

  it('sorts by every column from its header, with aria-sort', () => {
    const { view } = setup();
    // The figures sort largest first at the first click, and the count and
    // the status in reading order.
    const first = {
      execution_count: 'ascending',
      delta: 'descending',
      peak: 'descending',
      duration: 'descending',
      status: 'ascending',
      alive: 'descending'
    };
    const flip = { ascending: 'descending', descending: 'ascending' };
    for (const [key, direction] of Object.entries(first)) {
      const header = view.node.querySelector<HTMLElement>(
        `[data-vram-role="cell-sort"][data-vram-sort-key="${key}"]`
      )!;
      expect(header.getAttribute('aria-sort')).toBe('none');
      header.click();
      expect(header.getAttribute('aria-sort')).toBe(direction);
      header.click();
      expect(header.getAttribute('aria-sort')).toBe(
        flip[direction as 'ascending' | 'descending']
      );
    }
    const count = view.node.querySelector<HTMLElement>(
      '[data-vram-sort-key="execution_count"]'
    )!;
    count.click();
    MessageLoop.flush();
    expect(count.getAttribute('aria-sort')).toBe('ascending');
    expect(
      view.node
        .querySelector('[data-vram-sort-key="status"]')!
        .getAttribute('aria-sort')
    ).toBe('none');
    expect(rows(view).map(x => x.dataset.vramExecutionCount)).toEqual([
      '1',
      '2',
      '3'
    ]);
    view.dispose();
  });

  it('goes to the cell on click, and says when it is gone', async () => {
    const { view, revealed, actions } = setup();
    rows(view)[0].click();
    await settle();
    expect(revealed).toEqual(['cell-3']);
    const message = view.node.querySelector<HTMLElement>(
      '[data-vram-role="cell-message"]'
    )!;
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
    first.dispatchEvent(
      new KeyboardEvent('keydown', {
        key: 'Enter',
        bubbles: true,
        cancelable: true
      })
    );
    await settle();
    expect(revealed).toEqual(['cell-3']);
    const space = new KeyboardEvent('keydown', {
      key: ' ',
      bubbles: true,
      cancelable: true
    });
    second.dispatchEvent(space);
    await settle();
    expect(revealed).toEqual(['cell-3', 'cell-2']);
    expect(space.defaultPrevented).toBe(true); // Space does not scroll the list.
    // Other keys are left to the page, so that Tab moves on.
    second.dispatchEvent(
      new KeyboardEvent('keydown', {
        key: 'Tab',
        bubbles: true,
        cancelable: true
      })
    );
    await settle();
    expect(revealed).toHaveLength(2);
    // The sort headers take the keys as well.
    const header = view.node.querySelector<HTMLElement>(
      '[data-vram-sort-key="execution_count"]'
    )!;
    expect(header.tabIndex).toBe(0);
    header.dispatchEvent(
      new KeyboardEvent('keydown', {
        key: 'Enter',
        bubbles: true,
        cancelable: true
      })
    );
    expect(header.getAttribute('aria-sort')).toBe('ascending');
    view.dispose();
  });

  it('keeps the keyboard focus on its record when the reused rows shift', async () => {
    const { model, view, revealed } = setup();
    const focused = rows(view).find(r => r.dataset.vramRecordId === '3')!;
    focused.focus();
    expect(document.activeElement).toBe(focused);
    // A new run comes first, so every record moves down a row.
    model.cells.merge(manyRecords(1, 4));
    MessageLoop.flush();
    const active = document.activeElement as HTMLElement;
    expect(active.dataset.vramRole).toBe('cell-row');
    expect(active.dataset.vramRecordId).toBe('3');
    active.dispatchEvent(
      new KeyboardEvent('keydown', {
        key: 'Enter',
        bubbles: true,
        cancelable: true
      })
    );
    await settle();
    expect(revealed).toEqual(['cell-3']);
    view.dispose();
  });

  it('shows console runs without a jump target', async () => {
    const { view, revealed } = setup([
      makeCellRecord({ cell_id: null, execution_count: 5 })
    ]);
    const row = rows(view)[0];
    expect(row.textContent).toContain('console');
    row.click();
    await settle();
    expect(revealed).toEqual([]);
    expect(
      view.node.querySelector('[data-vram-role="cell-message"]')!.textContent
    ).toContain('console');
    view.dispose();
  });

  it("labels the runs of a JupyterLab console, which sends its own cell's id, as a console's", async () => {
    const consoles = new FakeConsoles();
    const console = consoles.open(['console-cell-1']);
    const consoleCells = new ConsoleCells(consoles);
    const { view, revealed } = setup(
      [
        makeCellRecord({ record_id: 1, cell_id: 'cell-1', execution_count: 1 }),
        makeCellRecord({
          record_id: 2,
          cell_id: 'console-cell-1',
          execution_count: 2
        }),
        makeCellRecord({
          record_id: 3,
          cell_id: 'console-cell-2',
          execution_count: 3
        })
      ],
      consoleCells
    );
    const countText = () =>
      rows(view).map(
        r => r.querySelector('.jp-vram-CellCol-execution_count')!.textContent
      );
    expect(countText()).toEqual(['[3]', '[2] console', '[1]']);
    rows(view)[1].click();
    await settle();
    expect(revealed).toEqual([]);
    const message = view.node.querySelector<HTMLElement>(
      '[data-vram-role="cell-message"]'
    )!;
    expect(message.textContent).toBe(
      '[2] ran in a console: there is no cell to go to.'
    );
    // The console runs a cell whose record is already listed, and the row is
    // labelled again.
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
    const empty = view.node.querySelector<HTMLElement>(
      '.jp-vram-CellHistory-empty'
    )!;
    expect(empty.hidden).toBe(true);
    model.cells.clear();
    MessageLoop.flush();
    expect(empty.hidden).toBe(false);
    expect(empty.textContent).toBe(
      'The cell history was cleared. Cells that run from now on appear here.'
    );
    view.dispose();
    const fresh = setup([]);
    const none = fresh.view.node.querySelector<HTMLElement>(
      '.jp-vram-CellHistory-empty'
    )!;
    expect(none.textContent).toContain(
      'No cell has run since the memory helper started'
    );
    fresh.view.dispose();
  });

  it('wires export and clear buttons', () => {
    const { view, actions } = setup();
    view.node
      .querySelector<HTMLElement>('[data-vram-role="export-csv"]')!
      .click();
    view.node
      .querySelector<HTMLElement>('[data-vram-role="export-json"]')!
      .click();
    view.node
      .querySelector<HTMLElement>('[data-vram-role="clear-history"]')!
      .click();
    expect(actions.exported).toEqual(['csv', 'json']);
    expect(actions.cleared).toBe(1);
    view.dispose();
  });

  it('renders kernel text (error type and message) as text, not HTML', () => {
    const { view } = setup([
      makeCellRecord({
        status: 'error',
        error: { type: EVIL, message_head: EVIL, out_of_memory: false }
      })
    ]);
    expect(view.node.querySelector('img')).toBeNull();
    const row = rows(view)[0];
    // The error's class name is in the row's tooltip, while the status column
    // says "error".
    expect(row.textContent).toContain('error');
    expect(row.title).toContain(EVIL);
    view.dispose();
  });
});
