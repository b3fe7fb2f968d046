import {
  COMM_TARGET,
  parseKernelMessage,
  PROTOCOL_VERSION,
  ParseResult
} from './messages';
import { makeGpu, makeHello, makeSample, wire } from '../testing/fixtures';

function expectMalformed(result: ParseResult, fragment: string): void {
  expect(result.kind).toBe('malformed');
  if (result.kind === 'malformed') {
    expect(result.error).toContain(fragment);
  }
}

/** The example sample of docs/protocol.md, copied verbatim. */
const DOC_SAMPLE = {
  type: 'sample',
  seq: 17,
  time: 1732200000.25,
  reason: 'change',
  host: {
    rss_bytes: 512000000,
    total_bytes: 25000000000,
    available_bytes: 21000000000,
    container: {
      limit_bytes: 8589934592,
      usage_bytes: 900000000,
      oom_kill_count: 0,
      cgroup_version: 2,
      swap_limit_bytes: 2147483648,
      swap_usage_bytes: 0
    },
    swapped_bytes: 0,
    swap_total_bytes: 8589934592,
    swap_free_bytes: 8589934592,
    oom_kill_count: 41
  },
  torch: { imported: true, cuda_initialized: true },
  tensorflow: { imported: false, gpus_initialized: false },
  gpus: [
    {
      index: 0,
      name: 'NVIDIA H100 80GB HBM3',
      total_bytes: 85031714816,
      torch: {
        allocated_bytes: 1048576,
        reserved_bytes: 2097152,
        peak_allocated_bytes: 1048576,
        active_bytes: 1048576,
        inactive_split_bytes: 0,
        num_ooms: 0,
        num_alloc_retries: 0
      },
      nvml: {
        used_bytes: 600000000,
        total_bytes: 85031714816,
        free_bytes: 83939000320,
        process_used_bytes: 520000000
      },
      tensorflow: null
    }
  ],
  hidden_gpus: null
};

describe('protocol constants', () => {
  it('match docs/protocol.md', () => {
    expect(COMM_TARGET).toBe('jupyterlab-vram');
    expect(PROTOCOL_VERSION).toBe(1);
  });
});

describe('parseKernelMessage: valid messages', () => {
  it('reads the documented sample example', () => {
    const result = parseKernelMessage(DOC_SAMPLE);
    expect(result.kind).toBe('message');
    if (result.kind === 'message' && result.message.type === 'sample') {
      expect(result.message.seq).toBe(17);
      expect(result.message.gpus[0].torch!.reserved_bytes).toBe(2097152);
      expect(result.message.gpus[0].nvml!.process_used_bytes).toBe(520000000);
      expect(result.message.gpus[0].nvml!.free_bytes).toBe(83939000320);
      expect(result.message.gpus[0].tensorflow).toBeNull();
      expect(result.message.host.swapped_bytes).toBe(0);
      expect(result.message.host.swap_free_bytes).toBe(8589934592);
      expect(result.message.host.container!.swap_limit_bytes).toBe(2147483648);
      expect(result.message.host.oom_kill_count).toBe(41);
    } else {
      throw new Error('expected a sample');
    }
  });

  it('reads a hello, keeping nulls as nulls', () => {
    const hello = makeHello({
      torch: null,
      nvml: {
        available: false,
        driver_version: null,
        error: 'pynvml is not installed'
      },
      devices: []
    });
    const result = parseKernelMessage(wire(hello));
    expect(result).toEqual({ kind: 'message', message: hello });
  });

  it('reads unknown figures as null, never 0', () => {
    const sample = makeSample({
      host: {
        rss_bytes: null,
        total_bytes: null,
        available_bytes: null,
        container: null
      },
      gpus: [
        makeGpu({
          torch: null,
          nvml: { used_bytes: 5, total_bytes: 10, process_used_bytes: null }
        })
      ]
    });
    const result = parseKernelMessage(wire(sample));
    expect(result.kind).toBe('message');
    if (result.kind === 'message' && result.message.type === 'sample') {
      expect(result.message.host.rss_bytes).toBeNull();
      expect(result.message.gpus[0].torch).toBeNull();
      expect(result.message.gpus[0].nvml!.process_used_bytes).toBeNull();
    }
  });

  it('treats a missing optional figure as unknown', () => {
    const data = wire(makeSample()) as any;
    delete data.gpus[0].torch.active_bytes;
    const result = parseKernelMessage(data);
    expect(result.kind).toBe('message');
    if (result.kind === 'message' && result.message.type === 'sample') {
      expect(result.message.gpus[0].torch!.active_bytes).toBeNull();
    }
  });

  it('reads TensorFlow per-GPU figures', () => {
    const sample = makeSample({
      gpus: [makeGpu({ tensorflow: { current_bytes: 7, peak_bytes: 9 } })]
    });
    const result = parseKernelMessage(wire(sample));
    expect(
      result.kind === 'message' &&
        result.message.type === 'sample' &&
        result.message.gpus[0].tensorflow
    ).toEqual({
      current_bytes: 7,
      peak_bytes: 9
    });
  });

  it('reads reply and error', () => {
    expect(
      parseKernelMessage({
        type: 'reply',
        request_id: 'r1',
        request_type: 'snapshot',
        result: { seq: 3 }
      })
    ).toEqual({
      kind: 'message',
      message: {
        type: 'reply',
        request_id: 'r1',
        request_type: 'snapshot',
        result: { seq: 3 }
      }
    });
    expect(
      parseKernelMessage({
        type: 'error',
        request_id: null,
        code: 'malformed',
        message: 'bad'
      })
    ).toEqual({
      kind: 'message',
      message: {
        type: 'error',
        request_id: null,
        code: 'malformed',
        message: 'bad'
      }
    });
  });

  it('ignores extra fields', () => {
    const data = { ...(wire(makeSample()) as object), future_field: [1, 2] };
    expect(parseKernelMessage(data).kind).toBe('message');
  });
});

