/**
 * The confirmation that the Cells tab's Clear asks for before it forgets a
 * notebook's cell history. It asks because the history is kept in this
 * browser across reloads, and nothing brings a cleared record back. The
 * notebook's path goes into the dialog as text only.
 *
 * Test hooks: `[data-vram-role="clear-history-body"]`; accept with
 * `.jp-Dialog .jp-mod-accept` ("Clear").
 */
import { formatCount } from '../../text/format';
import { confirmSentences } from '../../ui/confirmDialog';
import { trans } from '../../text/translation';

/** The history to clear, as the dialog names it. */
export interface ClearHistoryRequest {
  /** The number of records that would be forgotten. */
  records: number;
  /** The notebook's path; null if unknown. */
  path: string | null;
}

/** Words the dialog's sentences, the question first. */
export function clearHistoryText(request: ClearHistoryRequest): string[] {
  return [
    request.path
      ? trans._n(
          'Forget the %2 cell record of \u201c%3\u201d, and their badges?',
          'Forget the %2 cell records of \u201c%3\u201d, and their badges?',
          request.records,
          formatCount(request.records),
          request.path
        )
      : trans._n(
          'Forget the %2 cell record of this notebook, and their badges?',
          'Forget the %2 cell records of this notebook, and their badges?',
          request.records,
          formatCount(request.records)
        ),
    trans.__(
      'They are kept in this browser across reloads; once cleared, nothing brings them back. Export the history first (CSV or JSON) to keep it.'
    )
  ];
}

/** Asks in a JupyterLab dialog; resolves to true when the user presses "Clear". */
export function confirmClearHistoryDialog(
  request: ClearHistoryRequest
): Promise<boolean> {
  return confirmSentences({
    title: trans.__('Clear the cell memory history?'),
    role: 'clear-history-body',
    sentences: clearHistoryText(request),
    accept: trans.__('Clear'),
    acceptAriaLabel: trans.__('Clear the cell memory history')
  });
}
