/**
 * The out-of-memory diagnosis in plain words with numbers: a headline, one
 * sentence per cause in the kernel's ranking, and the figures behind them.
 * This module makes text only; the view renders it, as text, because labels
 * and pids come from the kernel.
 */
import { ByteUnits, formatBytes } from '../../text/format';
import { OomCause, OomDiagnosis, OomStaleHolder } from '../../protocol/oom';

/** Which figure of the diagnosis a line shows (oomFiguresNow reads the same ones now). */
export type OomFigureKey =
  | 'requested'
  | 'free'
  | 'total'
  | 'process'
  | 'allocated'
  | 'reservedUnallocated'
  | 'otherProcesses'
  | 'stale'
  | 'retries';

/**
 * An out-of-memory diagnosis in words: a headline, one sentence per cause, and
 * the figures behind them.
 */
export interface OomExplanation {
  headline: string;
  causes: { cause: string; text: string }[];
  /** Label and value of every known figure (at the failure), in reading order. */
  figures: { key: OomFigureKey; label: string; value: string }[];
}

/**
 * A figure worth saying in a sentence: an unknown one would print as a dash,
 * and "0 B" of a holder or process the kernel could not size is no figure.
 * Without one, a sentence says the same without the number.
 */
export function known(v: number | null | undefined): v is number {
  return typeof v === 'number' && v > 0;
}

/**
 * The cache's holes: its reserved but unallocated bytes, or, from a helper
 * that sent no such figure, what the kernel said removing fragmentation
 * would make available. The causes and the actions both say this one.
 */
export function fragmentedBytes(d: OomDiagnosis): number | null {
  return (
    d.reserved_unallocated_bytes ??
    d.causes.find(c => c.cause === 'fragmentation')?.gain_bytes ??
    null
  );
}

/** What ran out, e.g. "GPU 0", "host RAM", "GPU memory (cuBLAS)". */
function oomPlace(d: OomDiagnosis): string {
  if (d.kind === 'host') {
    return 'host RAM';
  }
  if (d.kind === 'mps') {
    return 'the Apple GPU (MPS)';
  }
  if (d.kind === 'xla') {
    return 'the accelerator (JAX/XLA)';
  }
  const device = d.device_index === null ? 'GPU' : `GPU ${d.device_index}`;
  return d.library ? `${device} (${d.library})` : device;
}

/**
 * `container`: the kernel runs under a cgroup memory limit, so a host
 * diagnosis's total is that limit (the helper measures against it).
 */
export function explainOom(
  d: OomDiagnosis,
  units: ByteUnits,
  executionCount: number | null = null,
  container = false
): OomExplanation {
  const b = (v: number | null) => formatBytes(v, units);
  const cell =
    executionCount === null ? 'The cell' : `Cell [${executionCount}]`;
  const place = d.kind === 'host' ? 'host RAM' : `${oomPlace(d)} memory`;
  let headline = `${cell} ran out of ${place}`;
  if (d.requested_bytes !== null) {
    headline += `: it asked for ${b(d.requested_bytes)}`;
    if (d.free_bytes !== null) {
      headline += ` with ${b(d.free_bytes)} free`;
      if (d.total_bytes !== null) {
        headline += ` of ${b(d.total_bytes)}`;
      }
    }
  } else if (d.library) {
    headline += `: ${d.library} could not get memory for its workspace`;
  }
  headline += '.';

  const causes = d.causes.map(c => ({
    cause: c.cause,
    text: causeText(c, d, units, container)
  }));
  const inUse = d.in_use_holders ?? [];
  if (causes.length === 0 && inUse.length > 0) {
    causes.push({
      cause: 'in_use',
      text:
        `The failing cell's own objects hold the memory (${inUse.map(h => holderText(h, units)).join(', ')}), ` +
        'and nothing it does not use would free enough: deleting them is no fix for this cell. ' +
        `The work itself must shrink: ${shrinkTheWork(d)}`
    });
  } else if (causes.length === 0 && (d.kind === 'mps' || d.kind === 'xla')) {
    causes.push({
      cause: 'unknown',
      text:
        `This kernel cannot read the memory of ${oomPlace(d)}: beyond what the message says, ` +
        'the cause cannot be told apart. Free what earlier cells hold, or shrink the work: ' +
        SHRINK_THE_WORK
    });
  } else if (causes.length === 0) {
    causes.push({
      cause: 'unknown',
      text: 'The figures the kernel could read do not tell the cause apart: try the actions below, from the top.'
    });
  }

  const figures: OomExplanation['figures'] = [];
  const add = (
    key: OomFigureKey,
    label: string,
    value: number | null,
    text?: string
  ) => {
    if (value !== null) {
      figures.push({ key, label, value: text ?? b(value) });
    }
  };
  const host = d.kind === 'host';
  add('requested', 'Requested', d.requested_bytes);
  add('free', host ? 'Available' : 'Free on the device', d.free_bytes);
  add(
    'total',
    host ? (container ? 'Container limit' : 'Total RAM') : 'Device total',
    d.total_bytes
  );
  add(
    'process',
    host ? 'This kernel (RSS)' : 'This kernel in all',
    d.process_in_use_bytes
  );
  add('allocated', 'In tensors (PyTorch)', d.allocated_bytes);
  add(
    'reservedUnallocated',
    'Reserved but unallocated',
    d.reserved_unallocated_bytes
  );
  add(
    'otherProcesses',
    host
      ? `Used by the rest of the ${container ? 'container' : 'machine'}`
      : 'Other processes',
    d.other_processes_bytes
  );
  add('stale', 'Held by notebook references', d.stale_bytes);
  add(
    'retries',
    'Allocation retries',
    d.num_alloc_retries,
    d.num_alloc_retries === null ? undefined : String(d.num_alloc_retries)
  );
  return { headline, causes, figures };
}

