/**
 * GPU load fixtures shaped like docs/protocol.md's "GPU load" examples: a
 * sample's `load` and a cell record's `gpu_load` entry.
 */
import type { CellGpuLoad, GpuLoad } from '../protocol/load';

export function makeGpuLoad(overrides: Partial<GpuLoad> = {}): GpuLoad {
  return {
    read_at: 1732200001.21,
    scope: 'device',
    parent_figures: [],
    sm_percent: 97,
    memory_bandwidth_percent: 61,
    power_watts: 612.345,
    power_limit_watts: 700,
    temperature_c: 71,
    sm_clock_mhz: 1755,
    memory_clock_mhz: 2619,
    throttle_reasons: ['sw_power_cap'],
    pcie_tx_kb_per_s: null,
    pcie_rx_kb_per_s: null,
    processes: [
      {
        pid: 4242,
        sm_percent: 96,
        memory_percent: 60,
        encoder_percent: 0,
        decoder_percent: 0,
        this_process: true
      },
      {
        pid: 5151,
        sm_percent: 3,
        memory_percent: 1,
        encoder_percent: 0,
        decoder_percent: 0,
        this_process: false
      }
    ],
    unavailable: {
      pcie_tx_kb_per_s: 'not_read_yet',
      pcie_rx_kb_per_s: 'not_read_yet'
    },
    ...overrides
  };
}

export function makeCellGpuLoad(
  overrides: Partial<CellGpuLoad> = {}
): CellGpuLoad {
  return {
    index: 0,
    scope: 'device',
    parent_figures: [],
    sm_mean_percent: 96,
    sm_max_percent: 97,
    utilization_samples: 2,
    coverage: 'full',
    covered_s: 0.3,
    energy_joules: 183.6,
    energy_method: 'energy_counter',
    throttle_reasons: ['sw_power_cap'],
    unavailable: {},
    ...overrides
  };
}
