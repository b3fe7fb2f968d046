/**
 * What the kernel's own processes (DataLoader workers, pool workers, a
 * spawned child, an engine) held when the kernel died, and which of them the
 * out-of-memory killer most likely took. The killer picks the process with
 * the most memory first (its RSS and swap), so a child holding more than
 * the kernel would be its first pick, and a count that rose by more than
 * one says that it took more than the kernel. Pure words from the dead
 * kernel's last sample, for the explanation's details.
 */
import { ByteUnits, formatBytes } from '../text/format';
import { roleText } from '../text/roleText';
import { trans } from '../text/translation';
import type { SampleMessage } from '../protocol/sample';

/** The most processes one sentence names. */
const NAMED = 3;

interface Held {
  label: string;
  rss: number;
}

/**
 * The details on the kernel's processes at its death: what they held, and,
 * where the killer acted (`killed`: the kills counted since the last
 * sample, or null when the verdict only says "most likely"), which of them
 * it most likely took. Empty when the last sample listed no process.
 */
export function deathProcessLines(
  sample: SampleMessage,
  kills: number | null,
  killerSuspected: boolean,
  units: ByteUnits
): string[] {
  const tree = sample.processes;
  if (!tree || !tree.processes.length) {
    return [];
  }
  const bytes = (n: number | null) => formatBytes(n, units);
  const lines = [
    trans._n(
      'Its %1 process held %2 besides the kernel at the last figures (kernel + %1 process: %3).',
      'Its %1 processes held %2 besides the kernel at the last figures (kernel + %1 processes: %3).',
      tree.processes.length,
      bytes(tree.totals?.processes_host_bytes ?? null),
      bytes(tree.totals?.host_bytes ?? null)
    )
  ];
  if (!killerSuspected) {
    return lines;
  }
  const kernelRss = sample.host.rss_bytes ?? 0;
  const held: Held[] = tree.processes
    .map(p => ({
      label: trans.__(
        '%1 pid %2 (%3)',
        roleText(p.role),
        p.pid,
        bytes(p.host.rss_bytes ?? p.host.host_bytes)
      ),
      rss: p.host.rss_bytes ?? p.host.host_bytes ?? 0
    }))
    .sort((a, b) => b.rss - a.rss);
  const larger = held.filter(p => p.rss > kernelRss);
  if (larger.length) {
    lines.push(
      trans._n(
        'The out-of-memory killer takes the process with the most memory first: %2 held more than the kernel (RSS %3), so the killer most likely took it first.',
        'The out-of-memory killer takes the process with the most memory first: %2 held more than the kernel (RSS %3), so the killer most likely took them first.',
        larger.length,
        names(larger),
        bytes(kernelRss)
      )
    );
  } else if (kills !== null && kills > 1) {
    lines.push(
      trans.__(
        'The count rose by %1, so the killer took more than the kernel: most likely its largest processes too, %2.',
        kills,
        names(held.slice(0, kills - 1))
      )
    );
  }
  return lines;
}

function names(held: Held[]): string {
  const named = held.slice(0, NAMED).map(p => p.label);
  const more = held.length - named.length;
  return more > 0
    ? trans.__('%1 and %2 more', named.join(', '), more)
    : named.join(', ');
}
