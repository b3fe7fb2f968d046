/**
 * Small DOM helpers for the views. Text goes in through `textContent` only:
 * device names, error messages and language names come from the kernel and
 * must never be parsed as HTML.
 */
import { ByteUnits, formatBytes } from '../format';

/** Create an element with a class, optional test hook role and text. */
export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  options: { role?: string; text?: string } = {}
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (options.role) {
    node.dataset.vramRole = options.role;
  }
  if (options.text !== undefined) {
    node.textContent = options.text;
  }
  return node;
}

/** Set text only when it changed (avoids needless layout work). */
export function setText(node: HTMLElement, text: string): void {
  if (node.textContent !== text) {
    node.textContent = text;
  }
}

/**
 * Show a byte figure: formatted text, and the exact integer in
 * `data-vram-bytes` (absent when the figure is unknown) for tests and tools.
 */
export function setBytes(
  node: HTMLElement,
  bytes: number | null | undefined,
  units: ByteUnits
): void {
  setText(node, formatBytes(bytes, units));
  if (typeof bytes === 'number' && Number.isFinite(bytes)) {
    const exact = String(Math.round(bytes));
    if (node.dataset.vramBytes !== exact) {
      node.dataset.vramBytes = exact;
    }
  } else if (node.dataset.vramBytes !== undefined) {
    delete node.dataset.vramBytes;
  }
}

/** Toggle `hidden` only when it changes. */
export function setHidden(node: HTMLElement, hidden: boolean): void {
  if (node.hidden !== hidden) {
    node.hidden = hidden;
  }
}

/**
 * A labelled figure row: "<label> <value>"; returns the value element.
 * `role` goes on the value element (which carries data-vram-bytes).
 */
export function figureRow(
  parent: HTMLElement,
  label: string,
  role: string,
  title?: string
): HTMLElement {
  const row = element('div', 'jp-vram-FigureRow');
  const labelNode = element('span', 'jp-vram-FigureRow-label', {
    text: label
  });
  if (title) {
    row.title = title;
  }
  const value = element('span', 'jp-vram-FigureRow-value', { role });
  row.append(labelNode, value);
  parent.appendChild(row);
  return value;
}

/** Set a bar segment's width as a share of `total` (0 when unknown). */
export function setSegment(
  node: HTMLElement,
  part: number | null | undefined,
  total: number | null | undefined
): void {
  let share = 0;
  if (
    typeof part === 'number' &&
    typeof total === 'number' &&
    total > 0 &&
    part > 0
  ) {
    share = Math.min(100, (part / total) * 100);
  }
  const width = `${share.toFixed(2)}%`;
  if (node.style.width !== width) {
    node.style.width = width;
  }
}
