/**
 * Wire types and parser of the out-of-memory diagnosis that a
 * cell record carries as `oom` when the cell died of out-of-memory
 * (docs/protocol.md, `cell`). The kernel sends numbers and cause ids; the
 * frontend turns them into words (features/oom/oomExplanation.ts) and actions
 * (features/oom/oomActions.ts).
 */
import { AllocationSite, readSite } from './site';
import { FieldReader } from './reader';

export interface OomCause {
  /**
   * Why, as classified by the kernel: 'too_big', 'fragmentation',
   * 'stale_references' or 'other_processes'; an unknown id from a newer
   * helper is kept as is.
   */
  cause: string;
  /** What removing this cause would make available; null for `too_big`. */
  gain_bytes: number | null;
}

export interface OomProcess {
  pid: number;
  used_bytes: number | null;
}

export interface OomStaleHolder {
  /** 'name' (a variable), 'output_cache', 'last_traceback', 'last_execution_result'. */
  holder: string;
  /** The variable's name, or a label of the hidden holder. */
  label: string;
  bytes: number;
}

export interface OomDiagnosis {
  /** Where memory ran out: 'cuda', 'cuda_library', 'tensorflow', 'host', 'mps' or 'xla'. */
  kind: string;
  /** cuBLAS, cuDNN, ... for a library's allocation failure. */
  library: string | null;
  /**
   * Whose allocation failed, as the message says: 'torch', 'tensorflow',
   * 'numpy'; null when it does not say (a bare MemoryError) and from older
   * helpers. The remedies differ by it.
   */
  framework?: string | null;
  /** CUDA ordinal; null for host RAM or when unknown. */
  device_index: number | null;
  requested_bytes: number | null;
  total_bytes: number | null;
  free_bytes: number | null;
  /** Held by this kernel's PyTorch allocator, in tensors. */
  allocated_bytes: number | null;
  /** Cached by this kernel's allocator but not in tensors (fragmentation). */
  reserved_unallocated_bytes: number | null;
  /** This kernel's process in all (GPU: per NVML or the message; host: RSS). */
  process_in_use_bytes: number | null;
  other_processes_bytes: number | null;
  other_processes: OomProcess[];
  /**
   * The most this kernel could have held, holding nothing it can give back
   * (the device less other processes and its CUDA context, or the
   * memory-fraction cap): what `too_big` compared the request with. Null
   * when unknown, and from older helpers.
   */
  capacity_bytes: number | null;
  /** The memory-fraction cap (torch.cuda.set_per_process_memory_fraction), when one was set. */
  allowed_bytes: number | null;
  num_alloc_retries: number | null;
  /** Held by the notebook's names, output cache and last traceback on that device. */
  stale_bytes: number | null;
  stale_holders: OomStaleHolder[];
  /**
   * The largest names the failing cell itself uses (its model, its
   * optimizer), left out of `stale_bytes` and `stale_holders`: deleting them
   * is no fix for that cell. [] when none or not known (older helpers).
   */
  in_use_holders?: OomStaleHolder[];
  /**
   * Whether this kernel's torch knows the allocator option
   * expandable_segments (torch >= 2.1); null when it cannot be told, or not torch's CUDA.
   */
  expandable_segments?: boolean | null;
  /**
   * Whether torch's allocator has expandable segments on already (its parsed
   * settings; turning them on is then no remedy); null when it cannot be told.
   */
  expandable_segments_on?: boolean | null;
  causes: OomCause[];
  /**
   * The notebook lines holding the most on that device at the failure;
   * `recording: false` when allocations were not recorded; null when the
   * kernel could not say (an older helper).
   */
  allocation_sites: OomAllocationSites | null;
}

export interface OomAllocationSites {
  recording: boolean;
  /** Largest first. */
  sites: AllocationSite[];
}

function readOomSites(r: FieldReader | null): OomAllocationSites | null {
  if (r === null) {
    return null;
  }
  return {
    recording: r.boolean('recording'),
    sites: r
      .array('sites')
      .map((item, i) => readSite(FieldReader.of(item, `${r.path}.sites[${i}]`)))
      .sort((a, b) => b.bytes - a.bytes)
  };
}

function readHolders(r: FieldReader, key: string): OomStaleHolder[] {
  return (r.nullableArray(key) ?? []).map((item, i) => {
    const h = FieldReader.of(item, `${r.path}.${key}[${i}]`);
    return {
      holder: h.string('holder'),
      label: h.string('label'),
      bytes: h.bytes('bytes') ?? 0
    };
  });
}

/** Read a cell record's `oom` field; throws ShapeError naming a bad field. */
export function readOomDiagnosis(r: FieldReader): OomDiagnosis {
  return {
    kind: r.string('kind'),
    library: r.nullableString('library'),
    framework: r.nullableString('framework'),
    device_index: r.nullableInteger('device_index'),
    requested_bytes: r.bytes('requested_bytes'),
    total_bytes: r.bytes('total_bytes'),
    free_bytes: r.bytes('free_bytes'),
    allocated_bytes: r.bytes('allocated_bytes'),
    reserved_unallocated_bytes: r.bytes('reserved_unallocated_bytes'),
    process_in_use_bytes: r.bytes('process_in_use_bytes'),
    other_processes_bytes: r.bytes('other_processes_bytes'),
    other_processes: (r.nullableArray('other_processes') ?? []).map(
      (item, i) => {
        const p = FieldReader.of(item, `${r.path}.other_processes[${i}]`);
        return { pid: p.integer('pid'), used_bytes: p.bytes('used_bytes') };
      }
    ),
    capacity_bytes: r.bytes('capacity_bytes'),
    allowed_bytes: r.bytes('allowed_bytes'),
    num_alloc_retries: r.bytes('num_alloc_retries'),
    stale_bytes: r.bytes('stale_bytes'),
    stale_holders: readHolders(r, 'stale_holders'),
    in_use_holders: readHolders(r, 'in_use_holders'),
    expandable_segments: r.nullableBoolean('expandable_segments'),
    expandable_segments_on: r.nullableBoolean('expandable_segments_on'),
    causes: (r.nullableArray('causes') ?? []).map((item, i) => {
      const c = FieldReader.of(item, `${r.path}.causes[${i}]`);
      return { cause: c.string('cause'), gain_bytes: c.bytes('gain_bytes') };
    }),
    allocation_sites: readOomSites(r.nullableObject('allocation_sites'))
  };
}
