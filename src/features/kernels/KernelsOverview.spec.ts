import {
  describeGpuProcessVisibility,
  gpuProcessVisibility,
  kernelGpuUse,
  kernelRows,
  kernelsOverview,
  KernelSource,
  kernelSourceOf,
  otherGpuProcesses
} from './KernelsOverview';
import {
  GiB,
  makeCpuSample,
  makeGpu,
  makeHello,
  makeNvmlProcessSample,
  makeSample,
  MiB
} from '../../testing/fixtures';

function source(overrides: Partial<KernelSource> = {}): KernelSource {
  return {
    kernelId: 'kernel-a',
    kernelName: 'python3',
    displayName: 'Python 3 (ipykernel)',
    paths: ['a.ipynb'],
    state: 'live',
    stateReason: 'Live',
    busy: false,
    hello: makeHello(),
    latest: makeSample(),
    ...overrides
  };
}

const proc = (pid: number, used: number | null, own = false) => ({
  pid,
  used_bytes: used,
  this_process: own
});

describe('kernelGpuUse', () => {
  it("prefers NVML's figure, then PyTorch's reserved bytes", () => {
    const sample = makeSample({
      gpus: [
        makeGpu({ index: 0 }),
        makeGpu({
          index: 1,
          nvml: { used_bytes: 1, total_bytes: 2, process_used_bytes: null }
        }),
        makeGpu({ index: 2, torch: null, nvml: null })
      ]
    });
    expect(kernelGpuUse(sample)).toEqual([
      {
        index: 0,
        name: 'NVIDIA H100 80GB HBM3',
        bytes: 2.5 * GiB,
        source: 'nvml'
      },
      {
        index: 1,
        name: 'NVIDIA H100 80GB HBM3',
        bytes: 2 * GiB,
        source: 'torch'
      },
      { index: 2, name: 'NVIDIA H100 80GB HBM3', bytes: null, source: null }
    ]);
    expect(kernelGpuUse(null)).toEqual([]);
  });
});

describe('kernelRows', () => {
  it('reads the kernel, its notebooks, host RSS and GPU use', () => {
    const [row] = kernelRows([source()]);
    expect(row).toMatchObject({
      key: 'kernel:kernel-a',
      kernelId: 'kernel-a',
      displayName: 'Python 3 (ipykernel)',
      paths: ['a.ipynb'],
      state: 'live',
      pid: 4242,
      hostname: 'node-1',
      sampled: true,
      hostRssBytes: 512 * MiB
    });
    expect(row.gpus.map(g => g.bytes)).toEqual([2.5 * GiB]);
  });

  it('merges notebooks that share a kernel into one row', () => {
    const rows = kernelRows([
      source({ paths: ['a.ipynb'], latest: null, hello: null }),
      source({ paths: ['b.ipynb'] }),
      source({ kernelId: 'kernel-b', paths: ['c.ipynb'] })
    ]);
    expect(rows.map(r => [r.kernelId, r.paths])).toEqual([
      ['kernel-a', ['a.ipynb', 'b.ipynb']],
      ['kernel-b', ['c.ipynb']]
    ]);
    // The merged row takes its figures from the notebook that has a sample.
    expect(rows[0].sampled).toBe(true);
  });

  it('keeps a notebook without a kernel as a row of its own', () => {
    const rows = kernelRows([
      source({ kernelId: null, paths: ['x.ipynb'], hello: null, latest: null }),
      source({ kernelId: null, paths: ['y.ipynb'], hello: null, latest: null })
    ]);
    expect(rows.map(r => r.key)).toEqual([
      'no-kernel:x.ipynb',
      'no-kernel:y.ipynb'
    ]);
    expect(rows[0]).toMatchObject({
      pid: null,
      hostRssBytes: null,
      sampled: false,
      gpus: []
    });
  });
});

describe('otherGpuProcesses', () => {
  it('lists the processes that are no monitored kernel, largest first', () => {
    const a = source({
      latest: makeNvmlProcessSample([
        proc(4242, 2 * GiB, true),
        proc(900, GiB),
        proc(901, 3 * GiB)
      ])
    });
    expect(otherGpuProcesses([a])).toEqual([
      {
        pid: 901,
        hostname: 'node-1',
        gpuIndex: 0,
        gpuName: 'NVIDIA H100 80GB HBM3',
        usedBytes: 3 * GiB
      },
      {
        pid: 900,
        hostname: 'node-1',
        gpuIndex: 0,
        gpuName: 'NVIDIA H100 80GB HBM3',
        usedBytes: GiB
      }
    ]);
  });

  it("shows another monitored kernel's pid as that kernel, not as other", () => {
    const a = source({
      latest: makeNvmlProcessSample([
        proc(4242, 2 * GiB, true),
        proc(5555, GiB)
      ])
    });
    const b = source({
      kernelId: 'kernel-b',
      hello: makeHello({ pid: 5555 }),
      latest: makeNvmlProcessSample([
        proc(5555, GiB, true),
        proc(4242, 2 * GiB),
        proc(777, MiB)
      ])
    });
    expect(otherGpuProcesses([a, b]).map(p => p.pid)).toEqual([777]);
  });

  it('compares pids per host: the same pid elsewhere is another process', () => {
    const a = source({
      latest: makeNvmlProcessSample([proc(4242, GiB, true), proc(5555, GiB)])
    });
    const remote = source({
      kernelId: 'kernel-b',
      hello: makeHello({ pid: 5555, hostname: 'node-2' }),
      latest: null
    });
    expect(otherGpuProcesses([a, remote]).map(p => p.pid)).toEqual([5555]);
  });

  it('lists a process seen by two kernels on one GPU once (by GPU uuid)', () => {
    const a = source({
      latest: makeNvmlProcessSample([proc(4242, GiB, true), proc(777, MiB)])
    });
    // Kernel b numbers the same GPU 3, because of CUDA_VISIBLE_DEVICES; only
    // the uuid shows that it is the same card.
    const b = source({
      kernelId: 'kernel-b',
      hello: makeHello({
        pid: 5555,
        devices: [
          { index: 3, name: 'H100', total_bytes: 80 * GiB, uuid: 'GPU-0000' }
        ]
      }),
      latest: makeNvmlProcessSample(
        [proc(5555, GiB, true), proc(777, 2 * MiB)],
        3
      )
    });
    const others = otherGpuProcesses([a, b]);
    expect(others).toHaveLength(1);
    expect(others[0]).toMatchObject({ pid: 777, usedBytes: 2 * MiB });
  });

  it('keeps unknown figures unknown and puts them last', () => {
    const a = source({
      latest: makeNvmlProcessSample([proc(1, null), proc(2, 0)])
    });
    expect(otherGpuProcesses([a]).map(p => [p.pid, p.usedBytes])).toEqual([
      [2, 0],
      [1, null]
    ]);
  });

  it('ignores a kernel without its hello (its own pid is unknown)', () => {
    const a = source({
      hello: null,
      latest: makeNvmlProcessSample([proc(1, GiB)])
    });
    expect(otherGpuProcesses([a])).toEqual([]);
  });
});

