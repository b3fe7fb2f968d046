/**
 * What a cell's "still alive" figure says, in words, for the Cells tab's
 * column and for the badge tooltip. This module has no DOM.
 */
import type { CellAliveBytes } from '../../protocol/allocation';
import { ByteUnits, formatBytes } from '../../text/format';
import type { CellHistory, CellHistoryEntry } from '../../model/CellHistory';
import { trans } from '../../text/translation';

/**
 * The still-alive figure shown on `entry`: that of its cell, but only on the
 * latest run of the cell, because an earlier run's row would repeat the
 * cell's figure of now. It is undefined for console runs and for cells
 * without a figure. The Alive column shows it and sorts by it.
 */
export function cellAliveOf(
  entry: CellHistoryEntry,
  alive: ReadonlyMap<string, CellAliveBytes>,
  cells: Pick<CellHistory, 'latestForCell'>
): CellAliveBytes | undefined {
  const cellId = entry.record.cell_id;
  if (cellId === null || cells.latestForCell(cellId) !== entry) {
    return undefined;
  }
  return alive.get(cellId);
}

/**
 * A cell's "still alive" figure put into words, for the table cell and for the
 * tooltip.
 */
export interface CellAliveText {
  /** The table cell's text, such as "12.0 MiB", with a warning sign when it keeps growing. */
  short: string;
  /** The tooltip lines. */
  lines: string[];
  /** Whether its live memory grew at each of its last runs, which points to a leak. */
  growing: boolean;
}

/** Says what the host figures of allocation recording cover, and what they miss. */
export function hostTracedText(): string {
  return trans.__(
    'Host: what tracemalloc sees (Python objects, NumPy arrays); PyTorch CPU tensors are not traced.'
  );
}

/**
 * Puts into words the bytes a cell's allocations still hold, or returns null
 * when nothing is known about them.
 */
export function cellAliveText(
  alive: CellAliveBytes | undefined,
  units: ByteUnits
): CellAliveText | null {
  if (!alive) {
    return null;
  }
  const devices = Object.entries(alive.alive_bytes)
    .filter(([, bytes]) => bytes > 0)
    .map(([device, bytes]) => `${device} ${formatBytes(bytes, units)}`);
  const total = formatBytes(alive.total_bytes, units);
  const lines = [
    devices.length
      ? trans.__(
          'Still alive from this cell: %1 (%2)',
          total,
          devices.join(', ')
        )
      : trans.__('Still alive from this cell: %1', total)
  ];
  if ('host' in alive.alive_bytes) {
    // A 200 MiB torch.ones(...) on the CPU shows here as a few bytes, because
    // tracemalloc does not see PyTorch's CPU tensors, so the tooltip says so.
    lines.push(hostTracedText());
  }
  if (alive.growing) {
    const runs = alive.runs
      .slice(-4)
      .map(r => formatBytes(r.total_bytes, units))
      .join(' \u2192 ');
    lines.push(
      runs
        ? trans.__(
            'Likely leak: its live memory grew at each of its last runs (%1).',
            runs
          )
        : trans.__(
            'Likely leak: its live memory grew at each of its last runs.'
          )
    );
  }
  return {
    short: `${formatBytes(alive.total_bytes, units)}${alive.growing ? ' \u26a0' : ''}`,
    lines,
    growing: alive.growing
  };
}
