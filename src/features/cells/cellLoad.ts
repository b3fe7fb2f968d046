/**
 * One figure per cell of how busy the GPUs were while it ran, from the
 * record's `gpu_load` (one entry per GPU): the busiest GPU's mean and
 * maximum SM utilisation, the energy of every GPU, and how much of the cell
 * the driver's buffer covered. The badge, the Cells table, its sort and the
 * exports read the same summary, so that they agree.
 */
import type { CellGpuLoad } from '../../protocol/load';
import type { CellMemoryRecord } from '../../protocol/cell';

/** How much of a cell the driver's utilisation buffer covered: `full`, `partial` or `none`. */
export type CellCoverage = string;

/** The GPU load of one executed cell, summed up over its GPUs. */
export interface CellLoadSummary {
  /** The highest mean SM utilisation of any GPU (the busiest one); null when none is known. */
  meanPercent: number | null;
  /** The highest SM utilisation sampled on any GPU; null when none is known. */
  maxPercent: number | null;
  /** The energy of every GPU, summed; null when no GPU has a figure. */
  energyJoules: number | null;
  /** The coverage of the GPU the mean comes from (the least covered when no mean is known). */
  coverage: CellCoverage;
  /** The seconds of the cell, counted back from its end, that the mean rests on. */
  coveredS: number;
  /** Every throttle reason of any GPU during the cell, each once. */
  throttleReasons: string[];
  /** The record's entries, one per GPU, as the kernel sent them. */
  devices: readonly CellGpuLoad[];
}

/** The coverages ranked, so that the least covered GPU can be found. */
const COVERAGE_RANK: Record<string, number> = { full: 2, partial: 1, none: 0 };

/** The rank of `coverage`; a word this page does not know ranks lowest. */
function rankOf(coverage: string): number {
  return COVERAGE_RANK[coverage] ?? 0;
}

/** The highest known value; null when none is known. */
function highest(values: (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length ? Math.max(...known) : null;
}

/**
 * Sums up the GPU load of `record`, or returns null when it has none: an
 * older helper sends no `gpu_load`, and a kernel without NVML an empty one.
 */
export function cellLoadOf(record: CellMemoryRecord): CellLoadSummary | null {
  const devices = record.gpu_load;
  if (!devices || devices.length === 0) {
    return null;
  }
  const withMean = devices.filter(d => d.sm_mean_percent !== null);
  const busiest = withMean.length
    ? withMean.reduce((a, b) =>
        b.sm_mean_percent! > a.sm_mean_percent! ? b : a
      )
    : devices.reduce((a, b) =>
        rankOf(b.coverage) < rankOf(a.coverage) ? b : a
      );
  const energies = devices
    .map(d => d.energy_joules)
    .filter((v): v is number => v !== null);
  const reasons = new Set<string>();
  for (const d of devices) {
    for (const reason of d.throttle_reasons ?? []) {
      reasons.add(reason);
    }
  }
  return {
    meanPercent: highest(devices.map(d => d.sm_mean_percent)),
    maxPercent: highest(devices.map(d => d.sm_max_percent)),
    energyJoules: energies.length ? energies.reduce((a, b) => a + b, 0) : null,
    coverage: busiest.coverage,
    coveredS: busiest.covered_s,
    throttleReasons: Array.from(reasons),
    devices
  };
}