function causeText(
  c: OomCause,
  d: OomDiagnosis,
  units: ByteUnits,
  container: boolean
): string {
  const b = (v: number | null) => formatBytes(v, units);
  const cause = c.cause;
  switch (cause) {
    case 'too_big':
      return tooBigText(d, units, container);
    case 'fragmentation':
      return fragmentationText(d, fragmentedBytes(d), units);
    case 'stale_references': {
      const inUse = d.in_use_holders ?? [];
      return (
        `Stale references: this notebook still holds ${known(d.stale_bytes) ? b(d.stale_bytes) : 'memory'} ` +
        `on ${d.kind === 'host' ? 'the host' : 'this device'}` +
        (d.stale_holders.length
          ? ` (${d.stale_holders.map(h => holderText(h, units)).join(', ')})`
          : '') +
        (inUse.length
          ? ` that the failing cell does not use; not counted: ${inUse.map(holderName).join(', ')}, which it does`
          : '') +
        '.'
      );
    }
    case 'other_processes':
      if (d.kind === 'host') {
        // total - available - this kernel's RSS: the system, its caches and every other program.
        const rest = container
          ? 'the rest of the container'
          : 'the rest of the machine';
        return (
          `Memory used by ${rest}: ` +
          (known(d.other_processes_bytes)
            ? `${b(d.other_processes_bytes)} of its RAM is`
            : 'its RAM is partly') +
          ` taken by everything but this kernel (${container ? 'other processes in it' : 'other programs, the system and its caches'}).`
        );
      }
      return (
        `Other processes hold ${known(d.other_processes_bytes) ? b(d.other_processes_bytes) : 'memory'} on this card` +
        (d.other_processes.length
          ? ': ' +
            d.other_processes
              .slice(0, 5)
              .map(p =>
                known(p.used_bytes)
                  ? `pid ${p.pid} (${b(p.used_bytes)})`
                  : `pid ${p.pid}`
              )
              .join(', ')
          : '') +
        '.'
      );
    default:
      return `Cause "${cause}" (reported by a newer helper).`;
  }
}

const SHRINK_THE_WORK =
  'a smaller batch, mixed precision, gradient checkpointing or accumulation.';
// An array of NumPy (or of an unknown library) on the host: no training step to shrink.
const SHRINK_THE_DATA =
  'work through the data in chunks, in a smaller dtype (float32 rather than float64), or memory-mapped from disk (numpy.memmap).';

/** How the work shrinks: training remedies for a framework's tensors, data remedies for a host array. */
function shrinkTheWork(d: OomDiagnosis): string {
  return d.kind === 'host' &&
    d.framework !== 'torch' &&
    d.framework !== 'tensorflow'
    ? SHRINK_THE_DATA
    : SHRINK_THE_WORK;
}

/**
 * What the request was too big for: the whole card (or machine), the
 * memory-fraction cap, or what other processes and this kernel's CUDA
 * context leave of the card. Only the first is "more than the card has".
 */
