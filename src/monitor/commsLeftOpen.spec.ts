/**
 * Tests the comms that a page leaves open in kernels. They are remembered
 * as the page goes, and the next page in the same tab names them in its
 * comm_open's `replaces`.
 */
import { Signal } from '@lumino/signaling';

import {
  COMMS_LEFT_OPEN_KEY,
  CommsLeftOpen,
  MAX_REPLACED_COMMS
} from '../kernel/CommsLeftOpen';
import { MemoryMonitor } from './MemoryMonitor';
import { FakeKernel, FakeSessionContext, settle } from '../testing/fakeKernel';

/** sessionStorage as one tab has it. */
class TabStorage implements Storage {
  items = new Map<string, string>();
  get length() {
    return this.items.size;
  }
  clear() {
    this.items.clear();
  }
  getItem(key: string) {
    return this.items.get(key) ?? null;
  }
  key(i: number) {
    return Array.from(this.items.keys())[i] ?? null;
  }
  removeItem(key: string) {
    this.items.delete(key);
  }
  setItem(key: string, value: string) {
    this.items.set(key, value);
  }
}

/** A page of JupyterLab with one notebook open on each of `kernels`. */
async function page(storage: Storage, kernels: FakeKernel[]) {
  const panels = kernels.map(kernel => ({
    sessionContext: new FakeSessionContext(kernel) as any,
    disposed: new Signal<any, void>({}),
    isDisposed: false
  }));
  const tracker = {
    currentWidget: null as any,
    currentChanged: new Signal<any, any>({})
  };
  const monitor = new MemoryMonitor({
    notebooks: tracker,
    settings: undefined,
    commsLeftOpen: new CommsLeftOpen(storage)
  });
  for (const panel of panels) {
    tracker.currentWidget = panel;
    tracker.currentChanged.emit(panel);
    await settle();
  }
  return monitor;
}

describe('CommsLeftOpen', () => {
  it('the page after a reload names the comms the one before left open, once', async () => {
    const storage = new TabStorage();
    const a = new FakeKernel();
    const b = new FakeKernel();
    const first = await page(storage, [a, b]);
    const [leftInA, leftInB] = [a.lastComm, b.lastComm];
    // A fresh tab replaces nothing.
    expect(leftInA.opened[0].replaces).toBeUndefined();
    first.pageExit();
    // It tried to close them too, with a message that may not leave a page
    // that is going away.
    expect(leftInA.closed && leftInB.closed).toBe(true);
    expect(JSON.parse(storage.getItem(COMMS_LEFT_OPEN_KEY)!)).toEqual({
      [a.id]: [leftInA.commId],
      [b.id]: [leftInB.commId]
    });

    const second = await page(storage, [a]);
    expect(a.lastComm.opened[0].replaces).toEqual([leftInA.commId]);
    // The entry was taken as the page started.
    expect(storage.getItem(COMMS_LEFT_OPEN_KEY)).toBeNull();
    // A comm opened again in the same page, as on a refresh, replaces
    // nothing more.
    second.sessions()[0].connection.reconnect();
    await settle();
    expect(a.lastComm.opened[0].replaces).toBeUndefined();
    // Kernel b's notebook was not opened again: its comm is passed on to the next page.
    second.pageExit();
    const third = new CommsLeftOpen(storage);
    expect(third.take(b.id)).toEqual([leftInB.commId]);
    expect(third.take(a.id)).toEqual([a.lastComm.commId]);
  });

  it('a tab duplicated from a live page names nothing of it', async () => {
    const storage = new TabStorage();
    const kernel = new FakeKernel();
    await page(storage, [kernel]);
    const duplicate = new TabStorage();
    // The browser copies sessionStorage into a duplicated tab.
    storage.items.forEach((v, k) => duplicate.setItem(k, v));
    await page(duplicate, [kernel]);
    expect(kernel.lastComm.opened[0].replaces).toBeUndefined();
  });

  it.each([
    ['not JSON', '{'],
    ['not an object', '["c"]'],
    ['not ids', JSON.stringify({ k: [1, null, '', 'x'.repeat(257)] })]
  ])('reads a damaged entry (%s) as nothing, without throwing', (_, text) => {
    const storage = new TabStorage();
    storage.setItem(COMMS_LEFT_OPEN_KEY, text);
    expect(new CommsLeftOpen(storage).take('k')).toEqual([]);
  });

  it('names at most the protocol limit per kernel, the newest', () => {
    const storage = new TabStorage();
    const ids = Array.from({ length: 100 }, (_, i) => `c${i}`);
    storage.setItem(COMMS_LEFT_OPEN_KEY, JSON.stringify({ k: ids }));
    expect(new CommsLeftOpen(storage).take('k')).toEqual(
      ids.slice(-MAX_REPLACED_COMMS)
    );
  });

  it('without storage (blocked by the browser) it remembers nothing and fails nothing', () => {
    const left = new CommsLeftOpen(null);
    left.remember([{ kernelId: 'k', commId: 'c' }]);
    expect(left.take('k')).toEqual([]);
  });
});
