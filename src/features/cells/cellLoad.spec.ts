/** Tests for a cell's GPU load: the summary over its GPUs, the hints and their text. */
import { makeCellRecord } from '../../testing/cellFixtures';
import { makeCellGpuLoad } from '../../testing/loadFixtures';
import { createCellBadgeNode, renderCellBadge } from './CellBadge';
import { summarizeCellRecord } from '../../model/cellFigures';
import {
  cellHintKinds,
  cellHints,
  cellHintText,
  INPUT_BOUND_BELOW_MEAN_PERCENT,
  INPUT_BOUND_MIN_DURATION_S
} from './cellHints';
import { cellLoadOf } from './cellLoad';
import { cellLoadLines, coverageText, formatBadgeLoad } from './cellLoadText';

/** A record of a 20 s cell with `load` as its only GPU's entry. */
function longCell(load = makeCellGpuLoad(), durationS = 20) {
  return makeCellRecord({ duration_s: durationS, gpu_load: [load] });
}

describe('cellLoadOf', () => {
  it('has nothing for a record without load figures', () => {
    expect(cellLoadOf(makeCellRecord())).toBeNull();
    expect(cellLoadOf(makeCellRecord({ gpu_load: [] }))).toBeNull();
  });

  it('takes the busiest GPU for utilisation and sums the energy', () => {
    const record = makeCellRecord({
      gpu_load: [
        makeCellGpuLoad({
          index: 0,
          sm_mean_percent: 20,
          sm_max_percent: 99,
          energy_joules: 100,
          coverage: 'full'
        }),
        makeCellGpuLoad({
          index: 1,
          sm_mean_percent: 60,
          sm_max_percent: 70,
          energy_joules: 50,
          coverage: 'partial',
          covered_s: 1.5,
          throttle_reasons: ['hw_thermal_slowdown', 'sw_power_cap']
        })
      ]
    });
    const load = cellLoadOf(record)!;
    expect(load.meanPercent).toBe(60);
    expect(load.maxPercent).toBe(99);
    expect(load.energyJoules).toBe(150);
    expect(load.coverage).toBe('partial');
    expect(load.coveredS).toBe(1.5);
    expect(load.throttleReasons.sort()).toEqual([
      'hw_thermal_slowdown',
      'sw_power_cap'
    ]);
  });

  it('keeps unknown figures unknown', () => {
    const load = cellLoadOf(
      longCell(
        makeCellGpuLoad({
          sm_mean_percent: null,
          sm_max_percent: null,
          energy_joules: null,
          coverage: 'none',
          covered_s: 0,
          unavailable: { sm_mean_percent: 'no_samples' }
        })
      )
    )!;
    expect(load.meanPercent).toBeNull();
    expect(load.energyJoules).toBeNull();
    expect(load.coverage).toBe('none');
    expect(formatBadgeLoad(load)).toBeNull();
  });
});

