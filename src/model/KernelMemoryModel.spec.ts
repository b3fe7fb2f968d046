import { parseKernelMessage } from '../protocol/messages';
import { KernelMemoryModel } from './KernelMemoryModel';
import { deriveNotesWith } from './KernelVisibilityNotes';
import { SeriesKey } from './MemoryHistory';
import { describeState, MONITOR_STATES } from './MonitorState';
import { deriveVisibilityNotes } from './visibilityNotes';
import { NVML_UNATTRIBUTED_NOTE_AFTER_S } from './NvmlAttributionClock';
import { gpuFigures } from './gpuFigures';
import { ModelChange } from './IKernelMemoryModel';
import {
  GiB,
  makeCpuSample,
  makeGpu,
  makeHello,
  makeSample,
  MiB,
  wire
} from '../testing/fixtures';

function newModel(capacity = 100): {
  model: KernelMemoryModel;
  changes: ModelChange[];
} {
  const model = new KernelMemoryModel({ historyCapacity: capacity });
  const changes: ModelChange[] = [];
  model.changed.connect((_, c) => changes.push(c));
  return { model, changes };
}

describe('MonitorState', () => {
  it('has a reason for every state', () => {
    for (const state of MONITOR_STATES) {
      expect(describeState(state).length).toBeGreaterThan(5);
    }
    expect(describeState('non-python', 'R')).toContain('runs R');
    expect(describeState('helper-failed', 'ImportError: x')).toContain(
      'ImportError: x'
    );
  });
});

