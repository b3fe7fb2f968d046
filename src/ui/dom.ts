/**
 * Small DOM helpers for the views. Text goes in through `textContent` only:
 * device names, error messages and language names come from the kernel and
 * must never be parsed as HTML.
 */
import { ByteUnits, formatBytes } from '../text/format';

/**
 * Creates an element with a class, and optionally a test hook role, text and
 * tooltip.
 */
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
 * A button that runs `onClick`. Its type is "button" because the default
 * type would submit an enclosing form, such as one in a dialog.
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
 * Makes an element that is not a button act like one for the keyboard too.
 * It becomes focusable, and `activate` runs on a click, Enter or Space,
 * with Space not scrolling the panel. Keys pressed on an element inside it
 * are left to that element.
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
 * Appends `name`, a dotted name such as
 * torch.nn.modules.container.Sequential, with a `<wbr>` after each dot, so
 * that a narrow panel wraps it after a dot rather than inside a word. The
 * breaks are elements rather than characters such as a zero-width space, so
 * that what is copied is exactly the name. The parts go in as text nodes and
 * are never parsed as HTML.
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

/**
 * Sets a tooltip only when it changed, as setText does, to spare the browser
 * needless work.
 */
export function setTitle(node: HTMLElement, title: string): void {
  if (node.title !== title) {
    node.title = title;
  }
}

/** Sets text only when it changed, to avoid needless layout work. */
export function setText(node: HTMLElement, text: string): void {
  if (node.textContent !== text) {
    node.textContent = text;
  }
}

/**
 * Sets the `data-*` attribute `name` (in camelCase) to `value`, only when it
 * changes. Null removes the attribute.
 */
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
 * Shows a byte figure as formatted text, and puts the exact integer in
 * `data-vram-bytes` for tests and tools. The attribute is absent when the
 * figure is unknown.
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
 * Sets only the exact integer in `data-vram-bytes`, which is absent when
 * unknown, for a node whose text says more than the bytes.
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

/** Toggles `hidden` only when it changes. */
export function setHidden(node: HTMLElement, hidden: boolean): void {
  if (node.hidden !== hidden) {
    node.hidden = hidden;
  }
}

/**
 * Makes a labelled figure row, "<label> <value>", and returns the value
 * element. `role` goes on the value element, which carries data-vram-bytes.
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
 * Keeps `parent`'s leading children to one node per item, in the items'
 * order, reusing the node that each key had at the last call. `kept` holds
 * those nodes; a node is created when its key is first seen and removed once
 * its key is gone. Nodes already in place are not moved or rebuilt, so a
 * re-render on every sample keeps the element under the pointer, and the
 * click on it. Keys must be unique among `items`.
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

/** Sets a bar segment's width as a share of `total`, or to 0 when unknown. */
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