describe('cellHints', () => {
  const idle = makeCellGpuLoad({
    sm_mean_percent: 12,
    sm_max_percent: 40,
    throttle_reasons: []
  });

  it('asks "input-bound?" of a long cell that left the GPU mostly idle', () => {
    const record = longCell(idle);
    const hints = cellHints(record, cellLoadOf(record));
    expect(hints).toEqual([
      { kind: 'input-bound', meanPercent: 12, durationS: 20, partial: false }
    ]);
    expect(cellHintText(hints[0])).toMatch(
      /^Input-bound\? The GPU was busy 12%/
    );
    expect(cellHintKinds(hints)).toBe('input-bound');
  });

  it('spares short cells, busy cells and cells that ran nothing on the GPU', () => {
    const cases = [
      longCell(idle, INPUT_BOUND_MIN_DURATION_S - 0.1),
      longCell(
        makeCellGpuLoad({
          sm_mean_percent: INPUT_BOUND_BELOW_MEAN_PERCENT,
          throttle_reasons: []
        })
      ),
      longCell(
        makeCellGpuLoad({
          sm_mean_percent: 0,
          sm_max_percent: 0,
          throttle_reasons: []
        })
      )
    ];
    for (const record of cases) {
      expect(cellHints(record, cellLoadOf(record))).toEqual([]);
    }
  });

  it('says when the mean rests on less than the whole cell', () => {
    const record = longCell({ ...idle, coverage: 'partial', covered_s: 8 });
    const [hint] = cellHints(record, cellLoadOf(record));
    expect(cellHintText(hint)).toMatch(/did not cover the whole cell/);
  });

  it('says which of power or heat held the clocks back', () => {
    const throttled = (reasons: string[]) => {
      const record = longCell(makeCellGpuLoad({ throttle_reasons: reasons }));
      return cellHints(record, cellLoadOf(record));
    };
    expect(throttled(['sw_power_cap'])).toEqual([
      { kind: 'throttled', causes: ['power'] }
    ]);
    expect(
      throttled(['hw_thermal_slowdown', 'hw_power_brake_slowdown'])
    ).toEqual([{ kind: 'throttled', causes: ['power', 'heat'] }]);
    expect(throttled(['hw_slowdown'])).toEqual([
      { kind: 'throttled', causes: ['power-or-heat'] }
    ]);
    expect(throttled(['gpu_idle', 'sync_boost'])).toEqual([]);
    expect(cellHintText(throttled(['sw_thermal_slowdown'])[0])).toBe(
      'Throttled: the GPU held its clocks back for heat while the cell ran.'
    );
  });
});

describe('the text of a cell load', () => {
  it('puts "GPU 93%" on the badge, "~" where the buffer fell short', () => {
    const full = cellLoadOf(longCell(makeCellGpuLoad({ sm_mean_percent: 93 })));
    expect(formatBadgeLoad(full)).toBe('GPU 93%');
    const partial = cellLoadOf(
      longCell(makeCellGpuLoad({ sm_mean_percent: 93, coverage: 'partial' }))
    );
    expect(formatBadgeLoad(partial)).toBe('GPU ~93%');
  });

  it('words the coverage', () => {
    expect(coverageText('full', 2, 2)).toMatch(/whole cell/);
    expect(coverageText('partial', 20, 45)).toBe(
      "the driver's buffer covered only the last 20 s of the cell's 45 s"
    );
    expect(coverageText('none', 0, 45)).toMatch(/no sample/);
    expect(coverageText('later', 0, 45)).toBe('later');
  });

  it('adds per-GPU lines and the hints to the tooltip', () => {
    const lines = cellLoadLines(longCell());
    expect(lines[0]).toBe(
      "GPU 0 load: mean 96%, max 97% (2 samples); energy 184 J; the driver's buffer covered the whole cell"
    );
    expect(lines[1]).toBe('GPU 0 held back by: power cap');
    expect(lines[2]).toMatch(/^Throttled: .* power/);
    expect(cellLoadLines(makeCellRecord())).toEqual([]);
  });

  it('shows the load and the hints on the badge', () => {
    const record = longCell(
      makeCellGpuLoad({
        sm_mean_percent: 12,
        sm_max_percent: 40,
        throttle_reasons: ['sw_power_cap']
      })
    );
    const load = cellLoadOf(record);
    const node = createCellBadgeNode();
    renderCellBadge(node, {
      summary: summarizeCellRecord(record),
      executionCount: 1,
      title: 'title',
      level: 'normal',
      saved: false,
      earlier: false,
      units: 'binary',
      load,
      hints: cellHints(record, load)
    });
    expect(node.textContent).toBe(
      '+1 GiB · peak 3 GiB · GPU 12% · input-bound? · 20 s'
    );
    expect(node.dataset.vramGpuMean).toBe('12');
    expect(node.dataset.vramGpuCoverage).toBe('full');
    expect(node.dataset.vramHints).toBe('input-bound throttled');
  });
});
