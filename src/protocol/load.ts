/**
 * The readers of a GPU's load figures: `load` in a sample's GPU entry and
 * `gpu_load` in a cell record, described under "GPU load" in
 * docs/protocol.md. Each figure may be null, and `unavailable` says why.
 * Every string code is kept as sent, so that a newer helper's code reads as
 * text rather than failing the message.
 */
import { FieldReader, ShapeError } from './reader';
import type {
  CellGpuLoad,
  CellGpuLoadUnavailable,
  GpuLoad,
  GpuLoadUnavailable,
  GpuProcessLoad
} from './protocol.generated';

export type {
  CellGpuLoad,
  CellGpuLoadUnavailable,
  GpuLoad,
  GpuLoadUnavailable,
  GpuProcessLoad
} from './protocol.generated';

/** Reads a percentage from 0 to 100, or null. */
function percent(r: FieldReader, key: string): number | null {
  const value = r.nullableNumber(key);
  if (value !== null && (value < 0 || value > 100)) {
    throw new ShapeError(
      `${r.path}.${key}: expected a percentage from 0 to 100, got ${value}`
    );
  }
  return value;
}

/** Reads an array of strings or null. A missing key reads as null. */
function strings(r: FieldReader, key: string): string[] | null {
  return (
    r.nullableArray(key)?.map((item, i) => {
      if (typeof item !== 'string') {
        throw new ShapeError(`${r.path}.${key}[${i}]: expected a string`);
      }
      return item;
    }) ?? null
  );
}

/**
 * Reads `unavailable`, which maps each figure's name to a reason code, both
 * strings. A missing object reads as {}.
 */
function reasons(r: FieldReader): Record<string, string> {
  const u = r.nullableObject('unavailable');
  if (!u) {
    return {};
  }
  const result: Record<string, string> = {};
  for (const key of Object.keys(u.data)) {
    result[key] = u.string(key);
  }
  return result;
}

function readProcessLoad(item: unknown, path: string): GpuProcessLoad {
  const p = FieldReader.of(item, path);
  return {
    pid: p.integer('pid'),
    sm_percent: p.nullableNumber('sm_percent'),
    memory_percent: p.nullableNumber('memory_percent'),
    encoder_percent: p.nullableNumber('encoder_percent'),
    decoder_percent: p.nullableNumber('decoder_percent'),
    this_process: p.boolean('this_process')
  };
}

/** Reads a sample's `gpus[i].load`. */
export function readGpuLoad(r: FieldReader): GpuLoad {
  return {
    read_at: r.number('read_at'),
    scope: r.string('scope'),
    parent_figures: (strings(r, 'parent_figures') ??
      []) as GpuLoad['parent_figures'],
    sm_percent: percent(r, 'sm_percent'),
    memory_bandwidth_percent: percent(r, 'memory_bandwidth_percent'),
    power_watts: r.nullableNumber('power_watts'),
    power_limit_watts: r.nullableNumber('power_limit_watts'),
    temperature_c: r.nullableNumber('temperature_c'),
    sm_clock_mhz: r.nullableInteger('sm_clock_mhz'),
    memory_clock_mhz: r.nullableInteger('memory_clock_mhz'),
    throttle_reasons: strings(r, 'throttle_reasons'),
    pcie_tx_kb_per_s: r.nullableInteger('pcie_tx_kb_per_s'),
    pcie_rx_kb_per_s: r.nullableInteger('pcie_rx_kb_per_s'),
    processes:
      r
        .nullableArray('processes')
        ?.map((item, i) =>
          readProcessLoad(item, `${r.path}.processes[${i}]`)
        ) ?? null,
    unavailable: reasons(r) as GpuLoadUnavailable
  };
}

/** Reads a cell record's `gpu_load[i]`. */
export function readCellGpuLoad(r: FieldReader): CellGpuLoad {
  return {
    index: r.integer('index'),
    scope: r.string('scope'),
    parent_figures: (strings(r, 'parent_figures') ??
      []) as CellGpuLoad['parent_figures'],
    sm_mean_percent: percent(r, 'sm_mean_percent'),
    sm_max_percent: percent(r, 'sm_max_percent'),
    utilization_samples: r.integer('utilization_samples'),
    coverage: r.string('coverage'),
    covered_s: r.number('covered_s'),
    energy_joules: r.nullableNumber('energy_joules'),
    energy_method: r.nullableString('energy_method'),
    throttle_reasons: strings(r, 'throttle_reasons'),
    unavailable: reasons(r) as CellGpuLoadUnavailable
  };
}
