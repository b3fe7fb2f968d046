/**
 * The words the Processes tab and the stop dialog use for one process: its
 * role, its memory (with the measure named), its GPUs, its age and the cell
 * that started it. The functions are pure; what they return may contain
 * text from the kernel (a command line), so the views put it into the DOM
 * through textContent or title only.
 */
import { ByteUnits, formatBytes } from '../../text/format';
import type {
  ProcessGpuMemory,
  ProcessHostMemory,
  TreeProcess
} from '../../protocol/processes';
import { trans } from '../../text/translation';
import { formatDuration } from '../cells/cellFormat';
import type { ProcessOrigin } from './processOrigin';

export { roleText } from '../../text/roleText';

/** Why the role was given (its basis), and whether it is a guess. */
export function roleTitle(p: TreeProcess): string {
  const lines = [trans.__('Name: %1', p.name)];
  switch (p.role_basis) {
    case 'multiprocessing':
      lines.push(trans.__("Known from the kernel's multiprocessing registry."));
      break;
    case 'name':
      lines.push(trans.__('Known from its process name.'));
      break;
    case 'cmdline':
      lines.push(trans.__('Known from its command line.'));
      break;
    case 'parent':
      lines.push(trans.__("Known from its parent's role."));
      break;
    case 'environment':
      lines.push(
        trans.__('Known from the names of its environment variables.')
      );
      break;
  }
  if (p.role_guess) {
    lines.push(trans.__('This role is a guess.'));
  }
  if (p.reparented) {
    lines.push(
      trans.__(
        'Its parent ended (or it left its parent): it no longer descends from the kernel, and is still listed.'
      )
    );
  }
  return lines.join('\n');
}

/** "120 MiB USS", or "1.6 MiB RSS" where the RSS is all there is. */
export function hostMemoryText(
  host: ProcessHostMemory,
  units: ByteUnits
): string {
  return host.measure === 'uss'
    ? trans.__('%1 USS', formatBytes(host.host_bytes, units))
    : trans.__('%1 RSS', formatBytes(host.host_bytes, units));
}

/** Whether only the RSS is known of a process (it counts shared pages in full). */
export function rssOnly(host: ProcessHostMemory): boolean {
  return host.measure !== 'uss';
}

/** The tooltip of a process's host memory: every measure, and what each means. */
export function hostMemoryTitle(
  host: ProcessHostMemory,
  units: ByteUnits
): string {
  const lines: string[] = [];
  if (host.uss_bytes !== null) {
    lines.push(
      trans.__(
        'USS %1: its own pages, what stopping it gives back',
        formatBytes(host.uss_bytes, units)
      )
    );
  }
  if (host.pss_bytes !== null) {
    lines.push(
      trans.__(
        'PSS %1: its own pages, plus its share of the pages it shares',
        formatBytes(host.pss_bytes, units)
      )
    );
  }
  if (host.rss_bytes !== null) {
    lines.push(
      trans.__(
        'RSS %1: every page it maps, shared ones counted in full',
        formatBytes(host.rss_bytes, units)
      )
    );
  }
  if (host.swap_bytes) {
    lines.push(trans.__('Swap %1', formatBytes(host.swap_bytes, units)));
  }
  if (rssOnly(host)) {
    lines.push(
      trans.__(
        'Only the RSS is known (its private pages are not read yet, or cannot be): it may count pages shared with the kernel.'
      )
    );
  }
  return lines.join('\n');
}

/** "GPU 0: 500 MiB; GPU 1: 2.0 GiB", or "" when no GPU lists it. */
export function gpuMemoryText(
  gpus: readonly ProcessGpuMemory[],
  units: ByteUnits
): string {
  return gpus
    .map(g => trans.__('GPU %1: %2', g.index, formatBytes(g.used_bytes, units)))
    .join('; ');
}

/** "3 min", or "≥ 3 min" for a process that was there before this page watched. */
export function ageText(seconds: number, preexisting: boolean): string {
  const age = formatDuration(Math.max(0, seconds));
  return preexisting ? trans.__('\u2265 %1', age) : age;
}

/** "[5]", or "cell 3f2a1b0c" without an execution count. */
function cellLabel(record: NonNullable<ProcessOrigin['record']>): string {
  if (record.execution_count !== null) {
    return `[${record.execution_count}]`;
  }
  return record.cell_id
    ? trans.__('cell %1', record.cell_id.slice(0, 8))
    : trans.__('a console cell');
}

/** The cell that started a process, in a few words ("[5]", "the running cell", "unknown"). */
export function originText(origin: ProcessOrigin | null): string {
  if (!origin) {
    return trans.__('unknown');
  }
  if (!origin.record) {
    return trans.__('the running cell');
  }
  return origin.during
    ? cellLabel(origin.record)
    : trans.__('%1 (seen after it ended)', cellLabel(origin.record));
}

/** The origin's tooltip: what it means and how it was worked out. */
export function originTitle(origin: ProcessOrigin | null): string {
  if (!origin) {
    return trans.__(
      'No cell can be named: the process was there before this page watched the kernel, or before any cell ran.'
    );
  }
  if (!origin.record) {
    return trans.__('It appeared while the running cell runs.');
  }
  return origin.during
    ? trans.__('It appeared while %1 ran.', cellLabel(origin.record))
    : trans.__(
        'It was first seen just after %1 ended: the helper reads the processes about once a second, so a cell that starts one and returns at once ends first.',
        cellLabel(origin.record)
      );
}

/** Whether to mark a process as outliving its cell: that cell ended and it lives on. */
export function outlivedCell(
  origin: ProcessOrigin | null,
  role: string
): boolean {
  // multiprocessing's resource tracker and forkserver serve the kernel for
  // its whole life by design: outliving the cell says nothing about them.
  return origin !== null && origin.record !== null && role !== 'mp_helper';
}

/** The mark's words: "outlived [5]". */
export function outlivedText(origin: ProcessOrigin): string {
  return trans.__('outlived %1', cellLabel(origin.record!));
}

/** The mark's tooltip. */
export function outlivedTitle(origin: ProcessOrigin): string {
  return trans.__(
    '%1 ended and this process lives on, holding its memory: an abandoned DataLoader iterator, a pool not closed, an engine still up. Stop it if nothing uses it.',
    cellLabel(origin.record!)
  );
}
