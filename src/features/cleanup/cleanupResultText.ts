/**
 * The sentences that say what a cleanup did, from the before and after
 * figures of a `free_memory` or `delete` reply. The functions are pure, so
 * that the sidebar's result area and the notification show the same text.
 *
 *   "gc collected 1,234 objects; RAM −120 MiB"
 *   "Freed 3.2 GiB reserved on GPU 0; allocated unchanged: something still references it"
 *   "empty_cache skipped: no GPU is visible to this kernel"
 */
import {
  DeleteFailure,
  DeleteResult,
  FreeMemoryResult,
  MemorySnapshot,
  SnapshotGpu
} from '../../protocol/cleanup';
import { ByteUnits, formatBytes, formatCount } from '../../text/format';
import { trans } from '../../text/translation';

/** A cleanup's outcome in words, plus the bytes it gave back. */
export interface ResultDescription {
  /** One line per subject (host, each GPU, refusals...); the first is the gist. */
  lines: string[];
  /**
   * Bytes that came back: per GPU the larger of the drops in allocated and
   * reserved memory, plus the drop in the kernel's RSS (drops only, never
   * negative). null when no figure was known on both sides.
   */
  freedBytes: number | null;
}

const MINUS = '\u2212';

/** Formats a signed change in bytes, for example "−120 MiB", "+3 MiB" or "0 B". */
export function formatSignedBytes(delta: number, units: ByteUnits): string {
  if (delta === 0) {
    return formatBytes(0, units);
  }
  return `${delta < 0 ? MINUS : '+'}${formatBytes(Math.abs(delta), units)}`;
}

function diff(before: number | null, after: number | null): number | null {
  return before === null || after === null ? null : after - before;
}

function gpuPairs(
  before: MemorySnapshot,
  after: MemorySnapshot
): { index: number; before: SnapshotGpu | null; after: SnapshotGpu | null }[] {
  const indices = new Set<number>();
  before.gpus.forEach(g => indices.add(g.index));
  after.gpus.forEach(g => indices.add(g.index));
  return Array.from(indices)
    .sort((a, b) => a - b)
    .map(index => ({
      index,
      before: before.gpus.find(g => g.index === index) ?? null,
      after: after.gpus.find(g => g.index === index) ?? null
    }));
}

/** See ResultDescription.freedBytes. */
export function freedBytesBetween(
  before: MemorySnapshot,
  after: MemorySnapshot
): number | null {
  let total: number | null = null;
  const add = (bytes: number) => {
    total = (total ?? 0) + Math.max(0, bytes);
  };
  for (const { before: b, after: a } of gpuPairs(before, after)) {
    const allocated = diff(
      b?.allocated_bytes ?? null,
      a?.allocated_bytes ?? null
    );
    const reserved = diff(b?.reserved_bytes ?? null, a?.reserved_bytes ?? null);
    if (allocated !== null || reserved !== null) {
      add(Math.max(0, -(allocated ?? 0), -(reserved ?? 0)));
    }
  }
  const rss = diff(before.host.rss_bytes, after.host.rss_bytes);
  if (rss !== null) {
    add(-rss);
  }
  return total;
}

/**
 * Says how the RAM changed, for example "RAM −120 MiB" or "RAM unchanged".
 * Returns null when the RSS was not known both times.
 */
function ramClause(
  before: MemorySnapshot,
  after: MemorySnapshot,
  units: ByteUnits
): string | null {
  const rss = diff(before.host.rss_bytes, after.host.rss_bytes);
  if (rss === null) {
    return null;
  }
  return rss === 0
    ? trans.__('RAM unchanged')
    : trans.__('RAM %1', formatSignedBytes(rss, units));
}

/**
 * One sentence for a GPU whose figures are known, or null when none of them
 * are.
 */
