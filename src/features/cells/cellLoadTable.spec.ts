/**
 * Tests for the Cells tab with GPU load: the load columns (shown only when a
 * record has load figures), their sort, the row's load detail with its
 * hints and the snippet button, and the exports' load fields.
 */
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { CellHistory } from '../../model/CellHistory';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { makeCellRecord } from '../../testing/cellFixtures';
import { liveModel } from '../../testing/cellViewsFixtures';
import { EVIL } from '../../testing/fixtures';
import { makeCellGpuLoad } from '../../testing/loadFixtures';
import { cellHistoryToCsv, cellHistoryToJson, CSV_COLUMNS } from './cellExport';
import { INPUT_BOUND_SNIPPET_ID } from './cellHints';
import { CellHistoryView } from './CellHistoryView';

/**
 * The records of three runs: a busy one, a long idle one that gets the
 * "input-bound?" hint, and one without load figures.
 */
function records() {
  return [
    makeCellRecord({
      record_id: 1,
      execution_count: 1,
      cell_id: 'busy',
      gpu_load: [makeCellGpuLoad({ sm_mean_percent: 90, energy_joules: 50 })]
    }),
    makeCellRecord({
      record_id: 2,
      execution_count: 2,
      cell_id: 'idle',
      duration_s: 30,
      gpu_load: [
        makeCellGpuLoad({
          sm_mean_percent: 8,
          sm_max_percent: 99,
          energy_joules: 900,
          coverage: 'partial',
          covered_s: 20,
          throttle_reasons: []
        })
      ]
    }),
    makeCellRecord({ record_id: 3, execution_count: 3, cell_id: 'cpu' })
  ];
}

function setup(withLoad = true) {
  const model = liveModel();
  model.cells.merge(withLoad ? records() : [makeCellRecord()]);
  const inserted: string[] = [];
  const view = new CellHistoryView({
    settings: { ...DEFAULT_SETTINGS },
    actions: {
      revealCell: async () => true,
      insertSnippet: id => inserted.push(id)
    }
  });
  Widget.attach(view, document.body);
  view.model = model;
  MessageLoop.flush();
  return { model, view, inserted };
}

function row(view: CellHistoryView, count: number): HTMLElement {
  return view.node.querySelector<HTMLElement>(
    `[data-vram-role="cell-row"][data-vram-execution-count="${count}"]`
  )!;
}

function order(view: CellHistoryView): (number | null)[] {
  return view.orderedEntries.map(e => e.record.execution_count);
}

