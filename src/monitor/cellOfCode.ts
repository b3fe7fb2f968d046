/**
 * Finds which notebook cell holds some code. This is how a page names a
 * cell that another page (another tab or another browser) sent to the
 * kernel, since this page never saw that request. The kernel's
 * execute_input, which every page hears, carries the code, and the one code
 * cell with exactly that source is the cell. Two cells with the same source
 * name none. Neither does code that this page sent from elsewhere, such as
 * a console or another notebook on the same kernel, because the same code
 * in a cell of this notebook did not run.
 */
import type { IMonitoredNotebook } from './monitoredSession';

/** What the monitor reads of a notebook cell's model. */
interface ISourceCell {
  readonly id: string;
  readonly type: string;
  readonly sharedModel: { getSource(): string };
}

/**
 * The id of the one code cell of `panel` (a NotebookPanel, whose content
 * holds the cells) whose source is `code`. It is null when there is none or
 * several, or when the panel has no notebook content, as in a test.
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
        // Two cells hold this code, so which one ran is not known.
        return null;
      }
      found = cell.id;
    }
  }
  return found;
}

/**
 * The cell of `panel` that ran `code`, sent to the kernel by `client`,
 * which is the `session` of its request or null when unknown. It is null
 * when `client` is one of this page's own kernel connections, because this
 * page names its own cells by id.
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