describe('KernelMemoryModel', () => {
  it('starts waiting for a kernel, with no figures', () => {
    const { model } = newModel();
    expect(model.state).toBe('kernel-starting');
    expect(model.latest).toBeNull();
    expect(model.sampleCount).toBe(0);
    expect(model.lastSampleTime).toBeNull();
  });

  it('goes live on hello and reports who the helper is', () => {
    const { model, changes } = newModel();
    model.setState('bootstrapping');
    const result = model.ingest(wire(makeHello()));
    expect(result.kind).toBe('message');
    expect(model.state).toBe('live');
    expect(model.stateReason).toContain('4242');
    expect(model.stateReason).toContain('node-1');
    expect(model.hello?.helper_version).toBe('0.1.0');
    expect(changes).toContain('hello');
    expect(changes).toContain('state');
  });

  it('takes in samples: latest, count, time and history', () => {
    const { model, changes } = newModel();
    model.ingest(wire(makeHello()));
    model.ingest(wire(makeSample({ seq: 1, time: 100 })));
    model.ingest(
      wire(
        makeSample({
          seq: 2,
          time: 101,
          gpus: [
            makeGpu({
              torch: { ...makeGpu().torch!, allocated_bytes: 5 * GiB }
            })
          ]
        })
      )
    );
    expect(model.sampleCount).toBe(2);
    expect(model.lastSampleTime).toBe(101);
    expect(model.latest?.seq).toBe(2);
    expect(changes.filter(c => c === 'sample')).toHaveLength(2);
    const win = model.history.window(-Infinity);
    expect(Array.from(win.times)).toEqual([100, 101]);
    expect(Array.from(win.series.get(SeriesKey.gpu(0, 'allocated'))!)).toEqual([
      1 * GiB,
      5 * GiB
    ]);
    expect(Array.from(win.series.get(SeriesKey.gpu(0, 'reserved'))!)).toEqual([
      2 * GiB,
      2 * GiB
    ]);
    expect(Array.from(win.series.get(SeriesKey.gpu(0, 'process'))!)).toEqual([
      2.5 * GiB,
      2.5 * GiB
    ]);
    expect(Array.from(win.series.get(SeriesKey.hostRss)!)).toEqual([
      512 * MiB,
      512 * MiB
    ]);
  });

  it('records unknown figures as gaps, not zeros', () => {
    const { model } = newModel();
    model.ingest(
      wire(
        makeSample({
          host: {
            rss_bytes: null,
            total_bytes: null,
            available_bytes: null,
            container: null
          }
        })
      )
    );
    expect(model.history.latest(SeriesKey.hostRss)).toBeNaN();
  });

  it('makes a protocol mismatch visible and ignores that helper\u2019s samples', () => {
    const { model } = newModel();
    model.setState('bootstrapping');
    model.ingest({ type: 'hello', protocol: 2, helper_version: '2.0.0' });
    expect(model.state).toBe('protocol-mismatch');
    expect(model.stateReason).toContain('protocol 2');
    expect(model.stateReason).toContain('2.0.0');
    model.ingest(wire(makeSample()));
    expect(model.sampleCount).toBe(0);
    expect(model.state).toBe('protocol-mismatch');
  });

  it('shows malformed data as a note (and on the console) and carries on', () => {
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    const { model } = newModel();
    model.ingest(wire(makeHello()));
    const result = model.ingest({ type: 'sample', seq: 'one' });
    expect(result.kind).toBe('malformed');
    expect(model.state).toBe('live');
    const note = model.notes.find(n => n.id === 'helper-problem');
    expect(note?.text).toContain('sample.seq');
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('sample.seq'));
    warn.mockRestore();
    // A good sample after a bad one is still taken in.
    model.ingest(wire(makeSample()));
    expect(model.sampleCount).toBe(1);
  });

  it('shows helper errors without a request id as a note', () => {
    const { model } = newModel();
    model.ingest({
      type: 'error',
      request_id: null,
      code: 'internal',
      message: 'sampler crashed: KeyError'
    });
    expect(model.notes.map(n => n.text).join()).toContain(
      'sampler crashed: KeyError'
    );
  });

  it('ignores message types of other features without a warning', () => {
    const { model, changes } = newModel();
    const result = model.ingest({ type: 'oom_report', cell_id: 'c1' });
    expect(result.kind).toBe('unsupported');
    expect(model.notes).toEqual([]);
    expect(changes).toEqual([]);
  });

  it('leaves replies to the connection', () => {
    const { model, changes } = newModel();
    const result = model.ingest({
      type: 'reply',
      request_id: 'r1',
      request_type: 'ping',
      result: {}
    });
    expect(result.kind).toBe('message');
    expect(changes).toEqual([]);
  });

  it('tracks busy/idle, emitting only on change', () => {
    const { model, changes } = newModel();
    model.setKernelBusy(true);
    model.setKernelBusy(true);
    expect(model.kernelBusy).toBe(true);
    model.setKernelBusy(false);
    expect(changes).toEqual(['busy', 'busy']);
  });

  it('says what keeps the kernel busy: a cell unless told it is the helper starting', () => {
    const { model, changes } = newModel();
    expect(model.kernelBusyWith).toBeNull();
    model.setKernelBusy(true, 'helper');
    expect(model.kernelBusyWith).toBe('helper');
    // The helper is done, and a cell queued behind it runs.
    model.setKernelBusy(true);
    expect(model.kernelBusyWith).toBe('cell');
    model.setKernelBusy(true);
    model.setKernelBusy(false, 'helper');
    expect(model.kernelBusyWith).toBeNull();
    expect(changes).toEqual(['busy', 'busy', 'busy']);
  });

  it('forgets the current figures on a new session but keeps the timeline and the count', () => {
    const { model } = newModel();
    model.ingest(wire(makeHello()));
    model.ingest(wire(makeSample()));
    model.startKernelSession();
    expect(model.hello).toBeNull();
    expect(model.latest).toBeNull();
    expect(model.history.length).toBe(1); // the timeline is the notebook's
    expect(model.history.marks).toEqual([]); // a new connection ends no process
    expect(model.sampleCount).toBe(1);
  });

  it('changes its history capacity live', () => {
    const { model } = newModel(10);
    for (let i = 0; i < 10; i++) {
      model.ingest(wire(makeSample({ seq: i, time: i })));
    }
    model.setHistoryCapacity(4);
    expect(model.history.length).toBe(4);
    expect(model.history.window(-Infinity).times[0]).toBe(6);
  });

  it('does not emit a state change for the same state and reason', () => {
    const { model, changes } = newModel();
    model.setState('bootstrapping');
    model.setState('bootstrapping');
    expect(changes).toEqual(['state']);
  });
});

