/**
 * The out-of-memory diagnosis in plain words with numbers: a headline, one
 * sentence per cause in the kernel's ranking, and the figures behind them.
 * This module makes text only; the view renders it, as text, because labels
 * and pids come from the kernel.
 */
import { ByteUnits, formatBytes } from '../../text/format';
import { OomCause, OomDiagnosis, OomStaleHolder } from '../../protocol/oom';
import { trans } from '../../text/translation';
import { childProcessesText, dataLoaderWorkersText } from './oomChildrenText';
import { known } from './oomFigure';
import { explainClusterOom } from './oomCluster';

/**
 * Which figure of the diagnosis a line shows. oomFiguresNow reads the same
 * figures from the latest sample.
 */
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
  /**
   * The label and value of every known figure at the failure, in reading
   * order.
   */
  figures: { key: OomFigureKey; label: string; value: string }[];
}

export { known } from './oomFigure';

/**
 * The holes in the cache: its reserved but unallocated bytes. When the
 * helper sent no such figure, it is what the kernel said removing
 * fragmentation would make available. Both the causes and the actions give
 * this figure.
 */
export function fragmentedBytes(d: OomDiagnosis): number | null {
  return (
    d.reserved_unallocated_bytes ??
    d.causes.find(c => c.cause === 'fragmentation')?.gain_bytes ??
    null
  );
}

/**
 * Names what ran out, for example "GPU 0", "host RAM" or "GPU memory
 * (cuBLAS)".
 */
function oomPlace(d: OomDiagnosis): string {
  if (d.kind === 'host') {
    return trans.__('host RAM');
  }
  if (d.kind === 'mps') {
    return trans.__('the Apple GPU (MPS)');
  }
  if (d.kind === 'xla') {
    return trans.__('the accelerator (JAX/XLA)');
  }
  const device =
    d.device_index === null
      ? trans.__('GPU')
      : trans.__('GPU %1', d.device_index);
  return d.library ? `${device} (${d.library})` : device;
}

/**
 * Explains a diagnosis in words. `container` is true when the kernel runs
 * under a cgroup memory limit; a host diagnosis's total is then that limit,
 * because the helper measures against it.
 */
