/**
 * The cluster's workers around a cell: the badge adds their change and
 * sampled maximum, named "sampled"; the tooltip names the readings and the
 * cluster; the CSV carries them; a record without the key (an older
 * helper, or no cluster) changes nothing.
 */
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import { summarizeCellRecord } from '../../model/cellFigures';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { liveModel } from '../../testing/cellViewsFixtures';
import { CellHistoryView } from './CellHistoryView';
import { cellSortValue } from './cellSort';
import { historyEntry, makeRamRecord } from '../../testing/cellFixtures';
import { makeCellCluster } from '../../testing/clusterFixtures';
import { createCellBadgeNode, renderCellBadge } from './CellBadge';
import { clusterAlongside } from './cellClusterFigures';
import { cellHistoryToCsv, CSV_COLUMNS } from './cellExport';
import { describeCellRecord, formatCellBadge } from './cellFormat';

const GiB = 2 ** 30;

describe("the cluster's workers around a cell", () => {
  it('works out the change and the sampled maximum', () => {
    const record = makeRamRecord({ cluster: makeCellCluster({ events: [3] }) });
    expect(clusterAlongside(record)).toEqual({
      deltaBytes: GiB,
      sampledMaxBytes: 9 * GiB,
      workersBefore: 4,
      workersAfter: 4,
      samples: 6,
      sampleSpacingS: 2,
      events: 1
    });
    expect(clusterAlongside(makeRamRecord())).toBeNull();
  });

  it('adds them to the badge, with the maximum named sampled', () => {
    const record = makeRamRecord({ cluster: makeCellCluster() });
    const summary = summarizeCellRecord(record);
    const text = formatCellBadge(
      summary,
      'binary',
      true,
      null,
      [],
      clusterAlongside(record)
    );
    expect(text).toContain('cluster +1 GiB, sampled max ~9 GiB');
    const node = createCellBadgeNode();
    renderCellBadge(node, {
      summary,
      executionCount: 1,
      title: '',
      level: 'normal',
      saved: false,
      earlier: false,
      units: 'binary',
      cluster: clusterAlongside(record)
    });
    expect(node.textContent).toContain('cluster +1 GiB');
    expect(node.dataset.vramClusterDeltaBytes).toBe(String(GiB));
    expect(node.dataset.vramClusterMaxBytes).toBe(String(9 * GiB));
  });

  it('leaves a record without cluster figures as it was', () => {
    const record = makeRamRecord();
    const summary = summarizeCellRecord(record);
    expect(formatCellBadge(summary)).not.toContain('cluster');
    expect(describeCellRecord(record, summary)).not.toContain('cluster');
  });

  it('names the cluster, the readings and the events in the tooltip', () => {
    const record = makeRamRecord({
      cluster: makeCellCluster({ events: [1, 2] })
    });
    const text = describeCellRecord(record, summarizeCellRecord(record));
    expect(text).toContain(
      "The cluster's workers (tcp://127.0.0.1:8786): 4 \u2192 4; memory 4 GiB \u2192 5 GiB (+1 GiB), sampled maximum ~9 GiB (6 readings, 2.0 s apart; a rise between two readings is missed)"
    );
    expect(text).toContain(
      '2 cluster events while it ran (see the Cluster section)'
    );
  });

  it('exports them in the CSV, empty where a record has none', () => {
    const csv = cellHistoryToCsv([
      historyEntry(makeRamRecord({ record_id: 1, cluster: makeCellCluster() })),
      historyEntry(makeRamRecord({ record_id: 2 }))
    ]).split('\r\n');
    const at = (line: string, column: (typeof CSV_COLUMNS)[number]) =>
      line.split(',')[CSV_COLUMNS.indexOf(column)];
    expect(at(csv[1], 'cluster_after_bytes')).toBe(String(5 * GiB));
    expect(at(csv[1], 'cluster_sampled_max_bytes')).toBe(String(9 * GiB));
    expect(at(csv[2], 'cluster_after_bytes')).toBe('');
  });

  it('gets a column of the Cells tab while a record has them, sortable by the change', () => {
    const model = liveModel();
    const view = new CellHistoryView({ settings: { ...DEFAULT_SETTINGS } });
    Widget.attach(view, document.body);
    view.model = model;
    model.cells.merge([makeRamRecord({ record_id: 1 })]);
    MessageLoop.flush();
    const table = view.node.querySelector<HTMLElement>('.jp-vram-CellTable')!;
    expect(table.classList).toContain('jp-vram-CellTable-noCluster');
    model.cells.merge([
      makeRamRecord({ record_id: 2, cluster: makeCellCluster() })
    ]);
    view.renderNow();
    expect(table.classList).not.toContain('jp-vram-CellTable-noCluster');
    const cell = (id: number) =>
      view.node
        .querySelector<HTMLElement>(`[data-vram-record-id="${id}"]`)!
        .querySelector('.jp-vram-CellCol-cluster')!.textContent;
    expect(cell(2)).toBe('+1 GiB');
    expect(cell(1)).toBe('');
    expect(
      cellSortValue(
        historyEntry(makeRamRecord({ cluster: makeCellCluster() })),
        'cluster'
      )
    ).toBe(GiB);
    expect(cellSortValue(historyEntry(makeRamRecord()), 'cluster')).toBeNull();
    view.dispose();
  });
});