describe('gpuProcessVisibility', () => {
  it('says why other GPU processes cannot be seen', () => {
    expect(gpuProcessVisibility([])).toBe('no-kernels');
    expect(gpuProcessVisibility([source({ latest: null })])).toBe('waiting');
    const noNvml = makeHello({
      nvml: {
        available: false,
        driver_version: null,
        error: 'pynvml is not installed'
      }
    });
    expect(gpuProcessVisibility([source({ hello: noNvml })])).toBe(
      'nvml-unavailable'
    );
    expect(gpuProcessVisibility([source({ latest: makeCpuSample() })])).toBe(
      'no-gpus'
    );
    expect(
      gpuProcessVisibility([source({ latest: makeNvmlProcessSample(null) })])
    ).toBe('not-listed');
    // A sample without the process list, as an older helper sends it, is
    // read as not listed.
    expect(gpuProcessVisibility([source()])).toBe('not-listed');
    expect(
      gpuProcessVisibility([source({ latest: makeNvmlProcessSample([]) })])
    ).toBe('listed');
  });

  it('puts the reason into the sentence', () => {
    const noNvml = makeHello({
      nvml: {
        available: false,
        driver_version: null,
        error: 'pynvml is not installed'
      }
    });
    const overview = kernelsOverview([source({ hello: noNvml })]);
    expect(overview.others).toEqual([]);
    expect(describeGpuProcessVisibility(overview)).toBe(
      'No GPU process list: NVML is not available to these kernels (pynvml is not installed). ' +
        "Only each kernel's own PyTorch figures can be seen, not other processes on the GPUs."
    );
    expect(
      describeGpuProcessVisibility(
        kernelsOverview([source({ latest: makeNvmlProcessSample([]) })])
      )
    ).toBe('NVML lists no other process on these GPUs.');
    expect(
      describeGpuProcessVisibility(
        kernelsOverview([source({ latest: makeNvmlProcessSample(null) })])
      )
    ).toContain('cannot be seen');
  });

  it('does not say "no GPU" of a kernel without NVML whose PyTorch has not initialised CUDA', () => {
    const noPynvml = makeHello({
      nvml: {
        available: false,
        driver_version: null,
        error: 'cannot import pynvml'
      }
    });
    const overview = kernelsOverview([
      source({
        hello: noPynvml,
        latest: makeCpuSample({
          torch: { imported: true, cuda_initialized: false }
        })
      })
    ]);
    expect(overview.visibility).toBe('nvml-unavailable');
  });

  it('says a kernel without NVML and without a GPU sees no GPU, rather than that GPU processes are hidden', () => {
    const noDriver = makeHello({
      nvml: {
        available: false,
        driver_version: null,
        error: 'NVML Shared Library Not Found'
      }
    });
    const overview = kernelsOverview([
      source({ hello: noDriver, latest: makeCpuSample() })
    ]);
    expect(overview.visibility).toBe('no-gpus');
    expect(describeGpuProcessVisibility(overview)).toBe(
      'No GPU is visible to these kernels, so there are no GPU processes to list (NVML: NVML Shared Library Not Found).'
    );
  });
});

describe('kernelSourceOf', () => {
  it('reads the session context, the panels and the model', () => {
    const context: any = {
      path: 'dir/a.ipynb',
      kernelDisplayName: 'Python 3 (ipykernel)',
      session: { kernel: { id: 'kernel-a', name: 'python3' } }
    };
    const model: any = {
      state: 'live',
      stateReason: 'Live.',
      kernelBusy: true,
      hello: makeHello(),
      latest: null
    };
    const panel: any = { sessionContext: context };
    expect(
      kernelSourceOf({ model, sessionContext: context, panels: [panel, panel] })
    ).toEqual({
      kernelId: 'kernel-a',
      kernelName: 'python3',
      displayName: 'Python 3 (ipykernel)',
      paths: ['dir/a.ipynb'],
      state: 'live',
      stateReason: 'Live.',
      busy: true,
      hello: model.hello,
      latest: null
    });
    context.session = null;
    expect(
      kernelSourceOf({ model, sessionContext: context, panels: [panel] })
    ).toMatchObject({ kernelId: null, kernelName: null, displayName: null });
  });
});
