/**
 * The Cells table's columns: each one's heading and tooltip. The columns
 * and their order are the sort keys' (CELL_SORT_KEYS).
 */
import { CELL_SORT_KEYS, CellSortKey } from './cellSort';
import { trans } from '../../text/translation';
import { element, makeActivatable } from '../../ui/dom';

/** Each column's heading; it is a function so that the headings are translated when shown. */
export const columnLabels = (): Record<CellSortKey, string> => ({
  execution_count: trans.__('Cell'),
  delta: trans.__('Δ'),
  peak: trans.__('Peak'),
  gpu_mean: trans.__('GPU'),
  gpu_max: trans.__('Max'),
  energy: trans.__('Energy'),
  duration: trans.__('Time'),
  // "Status" does not fit the narrow column, and "Exit" says the same of a
  // cell run.
  status: trans.__('Exit'),
  alive: trans.__('Alive'),
  processes: trans.__('Proc.'),
  cluster: trans.__('Clus.')
});

/** Each column's tooltip, saying what its figure is. */
export const columnTitles = (): Record<CellSortKey, string> => ({
  execution_count: trans.__(
    'Execution count [n] (console: run from a console)'
  ),
  delta: trans.__(
    'Memory change: GPU allocated after minus before (summed over devices), or kernel RSS without GPU figures'
  ),
  peak: trans.__(
    'Peak while the cell ran: largest GPU allocated peak, or kernel RSS peak (~ approximate)'
  ),
  gpu_mean: trans.__(
    "Mean GPU utilisation while the cell ran (the busiest GPU, from the driver's samples); ~: the driver's buffer did not cover the whole cell"
  ),
  gpu_max: trans.__(
    'Highest GPU utilisation sampled while the cell ran (the busiest GPU)'
  ),
  energy: trans.__(
    "Energy the GPUs drew while the cell ran, in joules (the whole GPUs', every process on them)"
  ),
  duration: trans.__('How long the cell ran'),
  status: trans.__(
    'How the cell ended: ok, error, OOM (out of memory), intr. (interrupted), died (the kernel died while it ran)'
  ),
  alive: trans.__(
    'Bytes this cell allocated that are still alive (latest run; needs "Record allocations" in the Lines tab). \u26a0: they grow at each run, a likely leak'
  ),
  processes: trans.__(
    "The kernel's processes (workers, subprocesses): their host memory after minus before, or ~ their sampled maximum where they gave it back (the row's tooltip says how far apart the readings were)"
  ),
  cluster: trans.__(
    "The Dask or Ray cluster's workers: their memory after minus before, from the engine's telemetry read every few seconds (the row's tooltip has the sampled maximum)"
  )
});

/**
 * Creates the table's header row, with a sortable heading per column, each
 * put into `headers` by its key; a click, Enter or Space on one runs
 * `sortBy`.
 */
export function createHeaderRow(
  sortBy: (key: CellSortKey) => void,
  headers: Map<CellSortKey, HTMLElement>
): HTMLElement {
  const header = element('div', 'jp-vram-CellRow jp-vram-CellRow-header');
  header.setAttribute('role', 'row');
  const labels = columnLabels();
  const titles = columnTitles();
  for (const key of CELL_SORT_KEYS) {
    const h = element('div', `jp-vram-CellCol jp-vram-CellCol-${key}`, {
      role: 'cell-sort',
      text: labels[key]
    });
    h.setAttribute('role', 'columnheader');
    h.setAttribute('aria-sort', 'none');
    h.title = titles[key];
    h.dataset.vramSortKey = key;
    makeActivatable(h, () => sortBy(key));
    headers.set(key, h);
    header.appendChild(h);
  }
  return header;
}
