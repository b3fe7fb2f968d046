/**
 * Tests for the kernel's processes around a cell: the badge's words, the
 * tooltip and the exports.
 */
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { processesAlongside } from './cellProcessFigures';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { liveModel } from '../../testing/cellViewsFixtures';
import { CellHistoryView } from './CellHistoryView';
import { cellSortValue } from './cellSort';
import { summarizeCellRecord } from '../../model/cellFigures';
import { historyEntry, makeRamRecord } from '../../testing/cellFixtures';
import { MiB } from '../../testing/fixtures';
import { makeCellProcesses } from '../../testing/processFixtures';
import { cellHistoryToCsv, cellHistoryToJson, CSV_COLUMNS } from './cellExport';
import { describeCellRecord, formatCellBadge } from './cellFormat';

const entry = historyEntry;

describe("the kernel's processes around a cell", () => {
  it('adds what they hold after the cell to the badge', () => {
    const r = makeRamRecord({ processes: makeCellProcesses() });
    const s = summarizeCellRecord(r);
    const p = processesAlongside(r);
    expect(p).toMatchObject({
      hostDeltaBytes: 400 * MiB,
      hostSampledMaxBytes: 500 * MiB,
      processesAfter: 1
    });
    expect(formatCellBadge(s, 'binary', true, p)).toBe(
      '+20 MiB \u00b7 peak 600 MiB \u00b7 processes +400 MiB \u00b7 2.1 s'
    );
  });

  it('shows their sampled maximum where they gave it back, and what they moved on the GPU', () => {
    const r = makeRamRecord({
      processes: makeCellProcesses({
        host_after_bytes: 0,
        processes_after: 0,
        gpus: [
          {
            index: 0,
            before_bytes: 0,
            after_bytes: 1024 * MiB,
            sampled_max_bytes: 1024 * MiB
          }
        ]
      })
    });
    expect(
      formatCellBadge(
        summarizeCellRecord(r),
        'binary',
        true,
        processesAlongside(r)
      )
    ).toContain('processes max ~500 MiB, GPU +1 GiB');
  });

  it('leaves the badge alone where they hold little (a resource tracker)', () => {
    const small = makeCellProcesses({
      host_before_bytes: 6 * MiB,
      host_after_bytes: 6 * MiB,
      host_sampled_max_bytes: 6 * MiB
    });
    expect(processesAlongside({ processes: small })).toBeNull();
    expect(processesAlongside({})).toBeNull();
  });

  it('names the maximum as sampled, with the readings and their spacing, in the tooltip', () => {
    const r = makeRamRecord({ processes: makeCellProcesses() });
    expect(describeCellRecord(r, summarizeCellRecord(r))).toContain(
      "The kernel's processes: 0 \u2192 1; host 0 B \u2192 400 MiB, sampled maximum ~500 MiB (5 readings, 1.0 s apart)"
    );
  });

  it('exports their figures, empty where a record has none', () => {
    const csv = cellHistoryToCsv([
      entry(makeRamRecord({ record_id: 1, processes: makeCellProcesses() })),
      entry(makeRamRecord({ record_id: 2 }))
    ]).split('\r\n');
    const at = (line: string, column: string) =>
      line.split(',')[
        CSV_COLUMNS.indexOf(column as (typeof CSV_COLUMNS)[number])
      ];
    expect(at(csv[1], 'processes_after')).toBe('1');
    expect(at(csv[1], 'processes_host_after_bytes')).toBe(String(400 * MiB));
    expect(at(csv[1], 'processes_host_sampled_max_bytes')).toBe(
      String(500 * MiB)
    );
    expect(at(csv[1], 'processes_sample_spacing_s')).toBe('1');
    expect(at(csv[2], 'processes_after')).toBe('');
    const json = JSON.parse(
      cellHistoryToJson(
        [entry(makeRamRecord({ processes: makeCellProcesses() }))],
        {
          notebook: null,
          exportedAt: new Date(0)
        }
      )
    );
    expect(json.records[0].processes.host_after_bytes).toBe(400 * MiB);
    expect(json.records[0].derived.processes_host_delta_bytes).toBe(400 * MiB);
  });

  it('gets a column of the Cells tab while a record has them, sortable', () => {
    const model = liveModel();
    const view = new CellHistoryView({ settings: { ...DEFAULT_SETTINGS } });
    Widget.attach(view, document.body);
    view.model = model;
    model.cells.merge([makeRamRecord({ record_id: 1 })]);
    MessageLoop.flush();
    const table = view.node.querySelector<HTMLElement>('.jp-vram-CellTable')!;
    expect(table.classList).toContain('jp-vram-CellTable-noProcesses');
    model.cells.merge([
      makeRamRecord({ record_id: 2, processes: makeCellProcesses() })
    ]);
    view.renderNow();
    expect(table.classList).not.toContain('jp-vram-CellTable-noProcesses');
    const row = view.node.querySelector<HTMLElement>(
      '[data-vram-record-id="2"]'
    )!;
    expect(row.querySelector('.jp-vram-CellCol-processes')!.textContent).toBe(
      '+400 MiB'
    );
    expect(row.title).toContain(
      'sampled maximum ~500 MiB (5 readings, 1.0 s apart)'
    );
    expect(
      cellSortValue(
        entry(makeRamRecord({ processes: makeCellProcesses() })),
        'processes'
      )
    ).toBe(400 * MiB);
    expect(cellSortValue(entry(makeRamRecord()), 'processes')).toBeNull();
    view.dispose();
  });
});
