/**
 * The figure row "Kernel + N processes" of the Host RAM card and of each GPU
 * card, which adds up the kernel and every process it started (the sample's
 * `processes.totals`, described in docs/protocol.md). The cards keep the
 * kernel's own figure in the row above it. The row is hidden while the
 * kernel has no process, so that a kernel that starts none gets the same
 * cards as before the row existed.
 */
import type { ProcessTree } from '../../protocol/processes';
import { ByteUnits, formatBytes } from '../../text/format';
import { trans } from '../../text/translation';
import {
  element,
  setBytesData,
  setHidden,
  setText,
  setTitle
} from '../../ui/dom';

/**
 * The figures of one "Kernel + N processes" row: how many processes the
 * kernel started, and the bytes of the kernel and its processes together and
 * of the processes alone.
 */
export interface TreeFigures {
  /** The number of processes that the kernel started, not counting itself. */
  count: number;
  /** The kernel and its processes; null where the kernel's own figure is unknown. */
  bytes: number | null;
  /** The processes alone; null where their figure is unknown. */
  processesBytes: number | null;
  /** The row's tooltip, which says how the figure was measured. */
  title: string;
}

/**
 * The Host RAM card's row figures from a sample's process tree; null while
 * the kernel has no process.
 */
export function hostTreeFigures(
  tree: ProcessTree | null | undefined
): TreeFigures | null {
  const totals = tree?.totals;
  if (!tree || !totals || !tree.processes.length) {
    return null;
  }
  return {
    count: tree.processes.length,
    bytes: totals.host_bytes,
    processesBytes: totals.processes_host_bytes,
    title:
      totals.host_measure === 'uss'
        ? trans.__(
            "The kernel's RSS plus each process's USS (its own pages): a page shared with the kernel is counted once"
          )
        : trans.__(
            "The kernel's RSS plus each process's USS, or its RSS where only that is known (then pages shared with the kernel may count twice)"
          )
  };
}

/**
 * GPU `index`'s row figures from a sample's process tree; null while the
 * kernel has no process or the tree has no figure for that GPU.
 */
export function gpuTreeFigures(
  tree: ProcessTree | null | undefined,
  index: number
): TreeFigures | null {
  const gpu = tree?.totals?.gpus.find(g => g.index === index);
  if (!tree || !gpu || !tree.processes.length) {
    return null;
  }
  return {
    count: tree.processes.length,
    bytes: gpu.used_bytes,
    processesBytes: gpu.processes_used_bytes,
    title: trans.__(
      'NVML: this kernel process and the processes it started, on this device'
    )
  };
}

/** The "Kernel + N processes" figure row, placed after the kernel's own row. */
export class TreeFigureRow {
  /**
   * Creates a hidden row after `after`, the kernel's own figure row, whose
   * value carries the data role `role`.
   */
  constructor(after: HTMLElement, role: string) {
    this._row = element('div', 'jp-vram-FigureRow jp-vram-FigureRow-tree');
    this._label = element('span', 'jp-vram-FigureRow-label');
    this._value = element('span', 'jp-vram-FigureRow-value', { role });
    this._row.append(this._label, this._value);
    this._row.hidden = true;
    after.after(this._row);
  }

  /** Shows `figures`, or hides the row when they are null. */
  show(figures: TreeFigures | null, units: ByteUnits): void {
    setHidden(this._row, figures === null);
    if (!figures) {
      setBytesData(this._value, null);
      return;
    }
    const { count, bytes, processesBytes } = figures;
    setText(
      this._label,
      trans._n('Kernel + %1 process', 'Kernel + %1 processes', count)
    );
    // Where the kernel's own figure is unknown, the row gives the processes'
    // bytes and says so, rather than a total that would leave the kernel out.
    setText(
      this._value,
      bytes !== null
        ? formatBytes(bytes, units)
        : trans.__(
            '%1 in processes (the kernel\u2019s own unknown)',
            formatBytes(processesBytes, units)
          )
    );
    setBytesData(this._value, bytes);
    this._value.dataset.vramProcessCount = String(count);
    setTitle(this._row, figures.title);
  }

  private _row: HTMLElement;
  private _label: HTMLElement;
  private _value: HTMLElement;
}