function tooBigText(
  d: OomDiagnosis,
  units: ByteUnits,
  container: boolean
): string {
  const b = (v: number | null) => formatBytes(v, units);
  const requested = d.requested_bytes;
  // A request the message did not size (a library's workspace) is still a request.
  const asked = known(requested) ? b(requested) : 'the request';
  const place =
    d.kind === 'host' ? (container ? 'container' : 'machine') : 'card';
  if (
    requested !== null &&
    d.total_bytes !== null &&
    requested > d.total_bytes
  ) {
    return (
      `Too big for the ${place}: ${b(requested)} is more than the ${b(d.total_bytes)} it has, ` +
      `even if this kernel freed everything. The work itself must shrink: ${shrinkTheWork(d)}`
    );
  }
  const capped =
    d.allowed_bytes !== null &&
    d.capacity_bytes !== null &&
    d.capacity_bytes >= d.allowed_bytes;
  if (capped) {
    return (
      `Too big for this kernel's memory cap: ${asked} is more than the ${b(d.allowed_bytes)} ` +
      'that torch.cuda.set_per_process_memory_fraction allows it, even if it freed everything. ' +
      `Raise the cap, or shrink the work: ${SHRINK_THE_WORK}`
    );
  }
  const others = d.other_processes_bytes ?? 0;
  const whole = known(d.total_bytes)
    ? `the ${place}'s ${b(d.total_bytes)}`
    : `the ${place}`;
  const left = known(d.capacity_bytes)
    ? `the ${b(d.capacity_bytes)} left to it of ${whole}`
    : `what is left to it of ${whole}`;
  return (
    `Too big for what this kernel can get: ${asked} is more than ${left}` +
    (others > 0
      ? ` once other processes (${b(others)}) and its CUDA context are counted, even if it freed everything. ` +
        `Ending those processes would make room; otherwise the work must shrink: ${SHRINK_THE_WORK}`
      : ` once its CUDA context is counted, even if it freed everything. The work itself must shrink: ${SHRINK_THE_WORK}`)
  );
}

/**
 * PyTorch's cache in the way: in pieces too small for a request it exceeds;
 * part of the shortfall when smaller (the causes only fit together); or, for
 * a library that allocates outside it (request unknown), simply held.
 */
function fragmentationText(
  d: OomDiagnosis,
  cache: number | null,
  units: ByteUnits
): string {
  const b = (v: number | null) => formatBytes(v, units);
  const requested = d.requested_bytes;
  const retries = d.num_alloc_retries
    ? ` (the allocator already retried ${d.num_alloc_retries} time${d.num_alloc_retries === 1 ? '' : 's'})`
    : '';
  const held = known(cache) ? b(cache) : 'memory';
  if (requested === null) {
    return (
      `Fragmentation: PyTorch's cache holds ${held} reserved but unallocated` +
      (d.library
        ? `, which ${d.library} cannot use: it allocates outside that cache`
        : '') +
      `; torch.cuda.empty_cache() gives it back${retries}.`
    );
  }
  if (!known(cache)) {
    // Neither more nor less than the request can be said.
    return (
      "Fragmentation: PyTorch's cache holds memory reserved but unallocated, " +
      `in pieces too small for the ${b(requested)} asked for${retries}.`
    );
  }
  if (cache < requested) {
    return (
      `Fragmentation: PyTorch's cache holds ${b(cache)} reserved but unallocated, ` +
      `part of what the ${b(requested)} asked for would need${retries}.`
    );
  }
  return (
    `Fragmentation: PyTorch holds ${b(cache)} reserved but unallocated, ` +
    `more than the ${b(requested)} asked for, but in pieces too small for it${retries}.`
  );
}

/** "x: 1.2 GiB", "the output cache: 300 MiB", "the last traceback: 2 GiB"; the name alone where unsized. */
function holderText(h: OomStaleHolder, units: ByteUnits): string {
  return known(h.bytes)
    ? `${holderName(h)}: ${formatBytes(h.bytes, units)}`
    : holderName(h);
}

/** Names a stale holder the way the assistant's sentences refer to it. */
export function holderName(h: OomStaleHolder): string {
  switch (h.holder) {
    case 'name':
      return h.label;
    case 'output_cache':
      return 'the output cache';
    case 'last_traceback':
      return 'the last traceback';
    case 'last_execution_result':
      return "the last cell's result";
    default:
      return h.label;
  }
}
