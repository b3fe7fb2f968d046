/**
 * Message fixtures shaped exactly like docs/protocol.md's examples, and a
 * monitor driven by hand for the views.
 */
import { Signal } from '@lumino/signaling';

import { HelloMessage } from '../protocol/messages';
import { GpuSample, NvmlGpuProcess, SampleMessage } from '../protocol/sample';
import { DEFAULT_SETTINGS, VramSettings } from '../settings/settings';
import { IKernelMemoryModel } from '../model/IKernelMemoryModel';
import type { IVramMonitor } from '../monitor/IVramMonitor';

/** Kernel text that must show as text and never become an element. */
export const EVIL = '<img src=x onerror=alert(1)>';

export const GiB = 1024 ** 3;
export const MiB = 1024 ** 2;

export function makeHello(overrides: Partial<HelloMessage> = {}): HelloMessage {
  return {
    type: 'hello',
    protocol: 1,
    helper_version: '0.1.0',
    python: '3.11.7',
    pid: 4242,
    hostname: 'node-1',
    record_series: 'series-1',
    torch: { version: '2.5.1', cuda_build: '12.4', cuda_initialized: true },
    tensorflow: null,
    nvml: { available: true, driver_version: '550.54', error: null },
    devices: [
      {
        index: 0,
        name: 'NVIDIA H100 80GB HBM3',
        total_bytes: 80 * GiB,
        uuid: 'GPU-0000'
      }
    ],
    config: {
      interval_s: 1,
      change_threshold_bytes: MiB,
      heartbeat_s: 10,
      reset_peak_per_cell: true
    },
    ...overrides
  };
}

export function makeGpu(overrides: Partial<GpuSample> = {}): GpuSample {
  return {
    index: 0,
    name: 'NVIDIA H100 80GB HBM3',
    total_bytes: 80 * GiB,
    torch: {
      allocated_bytes: 1 * GiB,
      reserved_bytes: 2 * GiB,
      peak_allocated_bytes: 3 * GiB,
      active_bytes: 1 * GiB,
      inactive_split_bytes: 100 * MiB,
      num_ooms: 0,
      num_alloc_retries: 0
    },
    nvml: {
      used_bytes: 10 * GiB,
      total_bytes: 80 * GiB,
      process_used_bytes: 2.5 * GiB
    },
    tensorflow: null,
    ...overrides
  };
}

export function makeSample(
  overrides: Partial<SampleMessage> = {}
): SampleMessage {
  return {
    type: 'sample',
    seq: 1,
    time: 1732200000.25,
    reason: 'change',
    host: {
      rss_bytes: 512 * MiB,
      total_bytes: 64 * GiB,
      available_bytes: 40 * GiB,
      container: null
    },
    torch: { imported: true, cuda_initialized: true },
    tensorflow: { imported: false, gpus_initialized: false },
    gpus: [makeGpu()],
    hidden_gpus: null,
    ...overrides
  };
}

/**
 * A sample whose GPU `index` lists `processes`. NVML reports 10 of 80 GiB
 * used, 2 GiB of it by the kernel.
 */
export function makeNvmlProcessSample(
  processes: NvmlGpuProcess[] | null,
  index = 0
): SampleMessage {
  return makeSample({
    gpus: [
      makeGpu({
        index,
        nvml: {
          used_bytes: 10 * GiB,
          total_bytes: 80 * GiB,
          process_used_bytes: 2 * GiB,
          processes
        }
      })
    ]
  });
}

/** A sample without any GPU, as from a CPU-only kernel. */
export function makeCpuSample(
  overrides: Partial<SampleMessage> = {}
): SampleMessage {
  return makeSample({
    torch: { imported: false, cuda_initialized: false },
    gpus: [],
    ...overrides
  });
}

/**
 * Sends a value through a JSON round trip, which gives what actually arrives
 * over the wire.
 */
export function wire<T>(message: T): unknown {
  return JSON.parse(JSON.stringify(message));
}

/**
 * The monitor that the sidebar follows, with its current model and settings set
 * by hand.
 */
export class FakeMonitor implements IVramMonitor {
  current: IKernelMemoryModel | null = null;
  currentChanged: Signal<IVramMonitor, IKernelMemoryModel | null> = new Signal(
    this
  );
  settings: VramSettings = { ...DEFAULT_SETTINGS };
  settingsChanged: Signal<IVramMonitor, VramSettings> = new Signal(this);
  async refresh() {
    return { seq: 0 };
  }
  setCurrent(model: IKernelMemoryModel | null) {
    this.current = model;
    this.currentChanged.emit(model);
  }
  setSettings(settings: VramSettings) {
    this.settings = settings;
    this.settingsChanged.emit(settings);
  }
}