describe('visibility notes', () => {
  const ids = (inputs: Parameters<typeof deriveVisibilityNotes>[0]) =>
    deriveVisibilityNotes(inputs).map(n => n.id);

  it('says nothing before the helper spoke', () => {
    expect(
      ids({
        hello: null,
        sample: null,
        problem: null,
        nvmlUnattributedForS: null
      })
    ).toEqual([]);
  });

  it('explains a CPU-only kernel without torch', () => {
    expect(
      ids({
        hello: makeHello({ torch: null, devices: [] }),
        sample: makeCpuSample(),
        problem: null,
        nvmlUnattributedForS: null
      })
    ).toEqual(['no-gpu', 'torch-not-imported']);
  });

  it('says CUDA is not initialised when torch is imported but idle', () => {
    const sample = makeSample({
      torch: { imported: true, cuda_initialized: false },
      gpus: [makeGpu({ torch: null })]
    });
    expect(
      ids({
        hello: makeHello(),
        sample,
        problem: null,
        nvmlUnattributedForS: null
      })
    ).toEqual(['cuda-not-initialized']);
  });

  it('uses the hello alone before the first sample', () => {
    const hello = makeHello({
      torch: { version: '2.5.1', cuda_build: null, cuda_initialized: false }
    });
    expect(
      ids({ hello, sample: null, problem: null, nvmlUnattributedForS: null })
    ).toEqual(['cuda-not-initialized']);
  });

  it('gives the reason NVML is unavailable', () => {
    const hello = makeHello({
      nvml: {
        available: false,
        driver_version: null,
        error: 'pynvml is not installed'
      }
    });
    const notes = deriveVisibilityNotes({
      hello,
      sample: makeSample({ gpus: [makeGpu({ nvml: null })] }),
      problem: null,
      nvmlUnattributedForS: null
    });
    const nvml = notes.find(n => n.id === 'nvml-unavailable');
    expect(nvml?.text).toContain('pynvml is not installed');
  });

  it('notes when NVML cannot attribute this process, once that has lasted', () => {
    const sample = makeSample({
      gpus: [
        makeGpu({
          nvml: { used_bytes: 1, total_bytes: 2, process_used_bytes: null }
        })
      ]
    });
    const since = (seconds: number) => ({
      hello: makeHello(),
      sample,
      problem: null,
      nvmlUnattributedForS: seconds
    });
    // Right after CUDA starts, NVML's list can lack the kernel for a moment: no note yet.
    expect(ids(since(0))).not.toContain('nvml-no-process');
    expect(ids(since(NVML_UNATTRIBUTED_NOTE_AFTER_S - 0.25))).not.toContain(
      'nvml-no-process'
    );
    expect(ids(since(NVML_UNATTRIBUTED_NOTE_AFTER_S))).toContain(
      'nvml-no-process'
    );
    // The caller's run of unattributed samples ended: no note, whatever the sample says.
    expect(ids({ ...since(0), nvmlUnattributedForS: null })).not.toContain(
      'nvml-no-process'
    );
  });

  it('counts how long NVML has not attributed the kernel from its own samples', () => {
    const { model } = newModel();
    const unattributed = (time: number) =>
      makeSample({
        time,
        gpus: [
          makeGpu({
            nvml: { used_bytes: 1, total_bytes: 2, process_used_bytes: null }
          })
        ]
      });
    const noteIds = () => model.notes.map(n => n.id);
    model.ingest(wire(unattributed(100)));
    model.ingest(wire(unattributed(101)));
    expect(noteIds()).not.toContain('nvml-no-process');
    model.ingest(wire(unattributed(102)));
    expect(noteIds()).toContain('nvml-no-process');
    model.ingest(wire(makeSample({ time: 103 }))); // named: the run ends
    expect(noteIds()).not.toContain('nvml-no-process');
    model.ingest(wire(unattributed(104)));
    expect(noteIds()).not.toContain('nvml-no-process'); // a new run starts from its own first sample
    model.dispose();
  });

  describe('when no sample follows the first unattributed one', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('shows the note once it has lasted, without waiting for the next sample', () => {
      const { model, changes } = newModel();
      const unattributed = (time: number) =>
        makeSample({
          time,
          gpus: [
            makeGpu({
              nvml: { used_bytes: 1, total_bytes: 2, process_used_bytes: null }
            })
          ]
        });
      const noteIds = () => model.notes.map(n => n.id);
      model.ingest(wire(unattributed(100)));
      model.ingest(wire(unattributed(100.5))); // half a second of it by the kernel's clock
      changes.length = 0;
      // The figures settle: the helper's next sample is a heartbeat, up to 10 s away.
      jest.advanceTimersByTime(
        (NVML_UNATTRIBUTED_NOTE_AFTER_S - 0.5) * 1000 - 10
      );
      expect(noteIds()).not.toContain('nvml-no-process');
      jest.advanceTimersByTime(10);
      expect(noteIds()).toContain('nvml-no-process');
      expect(changes).toEqual(['notes']);
      model.dispose();
    });

    it('forgets the pending note when NVML names the kernel, or the kernel restarts, or the model goes', () => {
      const unattributed = makeSample({
        time: 100,
        gpus: [
          makeGpu({
            nvml: { used_bytes: 1, total_bytes: 2, process_used_bytes: null }
          })
        ]
      });
      const named = newModel();
      named.model.ingest(wire(unattributed));
      named.model.ingest(wire(makeSample({ time: 101 })));
      const restarted = newModel();
      restarted.model.ingest(wire(unattributed));
      restarted.model.startKernelSession();
      const disposed = newModel();
      disposed.model.ingest(wire(unattributed));
      disposed.model.dispose();
      expect(jest.getTimerCount()).toBe(0);
      jest.advanceTimersByTime(60_000);
      expect(named.model.notes.map(n => n.id)).not.toContain('nvml-no-process');
      expect(restarted.model.notes.map(n => n.id)).not.toContain(
        'nvml-no-process'
      );
      named.model.dispose();
      restarted.model.dispose();
    });
  });

  it('notes TensorFlow, with a warning once it grabbed its GPUs', () => {
    const seen = makeSample({
      tensorflow: { imported: true, gpus_initialized: false }
    });
    expect(
      ids({
        hello: makeHello(),
        sample: seen,
        problem: null,
        nvmlUnattributedForS: null
      })
    ).toContain('tensorflow-imported');
    const grabbed = makeSample({
      tensorflow: { imported: true, gpus_initialized: true }
    });
    const notes = deriveVisibilityNotes({
      hello: makeHello(),
      sample: grabbed,
      problem: null,
      nvmlUnattributedForS: null
    });
    expect(notes.find(n => n.id === 'tensorflow-gpus')?.severity).toBe(
      'warning'
    );
  });

  it('says MIG instances named in CUDA_VISIBLE_DEVICES show once CUDA starts, not that there is no GPU', () => {
    const hello = {
      ...makeHello({ devices: [] }),
      devices_wait_for_cuda: true
    };
    const sample = makeSample({
      gpus: [],
      torch: { imported: true, cuda_initialized: false }
    });
    const notes = deriveVisibilityNotes({
      hello,
      sample,
      problem: null,
      nvmlUnattributedForS: null
    });
    const text = notes.find(n => n.id === 'no-gpu')!.text;
    expect(text).toContain('CUDA_VISIBLE_DEVICES names MIG instances');
    expect(text).not.toContain('No GPU is visible');
    // The flag is parsed from the wire, and when it is absent, as from older
    // helpers, it reads as false.
    const parsed = parseKernelMessage(wire(hello));
    expect(
      parsed.kind === 'message' && (parsed.message as any).devices_wait_for_cuda
    ).toBe(true);
    const old = parseKernelMessage(wire(makeHello()));
    expect(
      old.kind === 'message' && (old.message as any).devices_wait_for_cuda
    ).toBeUndefined();
  });

  it('says which CUDA_VISIBLE_DEVICES hides the GPUs NVML lists, from the hello and then each sample', () => {
    const hello = {
      ...makeHello({ devices: [] }),
      hidden_gpus: { count: 2, cuda_visible_devices: '' }
    };
    const before = deriveVisibilityNotes({
      hello,
      sample: null,
      problem: null,
      nvmlUnattributedForS: null
    });
    expect(before.find(n => n.id === 'no-gpu')!.text).toBe(
      'No GPU is visible to this kernel: its CUDA_VISIBLE_DEVICES is empty, which hides all 2 GPUs ' +
        'NVML lists on this machine. Showing host RAM only. To use them, change or unset it before ' +
        "the kernel's first CUDA call (CUDA reads it once: after that, only a restarted kernel sees a change)."
    );
    // The sample is fresher: a cell set it to a wrong index since, or unset it.
    const wrong = makeCpuSample({
      hidden_gpus: { count: 1, cuda_visible_devices: '3' }
    });
    const text = deriveVisibilityNotes({
      hello,
      sample: wrong,
      problem: null,
      nvmlUnattributedForS: null
    }).find(n => n.id === 'no-gpu')!.text;
    expect(text).toContain(
      'its CUDA_VISIBLE_DEVICES is "3", which hides the GPU NVML lists'
    );
    const unset = deriveVisibilityNotes({
      hello,
      sample: makeCpuSample(),
      problem: null,
      nvmlUnattributedForS: null
    });
    expect(unset.find(n => n.id === 'no-gpu')!.text).toBe(
      'No GPU is visible to this kernel: showing host RAM only.'
    );
    // A long value is cut.
    const long = makeCpuSample({
      hidden_gpus: { count: 1, cuda_visible_devices: 'GPU-' + 'f'.repeat(200) }
    });
    expect(
      deriveVisibilityNotes({
        hello,
        sample: long,
        problem: null,
        nvmlUnattributedForS: null
      }).find(n => n.id === 'no-gpu')!.text
    ).toContain(`"GPU-${'f'.repeat(56)}\u2026"`);
  });

  it('reads hidden_gpus from the wire, absent from older helpers, and refuses a malformed one', () => {
    const parsedHello = parseKernelMessage(
      wire({
        ...makeHello({ devices: [] }),
        hidden_gpus: { count: 2, cuda_visible_devices: '-1' }
      })
    );
    expect(
      parsedHello.kind === 'message' && (parsedHello.message as any).hidden_gpus
    ).toEqual({
      count: 2,
      cuda_visible_devices: '-1'
    });
    const older = parseKernelMessage(wire(makeHello()));
    expect(
      older.kind === 'message' && (older.message as any).hidden_gpus
    ).toBeUndefined();
    const olderSample: Record<string, unknown> = { ...makeCpuSample() };
    delete olderSample.hidden_gpus;
    const parsedSample = parseKernelMessage(wire(olderSample));
    expect(
      parsedSample.kind === 'message' &&
        (parsedSample.message as any).hidden_gpus
    ).toBeNull();
    for (const bad of [
      { count: 0, cuda_visible_devices: '' },
      { count: 1 },
      'hidden'
    ]) {
      expect(
        parseKernelMessage(wire({ ...makeCpuSample(), hidden_gpus: bad })).kind
      ).toBe('malformed');
    }
  });

  it('gives no TensorFlow GPU advice where no GPU can be', () => {
    // A CPU-only machine: NVML answers and lists none. TensorFlow's first
    // operation brings its runtime up all the same.
    const hello = makeHello({ devices: [] });
    for (const tensorflow of [
      { imported: true, gpus_initialized: false },
      { imported: true, gpus_initialized: true }
    ]) {
      const noted = ids({
        hello,
        sample: makeCpuSample({ tensorflow }),
        problem: null,
        nvmlUnattributedForS: null
      });
      expect(noted).toContain('no-gpu');
      expect(noted.filter(id => id.startsWith('tensorflow'))).toEqual([]);
    }
  });
});

