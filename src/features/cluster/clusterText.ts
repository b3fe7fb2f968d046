/**
 * The words of the Cluster section: a worker's figures, a cluster's status
 * and the age of its figures, a sentence per event kind, what an action
 * does and what came back from it. Kernel text (names, addresses, the
 * engine's messages) is passed through as data and goes into the DOM as
 * text only.
 */
import type {
  ClusterActionName,
  ClusterActionResult,
  ClusterActionWorker,
  ClusterAllocatorReading,
  ClusterEvent,
  ClusterLastFigures,
  ClusterState,
  ClusterWorker,
  ClusterWorkerGpu
} from '../../protocol/cluster';
import { ByteUnits, formatBytes } from '../../text/format';
import { trans } from '../../text/translation';

/** An engine's name as people write it; an unknown one as the kernel sent it. */
export function engineText(engine: string): string {
  switch (engine) {
    case 'dask':
      return 'Dask';
    case 'ray':
      return 'Ray';
    default:
      return engine;
  }
}

/** "Dask 2024.8.0 at tcp://…", the cluster's heading. */
export function clusterHeading(c: ClusterState): string {
  const engine = c.version
    ? `${engineText(c.engine)} ${c.version}`
    : engineText(c.engine);
  return trans.__('%1 cluster %2', engine, c.name);
}

/** How the helper found the cluster, in words. */
export function foundByText(c: ClusterState): string {
  switch (c.found_by) {
    case 'default_client':
      return trans.__("Found as Dask's default client");
    case 'namespace':
      return c.variable
        ? trans.__('Found as the client in the variable %1', c.variable)
        : trans.__("Found as a client in the notebook's variables");
    case 'initialized':
      return trans.__('Found as the Ray runtime this kernel initialised');
    default:
      return trans.__('Found by: %1', c.found_by);
  }
}

/** A whole number of seconds, minutes or hours: "3 s", "4 min", "2 h". */
export function ageText(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 120) {
    return trans.__('%1 s', s);
  }
  if (s < 7200) {
    return trans.__('%1 min', Math.round(s / 60));
  }
  return trans.__('%1 h', Math.round(s / 3600));
}

/**
 * The cluster's status where it is not ok, stated plainly, with the age of
 * the figures shown; null where the last reading answered.
 */
export function statusSentence(
  c: ClusterState,
  now: number | null
): string | null {
  if (c.status === 'ok') {
    return null;
  }
  let what: string;
  switch (c.status) {
    case 'timeout':
      what = trans.__('The scheduler did not answer in time.');
      break;
    case 'unreachable':
      what = trans.__('The cluster cannot be reached.');
      break;
    case 'closed':
      what = trans.__('The client or runtime was closed.');
      break;
    case 'error':
      what = trans.__('Reading the cluster failed.');
      break;
    default:
      what = trans.__('Status: %1.', c.status);
  }
  const age =
    c.read_at === null
      ? trans.__('No figures were read yet.')
      : now === null
        ? trans.__('The figures shown are old.')
        : trans.__(
            'The figures shown are old: read %1 before.',
            ageText(now - c.read_at)
          );
  return [what, c.message, age].filter(Boolean).join(' ');
}

/** "42 of 64 workers · 61.2 GiB of 128 GiB · spilled 1.0 GiB · GPUs 12 GiB of 2.5 TiB". */
export function totalsText(c: ClusterState, units: ByteUnits): string {
  const t = c.totals;
  const parts = [
    trans._n('%1 worker', '%1 workers', t.workers),
    t.memory_limit_bytes === null
      ? trans.__('memory %1', formatBytes(t.memory_bytes, units))
      : trans.__(
          'memory %1 of %2',
          formatBytes(t.memory_bytes, units),
          formatBytes(t.memory_limit_bytes, units)
        )
  ];
  if (t.paused) {
    parts.push(trans._n('%1 paused', '%1 paused', t.paused));
  }
  if (t.spilled_bytes) {
    parts.push(trans.__('spilled %1', formatBytes(t.spilled_bytes, units)));
  }
  if (t.gpu_used_bytes !== null) {
    parts.push(
      trans.__(
        'GPUs %1 of %2',
        formatBytes(t.gpu_used_bytes, units),
        formatBytes(t.gpu_total_bytes, units)
      )
    );
  }
  return parts.join(' \u00b7 ');
}

/** The worker's name, and its address or node where that says more. */
export function workerName(w: ClusterWorker): string {
  return w.name && w.name !== w.id ? `${w.name} (${w.id})` : w.id;
}

