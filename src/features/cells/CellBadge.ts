/**
 * The memory badge of one executed code cell, such as "+1.2 GiB · peak
 * 3.4 GiB · 2.1 s", with the per-device breakdown in its tooltip. It is a
 * plain DOM node that NotebookCellBadges owns, and it is filled with text
 * only, because the tooltip carries text from the kernel.
 *
 * Test hooks: `data-vram-role="cell-badge"` and the exact figures in
 * `data-vram-delta-bytes`, `data-vram-peak-bytes` (absent when unknown),
 * `data-vram-ram-delta-bytes` (a GPU cell that moved host RAM by a GiB or more),
 * `data-vram-processes-delta-bytes` and `data-vram-processes-max-bytes` (the
 * kernel's processes' host memory, where they held some worth showing),
 * `data-vram-cluster-delta-bytes` and `data-vram-cluster-max-bytes` (the
 * cluster's workers, where a cluster was attached during the cell),
 * `data-vram-duration-s`, `data-vram-status`, `data-vram-level`,
 * `data-vram-execution-count`; with GPU load figures, `data-vram-gpu-mean`
 * (percent), `data-vram-gpu-coverage` and `data-vram-hints` (the hints'
 * kinds: "input-bound", "throttled").
 */
import { formatCellBadge } from './cellFormat';
import type { ProcessesAlongside } from './cellProcessFigures';
import type { ClusterAlongside } from './cellClusterFigures';
import { ByteUnits } from '../../text/format';
import { CellSummary } from '../../model/cellFigures';
import { element, setData, setTitle } from '../../ui/dom';
import { CellHint, cellHintKinds, cellHintLabel } from './cellHints';
import { CellLoadSummary } from './cellLoad';
import { formatBadgeLoad } from './cellLoadText';

/**
 * Everything a cell's memory badge shows, gathered so that the badge can be
 * rendered in one step.
 */
export interface CellBadgeContent {
  /** The cell run's memory figures and outcome. */
  summary: CellSummary;
  executionCount: number | null;
  /** The tooltip, as plain text; it may contain text from the kernel. */
  title: string;
  level: 'normal' | 'warning';
  /** Whether the badge comes from the notebook's saved metadata rather than a live record. */
  saved: boolean;
  /** Whether the record comes from an earlier kernel process than the notebook's kernel now. */
  earlier: boolean;
  /**
   * The kernel's processes around the cell, where they are worth showing (see
   * processesAlongside).
   */
  processes?: ProcessesAlongside | null;
  /** The cluster's workers around the cell, where one was attached (see clusterAlongside). */
  cluster?: ClusterAlongside | null;
  /**
   * Whether the kernel-death mark beside the badge shows the outcome already,
   * so that the badge leaves it out.
   */
  outcomeMarked?: boolean;
  units: ByteUnits;
  /** The cell's GPU load; null or absent when there is none, as with saved metadata. */
  load?: CellLoadSummary | null;
  /** The hints drawn from the load. */
  hints?: readonly CellHint[];
}

/** The badge's load parts: "GPU 93%", followed by "input-bound?" when that hint holds. */
function loadParts(content: CellBadgeContent): string[] {
  const gpu = formatBadgeLoad(content.load ?? null);
  if (gpu === null) {
    return [];
  }
  const inputBound = content.hints?.find(h => h.kind === 'input-bound');
  return inputBound ? [gpu, cellHintLabel(inputBound)] : [gpu];
}

/** The CSS class of every cell memory badge. */
export const CELL_BADGE_CLASS = 'jp-vram-CellBadge';

/** Creates the empty DOM node of a cell memory badge. */
export function createCellBadgeNode(): HTMLElement {
  return element('div', CELL_BADGE_CLASS, { role: 'cell-badge' });
}

/** A figure for a data attribute, rounded to a whole number; null when unknown. */
function numberText(v: number | null): string | null {
  return v === null || !Number.isFinite(v) ? null : String(Math.round(v));
}

/** Shows `content` in a badge node, touching only what changed. */
export function renderCellBadge(
  node: HTMLElement,
  content: CellBadgeContent
): void {
  const s = content.summary;
  const p = content.processes ?? null;
  const text = formatCellBadge(
    s,
    content.units,
    !content.outcomeMarked,
    p,
    loadParts(content),
    content.cluster ?? null
  );
  if (node.textContent !== text) {
    node.textContent = text;
  }
  setTitle(node, content.title);
  setData(node, 'vramDeltaBytes', numberText(s.deltaBytes));
  setData(
    node,
    'vramRamDeltaBytes',
    s.ramAlongside ? numberText(s.ramAlongside.deltaBytes) : null
  );
  setData(node, 'vramPeakBytes', numberText(s.peakBytes));
  setData(
    node,
    'vramProcessesDeltaBytes',
    p ? numberText(p.hostDeltaBytes) : null
  );
  setData(
    node,
    'vramProcessesMaxBytes',
    p ? numberText(p.hostSampledMaxBytes) : null
  );
  const c = content.cluster ?? null;
  setData(node, 'vramClusterDeltaBytes', c ? numberText(c.deltaBytes) : null);
  setData(
    node,
    'vramClusterMaxBytes',
    c ? numberText(c.sampledMaxBytes) : null
  );
  setData(node, 'vramPeakExact', String(s.peakExact));
  setData(node, 'vramDurationS', String(s.durationS));
  setData(node, 'vramStatus', s.status);
  setData(node, 'vramOutOfMemory', String(s.outOfMemory));
  setData(node, 'vramLevel', content.level);
  setData(node, 'vramSource', s.source);
  setData(
    node,
    'vramExecutionCount',
    content.executionCount === null ? null : String(content.executionCount)
  );
  const load = content.load ?? null;
  setData(node, 'vramGpuMean', numberText(load?.meanPercent ?? null));
  setData(node, 'vramGpuCoverage', load ? load.coverage : null);
  setData(node, 'vramHints', cellHintKinds(content.hints ?? []));
  setData(node, 'vramSaved', content.saved ? 'true' : null);
  setData(node, 'vramEarlier', content.earlier ? 'true' : null);
  node.classList.toggle('jp-vram-warning', content.level === 'warning');
  node.classList.toggle('jp-vram-CellBadge-saved', content.saved);
  node.classList.toggle('jp-vram-CellBadge-earlier', content.earlier);
  node.classList.toggle('jp-vram-CellBadge-error', s.outcome !== 'ok');
  node.classList.toggle('jp-vram-CellBadge-oom', s.outcome === 'oom');
}
