/**
 * The parser of the out-of-memory diagnosis that a cell record carries as
 * `oom` when the cell failed for lack of memory (see `cell` in
 * docs/protocol.md). The kernel sends numbers and cause ids, and the
 * frontend turns them into words (features/oom/oomExplanation.ts) and
 * actions (features/oom/oomActions.ts), so that the wording stays in one
 * place and can be translated.
 *
 * The wire types are generated from protocol/protocol.schema.json
 * (protocol.generated.ts) and re-exported here under the names the frontend
 * imports; the reader below checks untrusted JSON against them.
 */
import { readClusterOomWorker } from './clusterRecord';
import { readSite } from './site';
import { FieldReader, ShapeError } from './reader';
import type {
  OomAllocationSites,
  OomDataLoaderWorkers,
  OomDiagnosis,
  OomProcess,
  OomStaleHolder
} from './protocol.generated';

export type {
  OomAllocationSites,
  OomCause,
  OomDataLoaderWorkers,
  OomDiagnosis,
  OomProcess,
  OomRelease,
  OomStaleHolder,
  OomWorker
} from './protocol.generated';

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

function readStrings(r: FieldReader, key: string): string[] {
  return r.array(key).map((item, i) => {
    if (typeof item !== 'string') {
      throw new ShapeError(`${r.path}.${key}[${i}]: expected a string`);
    }
    return item;
  });
}

/**
 * Reads one process on the failing device. The keys that describe a child
 * of the kernel are absent from older helpers and for other processes, and
 * stay absent here, so that `child_of_kernel` reads as false.
 */
function readOomProcess(item: unknown, path: string): OomProcess {
  const p = FieldReader.of(item, path);
  const process: OomProcess = {
    pid: p.integer('pid'),
    used_bytes: p.bytes('used_bytes')
  };
  if (!p.optionalBoolean('child_of_kernel', false)) {
    return process;
  }
  const release = p.nullableObject('release');
  return {
    ...process,
    child_of_kernel: true,
    start_time: p.integer('start_time'),
    role: p.string('role'),
    remedies: p.nullableArray('remedies') ? readStrings(p, 'remedies') : [],
    release: release && {
      kind: release.string('kind'),
      name: release.string('name')
    }
  };
}

function readWorkers(r: FieldReader | null): OomDataLoaderWorkers | null {
  if (r === null) {
    return null;
  }
  return {
    killed_pids: r.array('killed_pids').map((pid, i) => {
      if (typeof pid !== 'number' || !Number.isInteger(pid)) {
        throw new ShapeError(
          `${r.path}.killed_pids[${i}]: expected an integer`
        );
      }
      return pid;
    }),
    signal: r.string('signal'),
    workers: r.array('workers').map((item, i) => {
      const w = FieldReader.of(item, `${r.path}.workers[${i}]`);
      return {
        pid: w.integer('pid'),
        start_time: w.integer('start_time'),
        killed: w.boolean('killed'),
        host_bytes: w.bytes('host_bytes'),
        uss_bytes: w.bytes('uss_bytes'),
        uss_growth_bytes: w.bytes('uss_growth_bytes'),
        read_at: w.nullableNumber('read_at')
      };
    }),
    workers_host_bytes: r.bytes('workers_host_bytes'),
    uss_growth_bytes: r.bytes('uss_growth_bytes'),
    copy_on_write: r.boolean('copy_on_write'),
    snippet: r.nullableString('snippet')
  };
}

/**
 * Reads a cell record's `oom` field, and throws a ShapeError naming a bad
 * field.
 */
export function readOomDiagnosis(r: FieldReader): OomDiagnosis {
  const workers = readWorkers(r.nullableObject('dataloader_workers'));
  const clusterWorker = readClusterOomWorker(r);
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
    other_processes: (r.nullableArray('other_processes') ?? []).map((item, i) =>
      readOomProcess(item, `${r.path}.other_processes[${i}]`)
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
    allocation_sites: readOomSites(r.nullableObject('allocation_sites')),
    // Absent unless the helper sent one, so that a diagnosis of another
    // kind reads as it did before the key existed.
    ...(workers ? { dataloader_workers: workers } : {}),
    ...(clusterWorker ? { cluster_worker: clusterWorker } : {})
  };
}
