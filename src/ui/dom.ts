/**
 * Small DOM helpers for the views. Text goes in through `textContent` only:
 * device names, error messages and language names come from the kernel and
 * must never be parsed as HTML.
 */
import { ByteUnits, formatBytes } from '../text/format';

/** Create an element with a class, optional test hook role, text and tooltip. */
export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  options: { role?: string; text?: string; title?: string } = {}
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (options.role) {
    node.dataset.vramRole = options.role;
  }
  if (options.text !== undefined) {
    node.textContent = options.text;
  }
  if (options.title) {
    node.title = options.title;
  }
  return node;
}

/**
 * A `type="button"` button (the default type would submit an enclosing
 * form, e.g. in a dialog) that runs `onClick`.
 */
export function button(
  className: string,
  options: { role?: string; text?: string; title?: string },
  onClick: (event: MouseEvent) => void
): HTMLButtonElement {
  const node = element('button', className, options);
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}

/**
 * Make an element that is no button act like one for the keyboard too:
 * focusable, and `activate` runs on a click, Enter or Space (Space without
 * scrolling the panel). Keys pressed on an element inside it are its own.
 */
export function makeActivatable(node: HTMLElement, activate: () => void): void {
  node.tabIndex = 0;
  node.addEventListener('click', () => activate());
  node.addEventListener('keydown', event => {
    const isActivationKey = event.key === 'Enter' || event.key === ' ';
    if (event.target !== node || !isActivationKey) {
      return;
    }
    event.preventDefault();
    activate();
  });
}

/**
 * Append `name`, a dotted name (torch.nn.modules.container.Sequential), so
 * that a narrow panel wraps it after a dot rather than inside a word: a
 * `<wbr>` after each dot. Elements, not characters (a zero-width space):
 * what is copied is the name exactly. As text nodes, never parsed as HTML.
 */
export function appendDottedName(node: HTMLElement, name: string): void {
  const parts = name.split('.');
  parts.forEach((part, i) => {
    if (i < parts.length - 1) {
      node.append(
        document.createTextNode(`${part}.`),
        document.createElement('wbr')
      );
    } else if (part) {
      node.append(document.createTextNode(part));
    }
  });
}

/** Set a tooltip only when it changed (as setText: no needless work for the browser). */
export function setTitle(node: HTMLElement, title: string): void {
  if (node.title !== title) {
    node.title = title;
  }
}

/** Set text only when it changed (avoids needless layout work). */
export function setText(node: HTMLElement, text: string): void {
  if (node.textContent !== text) {
    node.textContent = text;
  }
}

/** Set `data-*` `name` (camelCase) to `value`, only when it changes; null removes it. */
export function setData(
  node: HTMLElement,
  name: string,
  value: string | null
): void {
  if (value === null) {
    if (name in node.dataset) {
      delete node.dataset[name];
    }
  } else if (node.dataset[name] !== value) {
    node.dataset[name] = value;
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
  setBytesData(node, bytes);
}

/**
 * Only the exact integer in `data-vram-bytes` (absent when unknown), for a
 * node whose text says more than the bytes.
 */
export function setBytesData(
  node: HTMLElement,
  bytes: number | null | undefined
): void {
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
  const row = element('div', 'jp-vram-FigureRow', { title });
  const labelNode = element('span', 'jp-vram-FigureRow-label', {
    text: label
  });
  const value = element('span', 'jp-vram-FigureRow-value', { role });
  row.append(labelNode, value);
  parent.appendChild(row);
  return value;
}

/**
 * Keep `parent`'s leading children to one node per item, in the items'
 * order, reusing the node each key had at the last call (`kept`: created on
 * first sight, removed once its key is gone). Nodes already in place are not
 * moved or rebuilt, so a re-render on every sample keeps the element under
 * the pointer (and the click on it). Keys must be unique among `items`.
 */
export function syncKeyedChildren<
  T,
  K,
  V extends { readonly node: HTMLElement }
>(
  parent: HTMLElement,
  kept: Map<K, V>,
  items: Iterable<T>,
  keyOf: (item: T) => K,
  create: (item: T) => V,
  update: (view: V, item: T) => void
): void {
  const seen = new Set<K>();
  let previous: HTMLElement | null = null;
  for (const item of items) {
    const key = keyOf(item);
    seen.add(key);
    let view = kept.get(key);
    if (!view) {
      view = create(item);
      kept.set(key, view);
    }
    const wanted: ChildNode | null = previous
      ? previous.nextSibling
      : parent.firstChild;
    if (wanted !== view.node) {
      parent.insertBefore(view.node, wanted);
    }
    update(view, item);
    previous = view.node;
  }
  for (const [key, view] of kept) {
    if (!seen.has(key)) {
      view.node.remove();
      kept.delete(key);
    }
  }
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
