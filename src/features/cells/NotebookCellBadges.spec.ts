/**
 * Tests for the memory badge on each executed cell (NotebookCellBadges), and
 * for the figures saved in the cell's metadata.
 */
import { PromiseDelegate } from '@lumino/coreutils';
import { Signal } from '@lumino/signaling';

import { CELL_METADATA_KEY } from './cellMetadata';
import { DEFAULT_SETTINGS, VramSettings } from '../../settings/settings';
import { NotebookCellBadges } from './NotebookCellBadges';
import {
  makeCellGpu,
  makeCellRecord,
  manyRecords,
  oomRecord
} from '../../testing/cellFixtures';
import { EVIL, GiB, makeHello, makeSample, wire } from '../../testing/fixtures';
import { settle } from '../../testing/fakeKernel';
import { cellMsg, liveModel } from '../../testing/cellViewsFixtures';

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
  /** Renders the cell, as the notebook does once it is scrolled into view. */
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
  /** Sets the notebook's widgets after cells were inserted, moved or deleted. */
  setCells(widgets: FakeCell[]) {
    this.widgets = widgets;
    this.model.cells.changed.emit({});
  }
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

  it('marks a badge of an earlier kernel process, and of a kernel that sends no records', () => {
    const a = new FakeCell('cell-a').render();
    const { model } = setup([a]);
    model.ingest(
      cellMsg(
        makeCellRecord({ record_id: 1, execution_count: 7, cell_id: 'cell-a' })
      )
    );
    expect(a.badge!.dataset.vramEarlier).toBeUndefined();
    // The notebook switches to a kernel without the helper, whose runs bring
    // no figures.
    model.startKernelSession();
    model.setState('non-python', 'This kernel runs echo.');
    expect(a.badge!.dataset.vramEarlier).toBe('true');
    expect(a.badge!.classList.contains('jp-vram-CellBadge-earlier')).toBe(true);
    expect(a.badge!.title).toContain('From an earlier kernel process');
    // Back on a Python kernel, a new process has its own record series.
    model.setState('kernel-starting');
    model.ingest(wire(makeHello({ pid: 999, record_series: 'series-2' })));
    // The badge still shows the first process's figures.
    expect(a.badge!.dataset.vramEarlier).toBe('true');
    model.ingest(
      cellMsg(
        makeCellRecord({ record_id: 1, execution_count: 1, cell_id: 'cell-a' })
      )
    );
    expect(a.badge!.dataset.vramEarlier).toBeUndefined();
    expect(a.badge!.title).not.toContain('earlier kernel');
    expect(a.badge!.dataset.vramExecutionCount).toBe('1');
  });

  it('omits the peak attribute when the peak is unknown', () => {
    const a = new FakeCell('cell-a').render();
    const { model } = setup([a]);
    model.ingest(
      cellMsg(
        makeCellRecord({ gpus: [makeCellGpu({ allocated_peak_bytes: null })] })
      )
    );
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
    const cells = Array.from({ length: 50 }, (_, i) =>
      new FakeCell(`cell-${i + 1}`).render()
    );
    const { model } = setup(cells);
    model.cells.merge(manyRecords(50));
    const other = cells[10].badge!;
    const otherText = other.textContent;
    const node = cells[3].badge!;
    model.ingest(
      cellMsg(
        makeCellRecord({
          record_id: 51,
          cell_id: 'cell-4',
          execution_count: 51
        })
      )
    );
    expect(cells[3].badge).toBe(node); // The same node is updated in place.
    expect(node.dataset.vramExecutionCount).toBe('51');
    expect(other.textContent).toBe(otherText);
  });

  it('follows a moved cell by its model id, not its index', async () => {
    const a = new FakeCell('cell-a').render();
    const b = new FakeCell('cell-b').render();
    const { notebook, model } = setup([a, b]);
    model.ingest(cellMsg(makeCellRecord({ cell_id: 'cell-a' })));
    // JupyterLab may create a moved cell's widget again, with the same model
    // id.
    const moved = new FakeCell('cell-a').render();
    notebook.setCells([b, moved]);
    await settle();
    expect(moved.badge).not.toBeNull();
    expect(b.badge).toBeNull();
    model.ingest(
      cellMsg(
        makeCellRecord({ record_id: 2, cell_id: 'cell-a', execution_count: 2 })
      )
    );
    expect(moved.badge!.dataset.vramExecutionCount).toBe('2');
  });

  it('warns above the threshold of the device total, and on OOM', () => {
    const a = new FakeCell('cell-a').render();
    const b = new FakeCell('cell-b').render();
    const { model } = setup([a, b], { warningThresholdPercent: 50 });
    model.ingest(wire(makeSample()));
    model.ingest(
      cellMsg(
        makeCellRecord({
          gpus: [makeCellGpu({ allocated_peak_bytes: 60 * GiB })]
        })
      )
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
      cellMsg(
        makeCellRecord({
          status: 'error',
          error: { type: EVIL, message_head: EVIL, out_of_memory: false }
        })
      )
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
    const { model, badges } = setup([a], {
      storeRecordsInNotebookMetadata: true
    });
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

    // Once the notebook is reopened there is no live record, so the badge
    // comes from the metadata.
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