export function explainOom(
  d: OomDiagnosis,
  units: ByteUnits,
  executionCount: number | null = null,
  container = false
): OomExplanation {
  if (d.cluster_worker) {
    // The error came from a worker: the kernel's own figures are not its.
    return explainClusterOom(d.cluster_worker, units, executionCount);
  }
  const b = (v: number | null) => formatBytes(v, units);
  const cell =
    executionCount === null
      ? trans.__('The cell')
      : trans.__('Cell [%1]', executionCount);
  const place =
    d.kind === 'host'
      ? trans.__('host RAM')
      : trans.__('%1 memory', oomPlace(d));
  let headline: string;
  if (d.requested_bytes !== null && d.free_bytes === null) {
    headline = trans.__(
      '%1 ran out of %2: it asked for %3.',
      cell,
      place,
      b(d.requested_bytes)
    );
  } else if (d.requested_bytes !== null && d.total_bytes === null) {
    headline = trans.__(
      '%1 ran out of %2: it asked for %3 with %4 free.',
      cell,
      place,
      b(d.requested_bytes),
      b(d.free_bytes)
    );
  } else if (d.requested_bytes !== null) {
    headline = trans.__(
      '%1 ran out of %2: it asked for %3 with %4 free of %5.',
      cell,
      place,
      b(d.requested_bytes),
      b(d.free_bytes),
      b(d.total_bytes)
    );
  } else if (d.library) {
    headline = trans.__(
      '%1 ran out of %2: %3 could not get memory for its workspace.',
      cell,
      place,
      d.library
    );
  } else {
    headline = trans.__('%1 ran out of %2.', cell, place);
  }

  const causes = d.causes.map(c => ({
    cause: c.cause,
    text: causeText(c, d, units, container)
  }));
  const inUse = d.in_use_holders ?? [];
  if (causes.length === 0 && inUse.length > 0) {
    causes.push({
      cause: 'in_use',
      text: trans.__(
        "The failing cell's own objects hold the memory (%1), and nothing it does not use would free enough: deleting them is no fix for this cell. The work itself must shrink: %2",
        inUse.map(h => holderText(h, units)).join(', '),
        shrinkTheWork(d)
      )
    });
  } else if (causes.length === 0 && (d.kind === 'mps' || d.kind === 'xla')) {
    causes.push({
      cause: 'unknown',
      text: trans.__(
        'This kernel cannot read the memory of %1: beyond what the message says, the cause cannot be told apart. Free what earlier cells hold, or shrink the work: %2',
        oomPlace(d),
        shrinkTheWorkText()
      )
    });
  } else if (causes.length === 0) {
    causes.push({
      cause: 'unknown',
      text: trans.__(
        'The figures the kernel could read do not tell the cause apart: try the actions below, from the top.'
      )
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
  add('requested', trans.__('Requested'), d.requested_bytes);
  add(
    'free',
    host ? trans.__('Available') : trans.__('Free on the device'),
    d.free_bytes
  );
  add(
    'total',
    host
      ? container
        ? trans.__('Container limit')
        : trans.__('Total RAM')
      : trans.__('Device total'),
    d.total_bytes
  );
  add(
    'process',
    host ? trans.__('This kernel (RSS)') : trans.__('This kernel in all'),
    d.process_in_use_bytes
  );
  add('allocated', trans.__('In tensors (PyTorch)'), d.allocated_bytes);
  add(
    'reservedUnallocated',
    trans.__('Reserved but unallocated'),
    d.reserved_unallocated_bytes
  );
  add(
    'otherProcesses',
    host
      ? container
        ? trans.__('Used by the rest of the container')
        : trans.__('Used by the rest of the machine')
      : trans.__('Other processes'),
    d.other_processes_bytes
  );
  add('stale', trans.__('Held by notebook references'), d.stale_bytes);
  add(
    'retries',
    trans.__('Allocation retries'),
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
      const amount = known(d.stale_bytes)
        ? b(d.stale_bytes)
        : trans.__('memory');
      const where =
        d.kind === 'host' ? trans.__('the host') : trans.__('this device');
      const holders = d.stale_holders.length
        ? ' (' + d.stale_holders.map(h => holderText(h, units)).join(', ') + ')'
        : '';
      return inUse.length
        ? trans.__(
            'Stale references: this notebook still holds %1 on %2%3 that the failing cell does not use; not counted: %4, which it does.',
            amount,
            where,
            holders,
            inUse.map(holderName).join(', ')
          )
        : trans.__(
            'Stale references: this notebook still holds %1 on %2%3.',
            amount,
            where,
            holders
          );
    }
    case 'other_processes':
      if (d.kind === 'host') {
        if (container) {
          return known(d.other_processes_bytes)
            ? trans.__(
                'Memory used by the rest of the container: %1 of its RAM is taken by everything but this kernel (other processes in it).',
                b(d.other_processes_bytes)
              )
            : trans.__(
                'Memory used by the rest of the container: its RAM is partly taken by everything but this kernel (other processes in it).'
              );
        }
        return known(d.other_processes_bytes)
          ? trans.__(
              'Memory used by the rest of the machine: %1 of its RAM is taken by everything but this kernel (other programs, the system and its caches).',
              b(d.other_processes_bytes)
            )
          : trans.__(
              'Memory used by the rest of the machine: its RAM is partly taken by everything but this kernel (other programs, the system and its caches).'
            );
      }
      {
        const amount = known(d.other_processes_bytes)
          ? b(d.other_processes_bytes)
          : trans.__('memory');
        const pids = d.other_processes
          .slice(0, 5)
          .map(p =>
            known(p.used_bytes)
              ? trans.__('pid %1 (%2)', p.pid, b(p.used_bytes))
              : trans.__('pid %1', p.pid)
          )
          .join(', ');
        return pids
          ? trans.__('Other processes hold %1 on this card: %2.', amount, pids)
          : trans.__('Other processes hold %1 on this card.', amount);
      }
    case 'child_processes':
      return childProcessesText(d, c.gain_bytes, units);
    case 'dataloader_workers':
      return dataLoaderWorkersText(d, units);
    default:
      return trans.__('Cause "%1" (reported by a newer helper).', cause);
  }
}

/** The training remedies, given when a framework's tensors must shrink. */
function shrinkTheWorkText(): string {
  return trans.__(
    'a smaller batch, mixed precision, gradient checkpointing or accumulation.'
  );
}

/** The data remedies, given when a host array must shrink. */
function shrinkTheDataText(): string {
  return trans.__(
    'work through the data in chunks, in a smaller dtype (float32 rather than float64), or memory-mapped from disk (numpy.memmap).'
  );
}

/**
 * How the work can shrink: the training remedies for a framework's tensors,
 * and the data remedies for a host array.
 */
function shrinkTheWork(d: OomDiagnosis): string {
  return d.kind === 'host' &&
    d.framework !== 'torch' &&
    d.framework !== 'tensorflow'
    ? shrinkTheDataText()
    : shrinkTheWorkText();
}

/**
 * Says what the request was too big for: the whole card or machine, the
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
  // A request that the message did not size, such as a library's workspace,
  // is still called a request.
  const asked = known(requested) ? b(requested) : trans.__('the request');
  const place =
    d.kind === 'host'
      ? container
        ? trans.__('container')
        : trans.__('machine')
      : trans.__('card');
  if (
    requested !== null &&
    d.total_bytes !== null &&
    requested > d.total_bytes
  ) {
    return trans.__(
      'Too big for the %1: %2 is more than the %3 it has, even if this kernel freed everything. The work itself must shrink: %4',
      place,
      b(requested),
      b(d.total_bytes),
      shrinkTheWork(d)
    );
  }
  const capped =
    d.allowed_bytes !== null &&
    d.capacity_bytes !== null &&
    d.capacity_bytes >= d.allowed_bytes;
  if (capped) {
    return trans.__(
      "Too big for this kernel's memory cap: %1 is more than the %2 that torch.cuda.set_per_process_memory_fraction allows it, even if it freed everything. Raise the cap, or shrink the work: %3",
      asked,
      b(d.allowed_bytes),
      shrinkTheWorkText()
    );
  }
  const others = d.other_processes_bytes ?? 0;
  const whole = known(d.total_bytes)
    ? trans.__("the %1's %2", place, b(d.total_bytes))
    : trans.__('the %1', place);
  const left = known(d.capacity_bytes)
    ? trans.__('the %1 left to it of %2', b(d.capacity_bytes), whole)
    : trans.__('what is left to it of %1', whole);
  return others > 0
    ? trans.__(
        'Too big for what this kernel can get: %1 is more than %2 once other processes (%3) and its CUDA context are counted, even if it freed everything. Ending those processes would make room; otherwise the work must shrink: %4',
        asked,
        left,
        b(others),
        shrinkTheWorkText()
      )
    : trans.__(
        'Too big for what this kernel can get: %1 is more than %2 once its CUDA context is counted, even if it freed everything. The work itself must shrink: %3',
        asked,
        left,
        shrinkTheWorkText()
      );
}

/**
 * Says how PyTorch's cache stood in the way. When the cache holds more than
 * the request, it is in pieces too small for it; when it holds less, it is
 * part of the shortfall, because the causes only add up together. For a
 * library that allocates outside the cache, where the request is unknown,
 * the cache simply holds the memory.
 */
function fragmentationText(
  d: OomDiagnosis,
  cache: number | null,
  units: ByteUnits
): string {
  const b = (v: number | null) => formatBytes(v, units);
  const requested = d.requested_bytes;
  const retries = d.num_alloc_retries
    ? ' ' +
      trans._n(
        '(the allocator already retried %1 time)',
        '(the allocator already retried %1 times)',
        d.num_alloc_retries
      )
    : '';
  const held = known(cache) ? b(cache) : trans.__('memory');
  if (requested === null) {
    return d.library
      ? trans.__(
          "Fragmentation: PyTorch's cache holds %1 reserved but unallocated, which %2 cannot use: it allocates outside that cache; torch.cuda.empty_cache() gives it back%3.",
          held,
          d.library,
          retries
        )
      : trans.__(
          "Fragmentation: PyTorch's cache holds %1 reserved but unallocated; torch.cuda.empty_cache() gives it back%2.",
          held,
          retries
        );
  }
  if (!known(cache)) {
    return trans.__(
      "Fragmentation: PyTorch's cache holds memory reserved but unallocated, in pieces too small for the %1 asked for%2.",
      b(requested),
      retries
    );
  }
  if (cache < requested) {
    return trans.__(
      "Fragmentation: PyTorch's cache holds %1 reserved but unallocated, part of what the %2 asked for would need%3.",
      b(cache),
      b(requested),
      retries
    );
  }
  return trans.__(
    'Fragmentation: PyTorch holds %1 reserved but unallocated, more than the %2 asked for, but in pieces too small for it%3.',
    b(cache),
    b(requested),
    retries
  );
}

/**
 * Names a holder with its size, for example "x: 1.2 GiB", "the output cache:
 * 300 MiB" or "the last traceback: 2 GiB"; where it was not sized, the name
 * stands alone.
 */
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
      return trans.__('the output cache');
    case 'last_traceback':
      return trans.__('the last traceback');
    case 'last_execution_result':
      return trans.__("the last cell's result");
    default:
      return h.label;
  }
}
