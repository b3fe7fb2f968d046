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
const upstreamNoise = 'Invalid access: Add Yjs type to a document before reading data.';
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