describe('parseKernelMessage: protocol mismatch', () => {
  it('reports a hello of another version as incompatible, not malformed', () => {
    const result = parseKernelMessage({
      type: 'hello',
      protocol: 2,
      helper_version: '9.0.0',
      whatever: true
    });
    expect(result).toEqual({
      kind: 'incompatible',
      protocol: 2,
      helperVersion: '9.0.0'
    });
  });

  it('reports a hello without a protocol as incompatible', () => {
    const result = parseKernelMessage({ type: 'hello' });
    expect(result).toEqual({
      kind: 'incompatible',
      protocol: undefined,
      helperVersion: null
    });
  });
});

describe('parseKernelMessage: message types of other features', () => {
  it('passes an unknown type through as unsupported, not as an error', () => {
    const data = { type: 'cell_v2', cell_id: 'abc', delta_bytes: 5 };
    expect(parseKernelMessage(data)).toEqual({
      kind: 'unsupported',
      type: 'cell_v2',
      data
    });
  });
});

describe('parseKernelMessage: malformed input', () => {
  it.each([
    [null, 'expected an object'],
    [undefined, 'expected an object'],
    [42, 'expected an object'],
    ['sample', 'expected an object'],
    [[1, 2], 'expected an object'],
    [{}, 'message.type'],
    [{ type: 7 }, 'message.type'],
    [{ type: null }, 'message.type']
  ])('rejects %p', (data, fragment) => {
    expectMalformed(parseKernelMessage(data), fragment);
  });

  const mutations: [string, (s: any) => void, string][] = [
    ['missing seq', s => delete s.seq, 'sample.seq'],
    ['fractional seq', s => (s.seq = 1.5), 'sample.seq'],
    ['string time', s => (s.time = 'now'), 'sample.time'],
    ['missing reason', s => delete s.reason, 'sample.reason'],
    ['host not an object', s => (s.host = 5), 'sample.host'],
    ['missing host', s => delete s.host, 'sample.host'],
    ['negative rss', s => (s.host.rss_bytes = -1), 'sample.host.rss_bytes'],
    ['string rss', s => (s.host.rss_bytes = '1 GB'), 'sample.host.rss_bytes'],
    ['gpus not an array', s => (s.gpus = {}), 'sample.gpus'],
    ['gpu not an object', s => (s.gpus = [null]), 'sample.gpus[0]'],
    ['gpu index missing', s => delete s.gpus[0].index, 'sample.gpus[0].index'],
    [
      'torch figure wrong type',
      s => (s.gpus[0].torch.allocated_bytes = true),
      'sample.gpus[0].torch.allocated_bytes'
    ],
    [
      'nvml not an object',
      s => (s.gpus[0].nvml = 'n/a'),
      'sample.gpus[0].nvml'
    ],
    [
      'torch state not boolean',
      s => (s.torch.imported = 'yes'),
      'sample.torch.imported'
    ],
    ['tensorflow state missing', s => delete s.tensorflow, 'sample.tensorflow'],
    ['device name a number', s => (s.gpus[0].name = 3), 'sample.gpus[0].name'],
    [
      'infinite bytes',
      s => (s.gpus[0].total_bytes = Infinity),
      'sample.gpus[0].total_bytes'
    ]
  ];
  it.each(mutations)('rejects a sample with %s', (_name, mutate, fragment) => {
    const data = wire(makeSample()) as any;
    mutate(data);
    expectMalformed(parseKernelMessage(data), fragment);
  });

  const helloMutations: [string, (h: any) => void, string][] = [
    ['pid as string', h => (h.pid = '42'), 'hello.pid'],
    ['missing nvml', h => delete h.nvml, 'hello.nvml'],
    [
      'nvml.available missing',
      h => delete h.nvml.available,
      'hello.nvml.available'
    ],
    ['devices not an array', h => (h.devices = null), 'hello.devices'],
    [
      'device without index',
      h => delete h.devices[0].index,
      'hello.devices[0].index'
    ],
    ['config missing', h => delete h.config, 'hello.config'],
    [
      'config.interval_s string',
      h => (h.config.interval_s = 'fast'),
      'hello.config.interval_s'
    ]
  ];
  it.each(helloMutations)(
    'rejects a hello with %s',
    (_name, mutate, fragment) => {
      const data = wire(makeHello()) as any;
      mutate(data);
      expectMalformed(parseKernelMessage(data), fragment);
    }
  );

  it('rejects reply/error with missing fields', () => {
    expectMalformed(
      parseKernelMessage({
        type: 'reply',
        request_id: 'r1',
        request_type: 'ping'
      }),
      'reply.result'
    );
    expectMalformed(
      parseKernelMessage({
        type: 'reply',
        request_id: 5,
        request_type: 'ping',
        result: {}
      }),
      'reply.request_id'
    );
    expectMalformed(
      parseKernelMessage({ type: 'error', request_id: 'r1', code: 'internal' }),
      'error.message'
    );
  });

  it('keeps error texts short for huge values', () => {
    const result = parseKernelMessage({
      type: 'sample',
      seq: 'x'.repeat(10000)
    });
    expect(result.kind).toBe('malformed');
    if (result.kind === 'malformed') {
      expect(result.error.length).toBeLessThan(200);
    }
  });
});