describe('visibility notes before the sidebar loads', () => {
  // Each test ends by restoring the deriver, as the test set-up installs it.
  afterEach(() => deriveNotesWith(deriveVisibilityNotes));

  it('derives none at start-up, and the current ones when first read once the sidebar brought the deriver', () => {
    deriveNotesWith(null);
    const { model, changes } = newModel();
    model.ingest(wire(makeHello({ torch: null, devices: [] })));
    model.ingest(wire(makeCpuSample()));
    expect(model.notes).toEqual([]);
    expect(changes).not.toContain('notes');

    // This is what happens when the sidebar's code has loaded.
    deriveNotesWith(deriveVisibilityNotes);
    expect(model.notes.map(n => n.id)).toEqual([
      'no-gpu',
      'torch-not-imported'
    ]);
    // After the deriver came, a change of notes is announced as it happens.
    model.ingest(
      wire(
        makeCpuSample({
          time: 2,
          torch: { imported: true, cuda_initialized: false }
        })
      )
    );
    expect(changes).toContain('notes');
    expect(model.notes.map(n => n.id)).toEqual(['no-gpu']);
  });
});

describe('gpuFigures', () => {
  it('derives free, other processes and context from torch and NVML', () => {
    const f = gpuFigures(makeGpu());
    expect(f.total).toBe(80 * GiB);
    expect(f.allocated).toBe(1 * GiB);
    expect(f.reserved).toBe(2 * GiB);
    expect(f.cached).toBe(1 * GiB);
    expect(f.free).toBe(70 * GiB);
    expect(f.otherProcesses).toBe(7.5 * GiB);
    expect(f.contextAndLibraries).toBe(0.5 * GiB);
    expect(f.kernelUsed).toBe(2.5 * GiB);
    expect(f.usedPercent).toBeCloseTo(12.5);
    expect(f.fragmentation).toBe(100 * MiB);
  });

  it('keeps derived figures unknown when an input is', () => {
    const f = gpuFigures(makeGpu({ nvml: null }));
    expect(f.free).toBeNull();
    expect(f.otherProcesses).toBeNull();
    expect(f.kernelUsed).toBe(2 * GiB); // falls back to torch reserved
    expect(f.usedPercent).toBeCloseTo(2.5);
    const g = gpuFigures(makeGpu({ torch: null, nvml: null }));
    expect(g.allocated).toBeNull();
    expect(g.kernelUsed).toBeNull();
    expect(g.usedPercent).toBeNull();
  });

  it('takes the total from NVML or the hello device when the sample lacks it', () => {
    expect(gpuFigures(makeGpu({ total_bytes: null })).total).toBe(80 * GiB);
    expect(
      gpuFigures(makeGpu({ total_bytes: null, nvml: null }), {
        index: 0,
        name: 'X',
        total_bytes: 16 * GiB,
        uuid: null
      }).total
    ).toBe(16 * GiB);
  });

  it('uses TensorFlow figures when torch and NVML are absent', () => {
    const f = gpuFigures(
      makeGpu({
        torch: null,
        nvml: null,
        tensorflow: { current_bytes: 3 * GiB, peak_bytes: 4 * GiB }
      })
    );
    expect(f.tensorflowCurrent).toBe(3 * GiB);
    expect(f.tensorflowPeak).toBe(4 * GiB);
    expect(f.kernelUsed).toBe(3 * GiB);
  });

  it("takes free from NVML's own figure, which leaves out the driver's reservation too", () => {
    const gpu = makeGpu();
    const withFree = gpuFigures({
      ...gpu,
      nvml: { ...gpu.nvml!, free_bytes: 69 * GiB }
    });
    expect(withFree.free).toBe(69 * GiB);
    // An older helper: total less used.
    expect(gpuFigures(gpu).free).toBe(gpu.total_bytes! - gpu.nvml!.used_bytes!);
  });

  it('counts both frameworks in what the kernel holds when NVML cannot say', () => {
    const f = gpuFigures(
      makeGpu({
        nvml: null,
        tensorflow: { current_bytes: 3 * GiB, peak_bytes: 4 * GiB }
      })
    );
    expect(f.reserved).toBe(2 * GiB);
    expect(f.kernelUsed).toBe(5 * GiB);
  });
});
