/** The diagnosis figures now, from the latest sample, beside those at the failure. */
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { oomFiguresNow } from './oomNow';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { OomDiagnosisView } from './OomDiagnosisView';
import { makeOomDiagnosis, oomRecord } from '../../testing/cellFixtures';
import {
  GiB,
  makeCpuSample,
  makeGpu,
  makeHello,
  makeSample,
  MiB,
  wire
} from '../../testing/fixtures';

const diagnosis = makeOomDiagnosis;

describe('the diagnosis figures now, beside those at the failure', () => {
  /** GPU 0 after a fix: 1 GiB in tensors of 2 GiB reserved, NVML 40 of 80 GiB used (3 GiB by the kernel, 2 GiB by pid 4242). */
  function sampleAfterFix() {
    return makeSample({
      gpus: [
        makeGpu({
          index: 0,
          torch: {
            ...makeGpu().torch!,
            allocated_bytes: GiB,
            reserved_bytes: 2 * GiB
          },
          nvml: {
            used_bytes: 40 * GiB,
            total_bytes: 80 * GiB,
            process_used_bytes: 3 * GiB,
            processes: [
              { pid: 1, used_bytes: 3 * GiB, this_process: true },
              { pid: 4242, used_bytes: 2 * GiB, this_process: false }
            ]
          }
        })
      ]
    });
  }

  it('reads from the latest sample the figures it also has, for the failed device', () => {
    expect(oomFiguresNow(diagnosis(), sampleAfterFix())).toEqual({
      free: 40 * GiB,
      process: 3 * GiB,
      allocated: GiB,
      reservedUnallocated: GiB,
      otherProcesses: 2 * GiB
    });
    // Another device failed, no sample yet: nothing to say.
    expect(
      oomFiguresNow(diagnosis({ device_index: 1 }), sampleAfterFix())
    ).toEqual({});
    expect(oomFiguresNow(diagnosis(), null)).toEqual({});
    // A process NVML gives no size for: no total of the others.
    const unknownOther = sampleAfterFix();
    unknownOther.gpus[0].nvml!.processes![1].used_bytes = null;
    expect(
      oomFiguresNow(diagnosis(), unknownOther).otherProcesses
    ).toBeUndefined();
    // In a container NVML lists this kernel by a host pid it cannot tell as its own
    // (process_used_bytes null): the others' total would count this kernel too.
    const container = sampleAfterFix();
    container.gpus[0].nvml!.process_used_bytes = null;
    for (const p of container.gpus[0].nvml!.processes!) {
      p.this_process = false;
    }
    expect(
      oomFiguresNow(diagnosis(), container).otherProcesses
    ).toBeUndefined();
  });

  it('host RAM: what is available and the kernel RSS', () => {
    const host = diagnosis({ kind: 'host', device_index: null });
    const sample = makeCpuSample({
      host: {
        rss_bytes: 600 * MiB,
        total_bytes: 64 * GiB,
        available_bytes: 50 * GiB,
        container: null
      }
    });
    expect(oomFiguresNow(host, sample)).toEqual({
      free: 50 * GiB,
      process: 600 * MiB
    });
  });

  it('the view shows each one after the figure at the failure, and follows the samples', () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeHello()));
    const view = new OomDiagnosisView({
      settings: { ...DEFAULT_SETTINGS },
      run: jest.fn()
    });
    view.model = model;
    Widget.attach(view, document.body);
    model.ingest(
      wire({
        type: 'cells',
        records: [oomRecord({ record_id: 1, oom: diagnosis() })]
      })
    );
    MessageLoop.flush();
    const now = (figure: string) =>
      view.node.querySelector<HTMLElement>(
        `[data-vram-role="oom-figure-now"][data-vram-figure="${figure}"]`
      )!;
    // No sample since the failure was read here: nothing beside the figures.
    expect(now('allocated').textContent).toBe('');
    model.ingest(wire(sampleAfterFix()));
    MessageLoop.flush();
    const allocated = now('allocated');
    expect(allocated.parentElement!.textContent).toBe('70 GiBnow 1 GiB'); // two lines (CSS)
    expect(allocated.dataset.vramBytes).toBe(String(GiB));
    expect(now('requested').textContent).toBe(''); // no sample reads what was asked for
    model.ingest(wire({ ...sampleAfterFix(), time: 1732200001, gpus: [] }));
    MessageLoop.flush();
    expect(now('allocated')).toBe(allocated); // updated in place, not rebuilt
    expect(allocated.textContent).toBe('');
    view.dispose();
  });
});
