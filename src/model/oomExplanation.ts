/**
 * The out-of-memory diagnosis in plain words with numbers: a headline, one
 * sentence per cause (in the kernel's ranking) and the figures behind them.
 * Pure text; the view renders it (as text: labels and pids come from the
 * kernel).
 */
import { ByteUnits, formatBytes } from '../format';
import { OomDiagnosis, OomStaleHolder } from '../oomProtocol';

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

export interface OomExplanation {
  headline: string;
  causes: { cause: string; text: string }[];
  /** Label and value of every known figure (at the failure), in reading order. */
  figures: { key: OomFigureKey; label: string; value: string }[];
}

/** What ran out, e.g. "GPU 0", "host RAM", "GPU memory (cuBLAS)". */
function oomPlace(d: OomDiagnosis): string {
  if (d.kind === 'host') {
    return 'host RAM';
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
  const cell = executionCount === null ? 'The cell' : `Cell [${executionCount}]`;
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
    text: causeText(c.cause, d, units, container)
  }));
  if (causes.length === 0) {
    causes.push({
      cause: 'unknown',
      text: 'The figures the kernel could read do not tell the cause apart: try the actions below, from the top.'
    });
  }

  const figures: OomExplanation['figures'] = [];
  const add = (key: OomFigureKey, label: string, value: number | null, text?: string) => {
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
  add('process', host ? 'This kernel (RSS)' : 'This kernel in all', d.process_in_use_bytes);
  add('allocated', 'In tensors (PyTorch)', d.allocated_bytes);
  add('reservedUnallocated', 'Reserved but unallocated', d.reserved_unallocated_bytes);
  add('otherProcesses', 'Other processes', d.other_processes_bytes);
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
  cause: string,
  d: OomDiagnosis,
  units: ByteUnits,
  container: boolean
): string {
  const b = (v: number | null) => formatBytes(v, units);
  switch (cause) {
    case 'too_big': {
      const others =
        d.other_processes_bytes && d.other_processes_bytes > 0
          ? `, ${b(d.other_processes_bytes)} of it held by other processes`
          : '';
      return (
        `Too big for the ${d.kind === 'host' ? (container ? 'container' : 'machine') : 'card'}: ` +
        `${b(d.requested_bytes)} is more than the ${b(d.total_bytes)} it has${others}, ` +
        'even if this kernel freed everything. The work itself must shrink: ' +
        'a smaller batch, mixed precision, gradient checkpointing or accumulation.'
      );
    }
    case 'fragmentation':
      return (
        `Fragmentation: PyTorch holds ${b(d.reserved_unallocated_bytes)} reserved ` +
        `but unallocated, more than the ${b(d.requested_bytes)} asked for, ` +
        'but in pieces too small for it' +
        (d.num_alloc_retries
          ? ` (the allocator already retried ${d.num_alloc_retries} time${d.num_alloc_retries === 1 ? '' : 's'})`
          : '') +
        '.'
      );
    case 'stale_references':
      return (
        `Stale references: this notebook still holds ${b(d.stale_bytes)} ` +
        `on ${d.kind === 'host' ? 'the host' : 'this device'}` +
        (d.stale_holders.length
          ? ` (${d.stale_holders.map(h => holderText(h, units)).join(', ')})`
          : '') +
        '.'
      );
    case 'other_processes':
      return (
        `Other processes hold ${b(d.other_processes_bytes)} on this card` +
        (d.other_processes.length
          ? ': ' +
            d.other_processes
              .slice(0, 5)
              .map(p => `pid ${p.pid} (${b(p.used_bytes)})`)
              .join(', ')
          : '') +
        '.'
      );
    default:
      return `Cause "${cause}" (reported by a newer helper).`;
  }
}

/** "x: 1.2 GiB", "the output cache: 300 MiB", "the last traceback: 2 GiB". */
function holderText(h: OomStaleHolder, units: ByteUnits): string {
  return `${holderName(h)}: ${formatBytes(h.bytes, units)}`;
}

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