function gpuSentence(
  index: number,
  b: SnapshotGpu | null,
  a: SnapshotGpu | null,
  units: ByteUnits
): string | null {
  const allocated = diff(
    b?.allocated_bytes ?? null,
    a?.allocated_bytes ?? null
  );
  const reserved = diff(b?.reserved_bytes ?? null, a?.reserved_bytes ?? null);
  const nvml = diff(b?.nvml_used_bytes ?? null, a?.nvml_used_bytes ?? null);
  const stillAllocated = a?.allocated_bytes ?? null;
  const nvmlNote =
    nvml !== null && nvml !== 0
      ? ' ' + trans.__('(NVML used %1)', formatSignedBytes(nvml, units))
      : '';

  if (allocated === null && reserved === null) {
    return nvml !== null && nvml !== 0
      ? trans.__('GPU %1: NVML used %2', index, formatSignedBytes(nvml, units))
      : null;
  }
  if (reserved !== null && reserved < 0) {
    const freed = formatBytes(-reserved, units);
    let text: string;
    if (allocated === 0 && stillAllocated !== null && stillAllocated > 0) {
      text = trans.__(
        'Freed %1 reserved on GPU %2; allocated unchanged: something still references it',
        freed,
        index
      );
    } else if (allocated !== null && allocated < 0) {
      text = trans.__(
        'Freed %1 reserved on GPU %2; allocated %3',
        freed,
        index,
        formatSignedBytes(allocated, units)
      );
    } else {
      text = trans.__('Freed %1 reserved on GPU %2', freed, index);
    }
    return text + nvmlNote;
  }
  if (allocated !== null && allocated < 0) {
    const freed = formatBytes(-allocated, units);
    const text =
      reserved === 0 && (a?.reserved_bytes ?? 0) > 0
        ? trans.__(
            "Freed %1 allocated on GPU %2; still reserved by PyTorch's cache (empty_cache returns it)",
            freed,
            index
          )
        : trans.__('Freed %1 allocated on GPU %2', freed, index);
    return text + nvmlNote;
  }
  const grew =
    (allocated !== null && allocated > 0) ||
    (reserved !== null && reserved > 0);
  if (grew) {
    return (
      trans.__(
        'GPU %1: allocated %2, reserved %3',
        index,
        formatSignedBytes(allocated ?? 0, units),
        formatSignedBytes(reserved ?? 0, units)
      ) + nvmlNote
    );
  }
  const text =
    stillAllocated !== null && stillAllocated > 0
      ? trans.__(
          'Nothing freed on GPU %1; %2 still allocated: something still references it',
          index,
          formatBytes(stillAllocated, units)
        )
      : trans.__('Nothing freed on GPU %1', index);
  return text + nvmlNote;
}

function gpuLines(
  before: MemorySnapshot,
  after: MemorySnapshot,
  units: ByteUnits
): string[] {
  const lines: string[] = [];
  for (const pair of gpuPairs(before, after)) {
    const line = gpuSentence(pair.index, pair.before, pair.after, units);
    if (line) {
      lines.push(line);
    }
  }
  return lines;
}

/** What the page knows of the kernel beside the reply. */
export interface ResultContext {
  /**
   * The kernel is known to see no GPU (gpuVisibility.ts's seesNoGpu: true).
   * Its helper says why empty_cache was skipped only in CUDA's terms, which
   * read there as if CUDA were the user's to initialise.
   */
  noGpu?: boolean;
}

/** Why empty_cache did nothing, or null when it ran (or was not asked). */
export function emptyCacheSkipText(
  outcome: string | null,
  context: ResultContext = {}
): string | null {
  switch (outcome) {
    case null:
    case 'done':
      return null;
    case 'skipped_cuda_not_initialized':
    case 'skipped_torch_not_imported':
      if (context.noGpu) {
        return trans.__(
          'empty_cache skipped: no GPU is visible to this kernel'
        );
      }
      // This is stated as a fact rather than a step to take, because a kernel
      // that has not used CUDA has nothing to give back.
      return outcome === 'skipped_cuda_not_initialized'
        ? trans.__(
            'empty_cache skipped: this kernel has not used CUDA yet, so nothing is cached'
          )
        : trans.__('empty_cache skipped: PyTorch not imported in this kernel');
    default:
      return trans.__('empty_cache: %1', outcome);
  }
}

