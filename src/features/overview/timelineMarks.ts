/**
 * What the timeline draws on its canvas besides the lines: the cell runs,
 * under them, and the ends of kernel processes, over them.
 */
import type uPlot from 'uplot';

import { KernelMark, KernelMarkKind } from '../../model/MemoryHistory';

/**
 * Draws the cell runs in `marks`, given as [start, end] times, as faint
 * bands with a thin line at each start. The chart calls it before it draws
 * the lines, so that the bands lie under them.
 */
export function drawCellMarks(
  u: uPlot,
  marks: readonly [number, number][],
  bandColor: string,
  markColor: string
): void {
  if (!marks.length) {
    return;
  }
  const ctx = u.ctx;
  const { left, top, width, height } = u.bbox;
  ctx.save();
  ctx.beginPath();
  ctx.rect(left, top, width, height);
  ctx.clip();
  ctx.globalAlpha = 0.35;
  ctx.fillStyle = bandColor;
  for (const [start, end] of marks) {
    const x0 = u.valToPos(start, 'x', true);
    const x1 = u.valToPos(end, 'x', true);
    ctx.fillRect(x0, top, Math.max(1, x1 - x0), height);
  }
  ctx.globalAlpha = 0.8;
  ctx.strokeStyle = markColor;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const [start] of marks) {
    const x = Math.round(u.valToPos(start, 'x', true)) + 0.5;
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
  }
  ctx.stroke();
  ctx.restore();
}

/**
 * Draws the ends of kernel processes in `marks` as dashed lines. The chart
 * calls it after it draws the lines, so that no end hides under one.
 */
export function drawKernelMarks(
  u: uPlot,
  marks: readonly KernelMark[],
  colors: Record<KernelMarkKind, string>
): void {
  if (!marks.length) {
    return;
  }
  const ctx = u.ctx;
  const { top, height } = u.bbox;
  ctx.save();
  ctx.lineWidth = 2;
  ctx.setLineDash([4, 3]);
  for (const mark of marks) {
    const x = Math.round(u.valToPos(mark.time, 'x', true)) + 0.5;
    ctx.strokeStyle = colors[mark.kind];
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
  }
  ctx.restore();
}