/** "pid 5003 on 127.0.0.1 · 2 threads". */
export function workerWhere(w: ClusterWorker): string {
  const parts = [
    w.pid === null
      ? trans.__('on %1', w.host)
      : trans.__('pid %1 on %2', w.pid, w.host)
  ];
  if (w.nthreads !== null) {
    parts.push(trans._n('%1 thread', '%1 threads', w.nthreads));
  }
  return parts.join(' \u00b7 ');
}

/** The worker's host memory against its limit: "1.4 GiB of 2.0 GiB (70%)". */
export function workerMemoryText(w: ClusterWorker, units: ByteUnits): string {
  const used = formatBytes(w.memory_bytes, units);
  const share = memoryShare(w);
  if (w.memory_limit_bytes === null || share === null) {
    return trans.__('%1, no memory limit', used);
  }
  return trans.__(
    '%1 of %2 (%3%)',
    used,
    formatBytes(w.memory_limit_bytes, units),
    Math.round(share * 100)
  );
}

/** The worker's memory as a share of its limit; null without both. */
export function memoryShare(
  w: Pick<ClusterWorker, 'memory_bytes' | 'memory_limit_bytes'>
): number | null {
  return w.memory_bytes === null || !w.memory_limit_bytes
    ? null
    : w.memory_bytes / w.memory_limit_bytes;
}

/** Where the memory figure comes from, for the tooltip. */
export function memorySourceText(w: ClusterWorker): string {
  switch (w.memory_source) {
    case 'engine':
      return trans.__("Memory as the engine reports it (the process's RSS).");
    case 'proc':
      return trans.__('Memory read from /proc on this machine.');
    default:
      return trans.__('Memory from: %1', w.memory_source);
  }
}

/** "managed 800 MiB · spilled 16 MiB", or "" where the engine says neither. */
export function managedText(w: ClusterWorker, units: ByteUnits): string {
  const parts: string[] = [];
  if (w.managed_bytes !== null) {
    parts.push(trans.__('managed %1', formatBytes(w.managed_bytes, units)));
  }
  if (w.spilled_bytes !== null) {
    parts.push(trans.__('spilled %1', formatBytes(w.spilled_bytes, units)));
  }
  return parts.join(' \u00b7 ');
}

/** One GPU of a worker: "GPU 0 4.0 GiB of 80 GiB (this worker)" or "(the whole device)". */
export function gpuText(g: ClusterWorkerGpu, units: ByteUnits): string {
  const scope =
    g.scope === 'process'
      ? trans.__('this worker')
      : g.scope === 'device'
        ? trans.__('the whole device, every process on it')
        : g.scope;
  const index =
    g.index === null ? trans.__('GPU') : trans.__('GPU %1', g.index);
  return trans.__(
    '%1 %2 of %3 (%4)',
    index,
    formatBytes(g.used_bytes, units),
    formatBytes(g.total_bytes, units),
    scope
  );
}

/** The worker's GPUs, one after the other; "" without any. */
export function gpusText(w: ClusterWorker, units: ByteUnits): string {
  return w.gpus.map(g => gpuText(g, units)).join(' \u00b7 ');
}

/** The allocator reading: "allocator 1.0 GiB allocated, 2.0 GiB reserved, peak 3.0 GiB". */
export function allocatorText(
  a: ClusterAllocatorReading | null,
  units: ByteUnits
): string {
  if (!a) {
    return '';
  }
  if (!a.torch) {
    return trans.__('allocator: torch not imported');
  }
  if (!a.cuda_initialized || !a.devices.length) {
    return trans.__('allocator: CUDA not initialised');
  }
  return a.devices
    .map(d =>
      trans.__(
        'allocator cuda:%1 %2 allocated, %3 reserved, peak %4',
        d.device,
        formatBytes(d.allocated_bytes, units),
        formatBytes(d.reserved_bytes, units),
        formatBytes(d.peak_bytes, units)
      )
    )
    .join(' \u00b7 ');
}

/** An action's name on a button or in the palette. */
export function actionLabel(action: ClusterActionName): string {
  switch (action) {
    case 'gc':
      return trans.__('Collect garbage on the workers');
    case 'empty_cache':
      return trans.__('Empty the CUDA cache on the workers');
    case 'restart':
      return trans.__('Restart the workers');
    case 'read_allocators':
      return trans.__('Read the allocators');
  }
}

/** What an action does, for its confirmation and its tooltip. */
export function actionSentence(action: ClusterActionName): string {
  switch (action) {
    case 'gc':
      return trans.__('Runs gc.collect() in every worker of the cluster.');
    case 'empty_cache':
      return trans.__(
        'Runs torch.cuda.empty_cache() in every worker that imported torch: the cache PyTorch keeps goes back to the driver; tensors stay.'
      );
    case 'restart':
      return trans.__(
        'Restarts every worker of the cluster: all the data they hold (results in memory, spilled data, actors) is lost, and running tasks fail or run again.'
      );
    case 'read_allocators':
      return trans.__(
        "Reads each worker's PyTorch allocator (allocated, reserved, peak); it changes nothing and never initialises CUDA."
      );
  }
}