/** What a `free_memory` reply says, in words. */
export function describeFreeResult(
  result: FreeMemoryResult,
  units: ByteUnits = 'binary',
  context: ResultContext = {}
): ResultDescription {
  const { before, after } = result;
  const first: string[] = [];
  const ranGc =
    result.actions_run.includes('gc') || result.gc_collected !== null;
  if (ranGc) {
    first.push(
      result.gc_collected === null
        ? trans.__('gc ran')
        : trans._n(
            'gc collected %2 object',
            'gc collected %2 objects',
            result.gc_collected,
            formatCount(result.gc_collected)
          )
    );
  }
  const skip = emptyCacheSkipText(result.empty_cache, context);
  if (skip) {
    first.push(skip);
  }
  const failures = result.failures ?? [];
  // The outcome of empty_cache already says how it failed.
  const gcFailures = failures.filter(f => f.step !== 'empty_cache');
  first.push(...Array.from(new Set(gcFailures.map(failureGist))));
  const ram = ramClause(before, after, units);
  if (ram && (ranGc || ram !== trans.__('RAM unchanged'))) {
    first.push(ram);
  }
  const lines: string[] = [];
  if (first.length) {
    lines.push(first.join('; '));
  }
  for (const f of gcFailures) {
    lines.push(failureText(f, []));
  }
  lines.push(...gpuLines(before, after, units));
  if (!lines.length) {
    lines.push(
      result.empty_cache === 'done'
        ? trans.__('empty_cache done; no memory figure changed')
        : trans.__('Done; no memory figure changed')
    );
  }
  return { lines, freedBytes: freedBytesBetween(before, after) };
}

/**
 * Names a hidden holder kind in words, such as "the last traceback". An
 * unknown kind is shown as the kernel's text.
 */
export function hiddenHolderText(holder: string): string {
  switch (holder) {
    case 'output_cache':
      return trans.__('the output cache');
    case 'last_traceback':
      return trans.__('the last traceback');
    case 'last_execution_result':
      return trans.__('the last execution result');
    default:
      return holder;
  }
}

/** Lists names up to `max` of them, for example "a, b, c and 4 more". */
export function listNames(names: readonly string[], max = 5): string {
  if (names.length <= max) {
    return names.join(', ');
  }
  return trans.__(
    '%1 and %2 more',
    names.slice(0, max).join(', '),
    names.length - max
  );
}

/**
 * Says why a name's memory did not come back, for example "x is still
 * referenced by a list — its memory did not come back".
 */
export function stillAliveText(name: string, reason: string): string {
  return /^still\b/i.test(reason)
    ? trans.__('%1 is %2 \u2014 its memory did not come back', name, reason)
    : trans.__('%1: %2 \u2014 its memory did not come back', name, reason);
}

/**
 * The gist of a failed step, for example "empty_cache failed" or "clearing
 * the output cache failed".
 */
function failureGist(f: DeleteFailure): string {
  switch (f.step) {
    case 'delete':
      return f.target !== null
        ? trans.__('deleting %1 failed partway', f.target)
        : trans.__('deleting a name failed partway');
    case 'clear':
      return f.target !== null
        ? trans.__('clearing %1 failed', hiddenHolderText(f.target))
        : trans.__('clearing a hidden holder failed');
    default:
      return trans.__('%1 failed', f.step);
  }
}

