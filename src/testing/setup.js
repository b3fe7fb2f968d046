// jsdom lacks matchMedia, which uPlot calls when its module loads.
if (typeof window !== 'undefined' && !window.matchMedia) {
  window.matchMedia = query => ({
    matches: false,
    media: query,
    onchange: null,
    addListener: () => undefined,
    removeListener: () => undefined,
    addEventListener: () => undefined,
    removeEventListener: () => undefined,
    dispatchEvent: () => false
  });
}

// jsdom has no canvas: its HTMLCanvasElement.getContext returns undefined and
// logs "Not implemented" with a 40-line stack, every time uPlot builds a chart
// (the timeline views). The tests check the chart's data and DOM, not its
// pixels, so a 2D context that draws nothing stands in for it, with Path2D,
// which uPlot builds its series paths with. Other contexts (webgl) are null,
// as in a browser that lacks them.
if (typeof window !== 'undefined' && typeof HTMLCanvasElement !== 'undefined') {
  const noop = () => undefined;
  const returns = {
    measureText: text => ({
      width: 6 * String(text).length,
      actualBoundingBoxAscent: 8,
      actualBoundingBoxDescent: 2
    }),
    createLinearGradient: () => ({ addColorStop: noop }),
    createRadialGradient: () => ({ addColorStop: noop }),
    createPattern: () => null,
    getLineDash: () => [],
    isPointInPath: () => false,
    isPointInStroke: () => false,
    getTransform: () => ({ a: 1, b: 0, c: 0, d: 1, e: 0, f: 0 })
  };
  const contexts = new WeakMap();
  HTMLCanvasElement.prototype.getContext = function (type) {
    if (type !== '2d') {
      return null;
    }
    if (!contexts.has(this)) {
      // Any property set is kept (fillStyle, font, ...); any method draws nothing.
      const state = { canvas: this };
      contexts.set(
        this,
        new Proxy(state, {
          get: (target, key) =>
            key in target ? target[key] : returns[key] || noop,
          set: (target, key, value) => {
            target[key] = value;
            return true;
          }
        })
      );
    }
    return contexts.get(this);
  };
  if (typeof window.Path2D === 'undefined') {
    window.Path2D = class Path2D {
      addPath() {}
      closePath() {}
      moveTo() {}
      lineTo() {}
      bezierCurveTo() {}
      quadraticCurveTo() {}
      arc() {}
      arcTo() {}
      ellipse() {}
      rect() {}
      roundRect() {}
    };
  }
}

// jsdom lacks the asynchronous Clipboard API; JupyterLab's clipboard warns
// when it finds none (once per notebook a test builds). Tests that copy use
// their own fakes; this one only has to exist.
if (typeof navigator !== 'undefined' && !navigator.clipboard) {
  Object.defineProperty(navigator, 'clipboard', {
    configurable: true,
    value: {
      readText: () => Promise.resolve(''),
      writeText: () => Promise.resolve(),
      read: () => Promise.resolve([]),
      write: () => Promise.resolve()
    }
  });
}
// The same for structuredClone, which IndexedDB (fake-indexeddb in tests)
// stores values with; the values stored are JSON.
if (typeof globalThis.structuredClone !== 'function') {
  globalThis.structuredClone = value => JSON.parse(JSON.stringify(value));
}

// yjs (13.6.2x) warns "Invalid access: Add Yjs type to a document before
// reading data." whenever @jupyter/ydoc builds a cell before it joins the
// notebook document: every cell insertion, JupyterLab's own included. It is
// upstream's, not ours; only that exact message is dropped.
const upstreamNoise =
  'Invalid access: Add Yjs type to a document before reading data.';
const warn = console.warn.bind(console);
console.warn = (...args) => {
  if (args.length === 1 && args[0] === upstreamNoise) {
    return;
  }
  warn(...args);
};

// The sidebar hands the models the visibility notes' deriver when it loads
// (KernelVisibilityNotes' deriveNotesWith); tests read a model's notes without
// building a sidebar. KernelMemoryModel.spec.ts covers the start-up case.
{
  const { deriveNotesWith } = require('../model/KernelVisibilityNotes');
  const { deriveVisibilityNotes } = require('../model/visibilityNotes');
  deriveNotesWith(deriveVisibilityNotes);
}

// The page loads the message readers with the first kernel
// (protocol/messageReaders.ts); tests feed models messages at once, so the
// readers are handed over here, already imported.
{
  const { useMessageReaders } = require('../protocol/messageReaders');
  useMessageReaders(require('../protocol/messageReadersLazy'));
}
