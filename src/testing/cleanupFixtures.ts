/**
 * Replies to the cleanup requests, shaped as docs/protocol.md specifies.
 */
import {
  DeleteResult,
  FreeMemoryResult,
  HiddenHolder,
  HolderEntry,
  InspectResult,
  MemorySnapshot
} from '../protocol/cleanup';
import { GiB, MiB } from './fixtures';

export function snapshot(
  rss: number | null,
  gpus: [number, number | null, number | null, number | null][] = []
): MemorySnapshot {
  return {
    host: { rss_bytes: rss },
    gpus: gpus.map(([index, allocated, reserved, nvml]) => ({
      index,
      allocated_bytes: allocated,
      reserved_bytes: reserved,
      nvml_used_bytes: nvml
    }))
  };
}

export function makeFreeResult(
  overrides: Partial<FreeMemoryResult> = {}
): FreeMemoryResult {
  return {
    actions_run: ['gc', 'empty_cache'],
    gc_collected: 1234,
    empty_cache: 'done',
    before: snapshot(2 * GiB, [[0, 1 * GiB, 4.2 * GiB, 5 * GiB]]),
    after: snapshot(2 * GiB - 120 * MiB, [[0, 1 * GiB, 1 * GiB, 1.8 * GiB]]),
    elapsed_ms: 12.5,
    ...overrides
  };
}

export function makeEntry(overrides: Partial<HolderEntry> = {}): HolderEntry {
  return {
    name: 'x',
    kind: 'tensor',
    type_name: 'Tensor',
    summary: 'float32[1024, 1024] cuda:0',
    bytes_by_device: { 'cuda:0': 4 * MiB },
    total_bytes: 4 * MiB,
    shared_with: [],
    shared_bytes: 0,
    shared_bytes_by_device: {},
    counted_under: [],
    output_cache_refs: [],
    deletable: true,
    refusal: null,
    graph_holding: null,
    truncated: false,
    ...overrides
  };
}

export function makeHidden(
  overrides: Partial<HiddenHolder> = {}
): HiddenHolder {
  return {
    holder: 'last_traceback',
    label: 'Last traceback (ZeroDivisionError)',
    bytes_by_device: { cpu: 1 * MiB },
    total_bytes: 1 * MiB,
    named_bytes_by_device: {},
    summary: 'frames of the failed cell',
    warning: 'Clearing the traceback disables %debug for that error',
    ...overrides
  };
}

export function makeListing(
  overrides: Partial<InspectResult> = {}
): InspectResult {
  return {
    listing_id: 'L1',
    elapsed_ms: 3,
    truncated: false,
    entries: [
      makeEntry({
        name: 'model',
        kind: 'module',
        type_name: 'Linear',
        summary: 'Linear: 3 params + grads',
        bytes_by_device: { 'cuda:0': 1 * GiB },
        total_bytes: 1 * GiB
      }),
      makeEntry({
        name: 'a',
        bytes_by_device: { 'cuda:0': 256 * MiB },
        total_bytes: 256 * MiB,
        shared_with: ['b'],
        output_cache_refs: ['Out[3]', '_']
      }),
      makeEntry({
        name: 'b',
        bytes_by_device: {},
        total_bytes: 0,
        shared_with: ['a'],
        shared_bytes: 256 * MiB,
        shared_bytes_by_device: { 'cuda:0': 256 * MiB },
        counted_under: ['a']
      }),
      makeEntry({
        name: 'np_arr',
        kind: 'ndarray',
        type_name: 'ndarray',
        summary: 'float64[1000, 1000]',
        bytes_by_device: { cpu: 8 * MiB },
        total_bytes: 8 * MiB
      }),
      makeEntry({
        name: 'torch',
        kind: 'other',
        type_name: 'module',
        summary: 'module torch',
        bytes_by_device: { cpu: 2 * MiB },
        total_bytes: 2 * MiB,
        deletable: false,
        refusal: 'modules are not deleted'
      })
    ],
    hidden: [
      makeHidden({
        holder: 'output_cache',
        label: 'Output cache (Out, _)',
        bytes_by_device: { 'cuda:0': 256 * MiB },
        total_bytes: 256 * MiB,
        summary: '2 entries',
        warning: null
      }),
      makeHidden()
    ],
    ...overrides
  };
}

export function makeDeleteResult(
  overrides: Partial<DeleteResult> = {}
): DeleteResult {
  return {
    deleted: ['np_arr'],
    refused: [],
    cleared: [],
    still_alive: [],
    before: snapshot(1 * GiB),
    after: snapshot(1 * GiB - 8 * MiB),
    elapsed_ms: 20,
    ...overrides
  };
}