/** What came back from one worker: "tcp://…: host −300 MiB, GPU cache −1.0 GiB". */
export function actionWorkerText(
  w: ClusterActionWorker,
  units: ByteUnits
): string {
  if (!w.ok) {
    return trans.__(
      '%1: not done (%2)',
      w.id,
      w.error ?? trans.__('no reason given')
    );
  }
  const parts: string[] = [];
  if (w.host_before_bytes !== null && w.host_after_bytes !== null) {
    parts.push(
      trans.__(
        'host %1 returned',
        formatBytes(w.host_before_bytes - w.host_after_bytes, units)
      )
    );
  }
  if (
    w.gpu_reserved_before_bytes !== null &&
    w.gpu_reserved_after_bytes !== null
  ) {
    parts.push(
      trans.__(
        'GPU reserved %1 returned',
        formatBytes(
          w.gpu_reserved_before_bytes - w.gpu_reserved_after_bytes,
          units
        )
      )
    );
  } else if (w.torch === false) {
    parts.push(trans.__('no torch'));
  }
  return trans.__('%1: %2', w.id, parts.join(', ') || trans.__('done'));
}

/** The result's first line: what was done, and how many workers answered. */
export function actionResultSentence(r: ClusterActionResult): string {
  const ok = r.workers.filter(w => w.ok).length;
  const head = r.done
    ? trans.__(
        '%1: done on %2 of %3 workers.',
        actionLabel(r.action),
        ok,
        r.workers.length
      )
    : trans.__('%1: not done.', actionLabel(r.action));
  return r.message ? `${head} ${r.message}` : head;
}

/**
 * A sentence for an event's kind, naming `e.worker` (or "a worker"); an
 * unknown kind is named with its raw word. The out-of-memory assistant
 * says the same of an error that came from a worker.
 */
export function eventSentence(
  e: Pick<ClusterEvent, 'worker' | 'kind'>
): string {
  const who = e.worker ?? trans.__('a worker');
  switch (e.kind) {
    case 'paused':
      return trans.__(
        '%1 paused: it stopped taking tasks at its memory limit.',
        who
      );
    case 'resumed':
      return trans.__('%1 resumed taking tasks.', who);
    case 'spilling':
      return trans.__('%1 began to spill to disk.', who);
    case 'memory_restart':
      return trans.__(
        'Its nanny restarted %1: it went past its memory limit.',
        who
      );
    case 'left':
      return trans.__('%1 left the cluster; the engine gave no reason.', who);
    case 'killed_worker':
      return trans.__(
        'The workers that ran the task died, the last of them %1: most often a worker past its memory limit.',
        who
      );
    case 'oom_killed':
      return trans.__(
        "Ray's memory monitor killed a task or an actor on %1: the node ran low on memory.",
        who
      );
    case 'cuda_oom':
      return trans.__('A task ran out of CUDA memory on %1.', who);
    default:
      return trans.__('%1: %2', who, e.kind);
  }
}

/**
 * "used 1.9 GB of its 2.0 GB limit 3 s before": the worker's last figures,
 * aged against `at` (kernel clock), or without an age where `at` is null;
 * "" where the helper never read it.
 */
export function lastFiguresText(
  last: ClusterLastFigures | null,
  at: number | null,
  units: ByteUnits
): string {
  if (!last) {
    return '';
  }
  const used = formatBytes(last.memory_bytes, units);
  const limit = formatBytes(last.memory_limit_bytes, units);
  const noLimit = last.memory_limit_bytes === null;
  let text: string;
  if (at === null) {
    text = noLimit
      ? trans.__('used %1', used)
      : trans.__('used %1 of its %2 limit', used, limit);
  } else {
    const when = ageText(at - last.read_at);
    text = noLimit
      ? trans.__('used %1 %2 before', used, when)
      : trans.__('used %1 of its %2 limit %3 before', used, limit, when);
  }
  const extra: string[] = [];
  if (last.spilled_bytes) {
    extra.push(trans.__('spilled %1', formatBytes(last.spilled_bytes, units)));
  }
  if (last.gpu_used_bytes !== null) {
    extra.push(trans.__('GPU %1', formatBytes(last.gpu_used_bytes, units)));
  }
  return extra.length ? `${text} (${extra.join(', ')})` : text;
}
