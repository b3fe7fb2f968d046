/**
 * The set-up the allocation-sites specs share: recording states, a listing as
 * the kernel sends it, and a recorder of a live kernel over a fake connection.
 */
import { Signal } from '@lumino/signaling';

import {
  AllocationSitesResult,
  parseAllocationSites,
  RecordingState
} from '../protocol/allocation';
import { AllocationRecorder } from '../features/allocations/AllocationRecorder';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { DEFAULT_SETTINGS } from '../settings/settings';
import { MiB } from './fixtures';

export const ON: RecordingState = {
  enabled: true,
  host: {
    state: 'recording',
    frames: 16,
    started: 1.5,
    overhead_bytes: 5 * MiB,
    restarted_at: null,
    restart_reason: null
  },
  gpu: {
    state: 'waiting',
    max_entries: 100000,
    started: null,
    allocated_before_bytes: null,
    reason:
      'CUDA is not initialised yet: recording starts at the first cell boundary after it is',
    restarted_at: null,
    restart_kept_stacks: null,
    restart_reason: null
  }
};

export const OFF: RecordingState = {
  enabled: false,
  host: {
    state: 'off',
    frames: null,
    started: null,
    overhead_bytes: 0,
    restarted_at: null,
    restart_reason: null
  },
  gpu: {
    state: 'off',
    max_entries: null,
    started: null,
    allocated_before_bytes: null,
    reason: null,
    restarted_at: null,
    restart_kept_stacks: null,
    restart_reason: null
  }
};

/**
 * 12:03:04 today, local time, in seconds since the epoch, which is how the
 * kernel sends times.
 */
export const AT_12_03_04 = new Date(2024, 10, 21, 12, 3, 4).getTime() / 1000;

/**
 * The recording state after the settings changed: tracemalloc restarted at
 * 32 frames, and the GPU history was resized.
 */
export const RESTARTED: RecordingState = {
  enabled: true,
  host: {
    state: 'recording',
    frames: 32,
    started: AT_12_03_04,
    overhead_bytes: MiB,
    restarted_at: AT_12_03_04,
    restart_reason: 'frames'
  },
  gpu: {
    state: 'recording',
    max_entries: 200_000,
    started: 1.5,
    allocated_before_bytes: 0,
    reason: null,
    restarted_at: AT_12_03_04 + 1,
    restart_kept_stacks: true,
    restart_reason: 'max_entries'
  }
};

/**
 * A reply as the kernel sends it, in the shape that
 * tests/e2e/test_allocation_sites_e2e.py checks.
 */
export function kernelListing(): unknown {
  return {
    recording: ON,
    elapsed_ms: 12.5,
    devices: [
      {
        device: 'host',
        total_bytes: 60_000_000,
        count: 5020,
        unattributed_bytes: 0,
        helper_bytes: 2048,
        helper_count: 6,
        truncated: false,
        sites: [
          {
            device: 'host',
            cell: { execution_count: 7, cell_id: null, line: 2 },
            frame: null,
            code: 'data = json.loads(text)',
            library_frame: {
              filename: '/usr/lib/python3.11/json/decoder.py',
              line: 353,
              function: null
            },
            bytes: 5_000_000,
            count: 5001
          },
          {
            device: 'host',
            cell: { execution_count: 9, cell_id: 'cell-a', line: 3 },
            frame: null,
            code: 'big = np.zeros(4_000_000)',
            library_frame: null,
            bytes: 32_000_112,
            count: 1
          },
          {
            device: 'host',
            cell: null,
            frame: {
              filename: '/venv/lib/site-packages/pandas/core/frame.py',
              line: 702,
              function: 'f'
            },
            code: null,
            library_frame: null,
            bytes: 80_000,
            count: 12
          }
        ]
      }
    ],
    cells: [
      {
        execution_count: 9,
        cell_id: 'cell-a',
        alive_bytes: { host: 32_000_112 },
        total_bytes: 32_000_112
      }
    ]
  };
}

export function parsedListing(): AllocationSitesResult {
  const parsed = parseAllocationSites(kernelListing());
  if (!('value' in parsed)) {
    throw new Error(parsed.error);
  }
  return parsed.value;
}

function fakeConnection() {
  const otherMessage = new Signal<unknown, unknown>({});
  return {
    otherMessage,
    recordAllocations: jest.fn(async (request: { enabled: boolean }) =>
      request.enabled ? ON : OFF
    ),
    allocationSites: jest.fn(async () => parsedListing()),
    allocationSnapshot: jest.fn(async () => ({
      format: 'pickle',
      data_base64: null,
      bytes: 0,
      reason: 'x'
    }))
  };
}

/**
 * A recorder of a live kernel. `settings` is read at each request, so that
 * a test may change it.
 */
export function liveRecorder(settings = { frames: 8, entries: 5000 }) {
  const model = new KernelMemoryModel({ historyCapacity: 10 });
  model.setState('live');
  const connection = fakeConnection();
  const recorder = new AllocationRecorder({
    connection,
    model,
    settings: () => ({
      ...DEFAULT_SETTINGS,
      allocationHostFrames: settings.frames,
      allocationHistoryMaxEntries: settings.entries
    })
  });
  return { model, connection, recorder };
}