describe('parseKernelMessage: nvml.processes (the Kernels tab)', () => {
  const withProcesses = (processes: unknown) => {
    const data = wire(makeSample()) as any;
    data.gpus[0].nvml.processes = processes;
    return data;
  };

  it('reads the list of GPU processes', () => {
    const processes = [
      { pid: 4242, used_bytes: 2147483648, this_process: true },
      { pid: 777, used_bytes: null, this_process: false }
    ];
    const result = parseKernelMessage(withProcesses(processes));
    expect(
      result.kind === 'message' &&
        result.message.type === 'sample' &&
        result.message.gpus[0].nvml!.processes
    ).toEqual(processes);
  });

  it('reads an absent or null list as null (older helpers, no list)', () => {
    for (const data of [wire(makeSample()), withProcesses(null)]) {
      const result = parseKernelMessage(data);
      expect(result.kind).toBe('message');
      if (result.kind === 'message' && result.message.type === 'sample') {
        expect(result.message.gpus[0].nvml!.processes).toBeNull();
      }
    }
  });

  it('rejects a malformed list, naming the field', () => {
    expectMalformed(
      parseKernelMessage(withProcesses({ pid: 1 })),
      'gpus[0].nvml.processes: expected an array'
    );
    expectMalformed(
      parseKernelMessage(
        withProcesses([{ pid: 1.5, used_bytes: 0, this_process: false }])
      ),
      'processes[0].pid'
    );
    expectMalformed(
      parseKernelMessage(
        withProcesses([{ pid: 1, used_bytes: -1, this_process: false }])
      ),
      'processes[0].used_bytes'
    );
    expectMalformed(
      parseKernelMessage(withProcesses([{ pid: 1, used_bytes: 0 }])),
      'processes[0].this_process'
    );
  });
});
