import { parseKernelMessage, ParseResult } from './messages';
import { SampleMessage } from './sample';
import { makeSample, wire } from '../testing/fixtures';

const LOAD = {
  read_at: 1732200001.21,
  scope: 'mig_instance',
  parent_figures: ['power_watts', 'temperature_c'],
  sm_percent: 42,
  memory_bandwidth_percent: 10,
  power_watts: 612.345,
  power_limit_watts: 700,
  temperature_c: 71,
  sm_clock_mhz: 1755,
  memory_clock_mhz: 2619,
  throttle_reasons: ['sw_power_cap', 'bit_12'],
  pcie_tx_kb_per_s: null,
  pcie_rx_kb_per_s: null,
  processes: [
    {
      pid: 4242,
      sm_percent: 40,
      memory_percent: 9,
      encoder_percent: null,
      decoder_percent: 0,
      this_process: true
    }
  ],
  unavailable: {
    pcie_tx_kb_per_s: 'not_supported',
    pcie_rx_kb_per_s: 'a newer code'
  }
};

function sampleWithLoad(load: unknown): unknown {
  const data = wire(makeSample()) as any;
  data.gpus[0].load = load;
  return data;
}

function parsedSample(result: ParseResult): SampleMessage {
  if (result.kind !== 'message' || result.message.type !== 'sample') {
    throw new Error(`expected a sample, got ${JSON.stringify(result)}`);
  }
  return result.message;
}

describe('parseKernelMessage: a GPU load in a sample', () => {
  it('reads every figure, reason and code as sent', () => {
    const sample = parsedSample(parseKernelMessage(sampleWithLoad(LOAD)));
    expect(sample.gpus[0].load).toEqual(LOAD);
  });

  it('reads an older helper (no load) as null: unknown', () => {
    const data = wire(makeSample()) as any;
    delete data.gpus[0].load;
    expect(parsedSample(parseKernelMessage(data)).gpus[0].load).toBeNull();
  });

  it.each([
    [{ ...LOAD, sm_percent: 140 }, 'load.sm_percent'],
    [{ ...LOAD, power_watts: '612' }, 'load.power_watts'],
    [{ ...LOAD, throttle_reasons: [4] }, 'load.throttle_reasons[0]'],
    [
      { ...LOAD, unavailable: { sm_percent: 3 } },
      'load.unavailable.sm_percent'
    ],
    [{ ...LOAD, processes: [{ pid: 'x' }] }, 'load.processes[0].pid']
  ])('names the field of a malformed load %#', (load, fragment) => {
    const result = parseKernelMessage(sampleWithLoad(load));
    expect(result.kind).toBe('malformed');
    if (result.kind === 'malformed') {
      expect(result.error).toContain(fragment);
    }
  });
});

const CELL_LOAD = {
  index: 0,
  scope: 'device',
  parent_figures: [],
  sm_mean_percent: 96,
  sm_max_percent: 97,
  utilization_samples: 2,
  coverage: 'partial',
  covered_s: 0.3,
  energy_joules: null,
  energy_method: null,
  throttle_reasons: null,
  unavailable: { energy_joules: 'not_supported', throttle_reasons: 'gpu_lost' }
};

function cellsWith(gpuLoad: unknown): unknown {
  const record: { [key: string]: unknown } = {
    record_id: 1,
    execution_count: 1,
    cell_id: 'c',
    started: 1732200010,
    duration_s: 0.3,
    status: 'ok',
    error: null,
    peak_exact: true,
    host: {
      rss_before_bytes: 1,
      rss_after_bytes: 1,
      rss_peak_bytes: 1,
      peak_exact: true
    },
    gpus: [],
    oom: null
  };
  if (gpuLoad !== undefined) {
    record.gpu_load = gpuLoad;
  }
  return { type: 'cells', records: [record] };
}

function records(result: ParseResult): any[] {
  if (result.kind !== 'message' || result.message.type !== 'cells') {
    throw new Error(`expected cells, got ${JSON.stringify(result)}`);
  }
  return result.message.records;
}

describe('parseKernelMessage: a GPU load in a cell record', () => {
  it('keeps each device entry as sent', () => {
    const [record] = records(parseKernelMessage(cellsWith([CELL_LOAD])));
    expect(record.gpu_load).toEqual([CELL_LOAD]);
  });

  it('leaves it out for an older helper', () => {
    const [record] = records(parseKernelMessage(cellsWith(undefined)));
    expect('gpu_load' in record).toBe(false);
  });

  it('lists a record with a malformed entry as invalid, naming the field', () => {
    const result = parseKernelMessage(
      cellsWith([{ ...CELL_LOAD, sm_mean_percent: -1 }])
    );
    if (result.kind !== 'message' || result.message.type !== 'cells') {
      throw new Error('expected cells');
    }
    expect(result.message.records).toEqual([]);
    expect(result.message.invalid.join()).toContain(
      'gpu_load[0].sm_mean_percent'
    );
  });
});
