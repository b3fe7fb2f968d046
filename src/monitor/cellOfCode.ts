/**
 * Finds which notebook cell holds some code. This is how a page names a
 * cell that another page (another tab or another browser) sent to the
 * kernel, since this page never saw that request. The kernel's execute_input, which every page hears, carries the
 * code; the one code cell with exactly that source is the cell. Two cells
 * with the same source name none, and neither does code this page sent
 * from elsewhere (a console, another notebook on the same kernel: the same
 * code in a cell of this one did not run).
 */
import type { IMonitoredNotebook } from './monitoredSession';

/** What the monitor reads of a notebook cell's model. */
interface ISourceCell {
  readonly id: string;
  readonly type: string;
  readonly sharedModel: { getSource(): string };
}

/**
 * The id of the one code cell of `panel` (a NotebookPanel: its content's
 * cells) whose source is `code`; null when none or several, or when the
 * panel has no notebook content (a test's).
 */
export function cellIdOfCode(
  panel: IMonitoredNotebook,
  code: string
): string | null {
  const cells = (
    panel as { content?: { model?: { cells?: Iterable<ISourceCell> } | null } }
  ).content?.model?.cells;
  let found: string | null = null;
  for (const cell of cells ?? []) {
    if (cell.type === 'code' && cell.sharedModel.getSource() === code) {
      if (found !== null) {
        return null; // two cells with this code: which one ran is not known
      }
      found = cell.id;
    }
  }
  return found;
}

/**
 * The cell of `panel` that ran `code`, sent to the kernel by `client` (the
 * `session` of its request; null: unknown), unless `client` is one of this
 * page's own kernel connections.
 */
export function cellIdOfOtherPagesCode(
  panel: IMonitoredNotebook,
  code: string,
  client: string | null,
  isPageClient: (client: string) => boolean
): string | null {
  return client !== null && isPageClient(client)
    ? null
    : cellIdOfCode(panel, code);
}