/** One line per failed step of a delete, with the kernel's error. */
export function failureText(
  f: DeleteFailure,
  deleted: readonly string[]
): string {
  switch (f.step) {
    case 'delete':
      return f.target !== null && deleted.includes(f.target)
        ? trans.__(
            "%1 was deleted, but removing IPython's copies of it failed: %2",
            f.target,
            f.error
          )
        : trans.__(
            'Not deleted: %1 \u2014 %2',
            f.target ?? trans.__('a name'),
            f.error
          );
    case 'clear':
      return trans.__(
        'Not cleared: %1 \u2014 %2',
        f.target !== null
          ? hiddenHolderText(f.target)
          : trans.__('a hidden holder'),
        f.error
      );
    default:
      return f.target
        ? trans.__('%1 failed on %2: %3', f.step, f.target, f.error)
        : trans.__('%1 failed: %2', f.step, f.error);
  }
}

/**
 * How many surviving names are shown one by one; the rest are only counted.
 */
export const MAX_STILL_ALIVE_LINES = 10;

/**
 * What a `delete` reply says, in words. The names come from the kernel, so
 * they must be shown as text only.
 */
export function describeDeleteResult(
  result: DeleteResult,
  units: ByteUnits = 'binary'
): ResultDescription {
  const { before, after } = result;
  const freedBytes = freedBytesBetween(before, after);
  const done: string[] = [];
  if (result.deleted.length) {
    done.push(trans.__('Deleted %1', listNames(result.deleted)));
  }
  if (result.cleared.length) {
    const names = listNames(result.cleared.map(hiddenHolderText));
    done.push(
      done.length
        ? trans.__('cleared %1', names)
        : trans.__('Cleared %1', names)
    );
  }
  const failures = result.failures ?? [];
  // What failed is shown beside what was done, because the names are gone
  // all the same.
  const failed = Array.from(new Set(failures.map(failureGist)));
  const freed =
    freedBytes === null
      ? trans.__('freed memory unknown')
      : freedBytes > 0
        ? trans.__('%1 freed', formatBytes(freedBytes, units))
        : trans.__('nothing freed');
  const lines: string[] = [];
  const gist = done.length ? done.join('; ') : trans.__('Nothing was deleted');
  lines.push(trans.__('%1: %2', [gist, ...failed].join('; '), freed));
  for (const f of failures) {
    lines.push(failureText(f, result.deleted));
  }
  const ram = ramClause(before, after, units);
  const gpus = gpuLines(before, after, units);
  // Without GPU figures, what was freed is the RAM's drop, and it is said
  // once rather than twice.
  const onlyRam = gpus.length === 0 && freedBytes !== null && freedBytes > 0;
  if (
    ram &&
    !(
      onlyRam &&
      ram === trans.__('RAM %1', formatSignedBytes(-freedBytes!, units))
    )
  ) {
    lines.push(ram);
  }
  lines.push(...gpus);
  for (const { name, reason, hidden } of result.refused) {
    lines.push(
      hidden
        ? trans.__('Not cleared: %1 \u2014 %2', hiddenHolderText(name), reason)
        : trans.__('Not deleted: %1 \u2014 %2', name, reason)
    );
  }
  for (const { name, reason } of result.still_alive.slice(
    0,
    MAX_STILL_ALIVE_LINES
  )) {
    lines.push(stillAliveText(name, reason));
  }
  const more = result.still_alive.length - MAX_STILL_ALIVE_LINES;
  if (more > 0) {
    lines.push(
      trans._n(
        '\u2026and %2 more name whose memory did not come back',
        '\u2026and %2 more names whose memory did not come back',
        more,
        formatCount(more)
      )
    );
  }
  return { lines, freedBytes };
}

/** What a cleanup reply says, in words: a `delete`'s or a `free_memory`'s. */
export function describeResult(
  result: FreeMemoryResult | DeleteResult,
  units: ByteUnits = 'binary',
  context: ResultContext = {}
): ResultDescription {
  return 'deleted' in result
    ? describeDeleteResult(result, units)
    : describeFreeResult(result, units, context);
}
