/**
 * Tests for the diagnosis figures as they are now: they are read from the
 * latest sample and shown beside those at the failure, so that the user can
 * see whether a fix helped.
 */
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
  /**
   * Returns a sample of GPU 0 after a fix: 1 GiB in tensors out of 2 GiB
   * reserved, and NVML counting 40 of 80 GiB used (3 GiB by the kernel and
   * 2 GiB by pid 4242).
   */
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
    // There is nothing to say when the sample has no reading of the device that
    // failed, or when there is no sample yet.
    expect(
      oomFiguresNow(diagnosis({ device_index: 1 }), sampleAfterFix())
    ).toEqual({});
    expect(oomFiguresNow(diagnosis(), null)).toEqual({});
    // When NVML gives no size for one of the other processes, their total is
    // unknown, so none is given.
    const unknownOther = sampleAfterFix();
    unknownOther.gpus[0].nvml!.processes![1].used_bytes = null;
    expect(
      oomFiguresNow(diagnosis(), unknownOther).otherProcesses
    ).toBeUndefined();
    // In a container NVML lists this kernel by a host pid that the kernel cannot
    // recognise as its own (so process_used_bytes is null). A total of the
    // others would then count this kernel too, so none is given.
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
    // No sample has arrived since the failure was read, so nothing is shown
    // beside the figures.
    expect(now('allocated').textContent).toBe('');
    model.ingest(wire(sampleAfterFix()));
    MessageLoop.flush();
    const allocated = now('allocated');
    // The figure at the failure and the one now run together in the text;
    // CSS shows them on two lines.
    expect(allocated.parentElement!.textContent).toBe('70 GiBnow 1 GiB');
    expect(allocated.dataset.vramBytes).toBe(String(GiB));
    // No sample reads what the failed request asked for, so it has no figure now.
    expect(now('requested').textContent).toBe('');
    model.ingest(wire({ ...sampleAfterFix(), time: 1732200001, gpus: [] }));
    MessageLoop.flush();
    expect(now('allocated')).toBe(allocated); // The element is updated in place, not rebuilt.
    expect(allocated.textContent).toBe('');
    view.dispose();
  });
});
