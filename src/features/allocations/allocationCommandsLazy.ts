/**
 * The work of the allocation commands that is not needed before one of them
 * first runs: going to a cell's line, and downloading the GPU allocator
 * snapshot or the host sites. allocationCommands.ts registers the commands
 * and loads this module when one of them first runs.
 */
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import type { IAllocationCommandOptions } from './allocationCommandOptions';
import { revealLine, type ILineTarget } from './revealLine';
import { downloadBase64, downloadText } from '../../ui/download';

type Options = Pick<
  IAllocationCommandOptions,
  | 'app'
  | 'trans'
  | 'panels'
  | 'current'
  | 'currentNotebookPath'
  | 'records'
  | 'notify'
>;

/** The active notebook's name without `.ipynb`, for file names. */
function stem(options: Options): string {
  const base = (options.currentNotebookPath() ?? '').split('/').pop() ?? '';
  return base.replace(/\.ipynb$/i, '') || 'notebook';
}

/**
 * Activates the cell that a command's arguments name and puts the cursor on its
 * line, resolving to false when that cell cannot be found.
 */
export async function goToCellLine(
  options: Options,
  args: ReadonlyPartialJSONObject
): Promise<boolean> {
  const target: ILineTarget = {
    cellId: typeof args.cellId === 'string' ? args.cellId : null,
    executionCount:
      typeof args.executionCount === 'number' ? args.executionCount : null,
    line: typeof args.line === 'number' ? args.line : 1
  };
  for (const panel of options.panels()) {
    options.app.shell.activateById(panel.id);
    if (await revealLine(panel.content, target)) {
      return true;
    }
  }
  options.notify(
    'warning',
    options.trans.__('That cell is no longer in the notebook.')
  );
  return false;
}

/**
 * Downloads the GPU allocator snapshot of the current kernel, resolving to the
 * file name, or to null when there was nothing to download.
 */
export async function exportAllocationSnapshot(
  options: Options
): Promise<string | null> {
  const recorder = options.current();
  const snapshot = await recorder?.snapshot();
  if (!snapshot) {
    options.notify(
      'error',
      recorder?.error ?? options.trans.__('No snapshot.')
    );
    return null;
  }
  if (snapshot.data_base64 === null) {
    options.notify(
      'warning',
      snapshot.reason ?? options.trans.__('No snapshot.')
    );
    return null;
  }
  const fileName = `${stem(options)}-gpu-snapshot.pickle`;
  downloadBase64(fileName, snapshot.data_base64, 'application/octet-stream');
  return fileName;
}

/**
 * Downloads the current kernel's host allocation sites as CSV, resolving to the
 * file name, or to null when there is no listing.
 */
export async function exportAllocationSites(
  options: Options
): Promise<string | null> {
  const listing = options.current()?.listing;
  if (!listing) {
    return null;
  }
  const { cellIdsByCount, siteRows, sitesToCsv } = await import('./siteRows');
  const cellIds = cellIdsByCount(options.records());
  const host = siteRows(listing, cellIds).find(d => d.device === 'host');
  if (!host) {
    return null;
  }
  const fileName = `${stem(options)}-host-allocation-sites.csv`;
  downloadText(fileName, sitesToCsv(host.rows), 'text/csv');
  return fileName;
}