describe('the Cells tab with GPU load', () => {
  afterEach(() => {
    document.body.innerHTML = '';
  });

  it('shows the load columns only when a record has load figures', () => {
    const table = (view: CellHistoryView) =>
      view.node.querySelector('.jp-vram-CellTable')!;
    const without = setup(false).view;
    expect(table(without).classList).toContain('jp-vram-CellTable-noLoad');
    const { view } = setup();
    expect(table(view).classList).not.toContain('jp-vram-CellTable-noLoad');
    const headers = Array.from(
      view.node.querySelectorAll<HTMLElement>('[data-vram-role="cell-sort"]')
    ).map(h => h.dataset.vramSortKey);
    expect(headers).toEqual([
      'execution_count',
      'delta',
      'peak',
      'gpu_mean',
      'gpu_max',
      'energy',
      'duration',
      'status',
      'alive',
      'processes',
      'cluster'
    ]);
  });

  it('fills the columns, "~" where the buffer fell short, and marks the hint', () => {
    const { view } = setup();
    const col = (count: number, key: string) =>
      row(view, count).querySelector(`.jp-vram-CellCol-${key}`)!;
    expect(col(1, 'gpu_mean').textContent).toBe('90%');
    expect(col(2, 'gpu_mean').textContent).toBe('~8%');
    expect(col(2, 'gpu_mean').classList).toContain('jp-vram-warning');
    expect(col(2, 'gpu_max').textContent).toBe('99%');
    expect(col(2, 'energy').textContent).toBe('900 J');
    expect(col(3, 'gpu_mean').textContent).toBe('\u2014');
    expect(row(view, 2).dataset.vramHints).toBe('input-bound');
    expect(row(view, 2).dataset.vramGpuCoverage).toBe('partial');
    expect(row(view, 2).title).toMatch(
      /covered only the last 20 s of the cell's 30 s/
    );
    expect(row(view, 2).title).toMatch(/Input-bound\?/);
  });

  it('sorts by mean and highest utilisation and by energy, unknown last', () => {
    const { view } = setup();
    view.sortBy('gpu_mean');
    expect(order(view)).toEqual([1, 2, 3]);
    view.sortBy('gpu_mean');
    expect(order(view)).toEqual([2, 1, 3]);
    view.sortBy('gpu_max');
    expect(order(view)).toEqual([2, 1, 3]);
    view.sortBy('energy');
    expect(order(view)).toEqual([2, 1, 3]);
    view.sortBy('energy', 'ascending');
    expect(order(view)).toEqual([1, 2, 3]);
  });

  it("shows an activated row's load and hints, the snippet one click away", async () => {
    const { view, inserted } = setup();
    const detail = view.node.querySelector<HTMLElement>(
      '[data-vram-role="cell-load-detail"]'
    )!;
    expect(detail.hidden).toBe(true);
    row(view, 2).click();
    await Promise.resolve();
    expect(detail.hidden).toBe(false);
    expect(detail.textContent).toMatch(/\[2\] GPU load/);
    const hint = detail.querySelector<HTMLElement>(
      '[data-vram-role="cell-hint"]'
    )!;
    expect(hint.dataset.vramHint).toBe('input-bound');
    detail
      .querySelector<HTMLButtonElement>(
        '[data-vram-role="insert-dataloader-snippet"]'
      )!
      .click();
    expect(inserted).toEqual([INPUT_BOUND_SNIPPET_ID]);
    // A row without load figures has no detail.
    row(view, 3).click();
    expect(detail.hidden).toBe(true);
  });

  it('keeps text from the kernel as text in the detail', () => {
    const model = liveModel();
    model.cells.merge([
      makeCellRecord({
        gpu_load: [
          makeCellGpuLoad({ throttle_reasons: [EVIL], coverage: EVIL })
        ]
      })
    ]);
    const view = new CellHistoryView({ settings: { ...DEFAULT_SETTINGS } });
    Widget.attach(view, document.body);
    view.model = model;
    MessageLoop.flush();
    row(view, 1).click();
    const detail = view.node.querySelector<HTMLElement>(
      '[data-vram-role="cell-load-detail"]'
    )!;
    expect(detail.textContent).toContain(EVIL);
    expect(detail.querySelector('img')).toBeNull();
  });
});

describe('the exports with GPU load', () => {
  function entries() {
    const history = new CellHistory();
    history.startSession();
    history.merge(records());
    return history.entries;
  }

  it('has the load columns in CSV, empty where a record has none', () => {
    const lines = cellHistoryToCsv(entries()).trim().split('\r\n');
    const header = lines[0].split(',');
    // The load has six columns, before the processes' (see cellExport.ts).
    const start = header.indexOf('gpu_util_mean_percent');
    const load = (line: string) => line.split(',').slice(start, start + 6);
    expect(header.slice(start, start + 6)).toEqual([
      'gpu_util_mean_percent',
      'gpu_util_max_percent',
      'gpu_energy_joules',
      'gpu_load_coverage',
      'gpu_throttle_reasons',
      'hints'
    ]);
    expect(header).toEqual([...CSV_COLUMNS]);
    expect(load(lines[1])).toEqual([
      '90',
      '97',
      '50',
      'full',
      'sw_power_cap',
      'throttled'
    ]);
    expect(load(lines[2])).toEqual([
      '8',
      '99',
      '900',
      'partial',
      '',
      'input-bound'
    ]);
    expect(load(lines[3])).toEqual(['', '', '', '', '', '']);
  });

  it('has the records as sent and the derived load figures in JSON', () => {
    const json = JSON.parse(
      cellHistoryToJson(entries(), {
        notebook: 'a.ipynb',
        exportedAt: new Date(0)
      })
    );
    const [busy, idle, cpu] = json.records;
    expect(busy.gpu_load[0].energy_method).toBe('energy_counter');
    expect(idle.derived).toMatchObject({
      gpu_util_mean_percent: 8,
      gpu_util_max_percent: 99,
      gpu_energy_joules: 900,
      gpu_load_coverage: 'partial',
      hints: ['input-bound']
    });
    expect(cpu.derived.gpu_util_mean_percent).toBeUndefined();
  });
});
