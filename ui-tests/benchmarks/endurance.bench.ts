/**
 * Endurance in Chromium against a real kernel. Prints figures; it does not
 * pass or fail on them (only on the panel not recovering at all):
 *
 *  - 50 kernel restarts in a row with the sidebar open: after each, the panel
 *    is live again with the new process and a cell gets its record; then what
 *    is left over compared with before the restarts: comms (in the page and
 *    in the kernel), the helper's threads, live timers, event listeners, DOM
 *    nodes, JS heap (after a forced GC).
 *  - a soak at 10 Hz (VRAM_SOAK_HZ; up to 20) for VRAM_SOAK_MINUTES (default
 *    10) while a cell allocates and frees memory all the time, so that every
 *    sample is news: the JS heap and the DOM node count, read every 30 s
 *    after a minute of warm-up, must stay flat within 5 %. An hour at 10 Hz
 *    is 36,000 samples; 30 minutes at 20 Hz is the same count.
 *
 *   cd ui-tests && npx playwright test --config playwright.benchmark.config.js endurance
 *
 * (The third endurance figure, 10,000 fuzzed comm messages to the helper, is
 * benchmarks/comm_fuzz.py: it needs no browser.)
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { CDPSession } from '@playwright/test';

import { openSidebar, SIDEBAR, waitForState } from '../tests/helpers';
import { median } from './stats';

// Galata's kernel tracking answers restarts wrongly (see tests/sidebar.spec.ts).
test.use({ kernels: null });
test.describe.configure({ mode: 'serial' });

/**
 * Counts the page's live timers: wraps setTimeout/setInterval before any
 * script of the page runs (a timeout leaves the count when it fires or is
 * cleared; an interval when it is cleared).
 */
const TIMER_PROBE = `(() => {
  const live = new Set();
  const st = window.setTimeout, ct = window.clearTimeout;
  const si = window.setInterval, ci = window.clearInterval;
  window.setTimeout = function (fn, ...rest) {
    const wrapped = typeof fn === 'function' ? function (...a) { live.delete(id); return fn.apply(this, a); } : fn;
    const id = st.call(window, wrapped, ...rest);
    live.add(id);
    return id;
  };
  window.clearTimeout = function (id) { live.delete(id); return ct.call(window, id); };
  window.setInterval = function (...args) { const id = si.apply(window, args); live.add(id); return id; };
  window.clearInterval = function (id) { live.delete(id); return ci.call(window, id); };
  window.__vramLiveTimers = () => live.size;
})();`;

interface Leftovers {
  pageComms: number;
  kernelComms: number;
  helperThreads: number;
  timers: number;
  listeners: number;
  nodes: number;
  heapMB: number;
}

/** The kernel's view: comms of our target, and the helper's threads (a silent execute: no record). */
const KERNEL_PROBE =
  "'%d %d' % (" +
  "sum(1 for c in __import__('comm').get_comm_manager().comms.values() if getattr(c, 'target_name', '') == 'jupyterlab-vram'), " +
  "sum(1 for t in __import__('threading').enumerate() if t.name.startswith('jupyterlab-vram')))";

/** What the page holds: timers, listeners, DOM nodes, JS heap after a forced GC. */
async function measurePage(
  page: IJupyterLabPageFixture,
  cdp: CDPSession
): Promise<Pick<Leftovers, 'timers' | 'listeners' | 'nodes' | 'heapMB'>> {
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('HeapProfiler.collectGarbage');
  const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
  const dom = (await cdp.send('Memory.getDOMCounters')) as {
    nodes: number;
    jsEventListeners: number;
  };
  const timers = await page.evaluate(
    () => (window as any).__vramLiveTimers?.() ?? -1
  );
  return {
    timers,
    listeners: dom.jsEventListeners,
    nodes: dom.nodes,
    heapMB: heap.usedSize / 2 ** 20
  };
}

/** The page's figures and the comms and helper threads (the kernel must be idle). */
async function measure(
  page: IJupyterLabPageFixture,
  cdp: CDPSession
): Promise<Leftovers> {
  const kernel = await page.evaluate(async probe => {
    const k = (window.jupyterapp.shell.currentWidget as any).sessionContext
      .session.kernel;
    const reply = await k.requestExecute({
      code: '',
      silent: true,
      user_expressions: { p: probe }
    }).done;
    const result = reply.content.user_expressions.p;
    const [comms, threads] = String(result.data?.['text/plain'] ?? "'-1 -1'")
      .replace(/'/g, '')
      .split(' ')
      .map(Number);
    return { comms, threads, pageComms: k._comms?.size ?? -1 };
  }, KERNEL_PROBE);
  return {
    pageComms: kernel.pageComms,
    kernelComms: kernel.comms,
    helperThreads: kernel.threads,
    ...(await measurePage(page, cdp))
  };
}

/**
 * Restart the kernel as the Restart command does, then wait until the panel
 * is live with the new process and a cell run on it has its record. Returns
 * the milliseconds from the restart's end to the panel live, or -1.
 */
async function restartAndRecover(
  page: IJupyterLabPageFixture
): Promise<number> {
  return page.evaluate(async () => {
    const app = window.jupyterapp;
    const panel = app.shell.currentWidget as any;
    const monitor: any = await (window as any).galata.getPlugin(
      'jupyterlab-vram:monitor'
    );
    const model = () => monitor.current;
    const until = async (ok: () => boolean, ms: number) => {
      const end = Date.now() + ms;
      while (!ok()) {
        if (Date.now() > end) {
          return false;
        }
        await new Promise(r => setTimeout(r, 20));
      }
      return true;
    };
    const oldPid = model()?.hello?.pid;
    await panel.sessionContext.restartKernel();
    const restarted = Date.now();
    const live = await until(
      () =>
        model()?.state === 'live' &&
        model()?.hello &&
        model().hello.pid !== oldPid,
      60_000
    );
    if (!live) {
      return -1;
    }
    const ms = Date.now() - restarted;
    // A cell on the new process gets its record.
    const session = model().cells.session;
    panel.content.activeCellIndex = 0;
    await app.commands.execute('notebook:run-cell');
    const recorded = await until(() => {
      const entries = model().cells.entries;
      return (
        entries.length > 0 && entries[entries.length - 1].session === session
      );
    }, 30_000);
    return recorded ? ms : -1;
  });
}

function table(rows: [string, Leftovers, Leftovers][]): void {
  const keys = Object.keys(rows[0][1]) as (keyof Leftovers)[];
  for (const [label, a, b] of rows) {
    console.log(`  ${label}`);
    for (const key of keys) {
      const fmt = (v: number) => (key === 'heapMB' ? v.toFixed(1) : String(v));
      console.log(
        `    ${key.padEnd(14)} before ${fmt(a[key]).padStart(8)}  after ${fmt(b[key]).padStart(8)}  change ${fmt(b[key] - a[key])}`
      );
    }
  }
}

test('50 kernel restarts in a row with the sidebar open', async ({ page }) => {
  const restarts = Number(process.env.VRAM_RESTARTS ?? 50);
  test.setTimeout((restarts * 40 + 300) * 1000);
  await page.context().addInitScript(TIMER_PROBE);
  await page.goto();
  await openSidebar(page);
  await page.notebook.createNew('endurance-restarts.ipynb');
  await waitForState(page, 'live');
  await page.notebook.setCell(0, 'code', 'x = 1');
  const cdp = await page.context().newCDPSession((page as any).page); // Galata's fixture wraps the Playwright page
  // Warm-up: the first restarts load what later ones reuse.
  for (let i = 0; i < 2; i++) {
    expect(await restartAndRecover(page)).toBeGreaterThanOrEqual(0);
  }
  const before = await measure(page, cdp);
  const times: number[] = [];
  let failed = 0;
  for (let i = 0; i < restarts; i++) {
    const ms = await restartAndRecover(page);
    if (ms < 0) {
      failed++;
    } else {
      times.push(ms);
    }
  }
  await page.waitForTimeout(2000); // let the last restart's timers settle
  const after = await measure(page, cdp);
  console.log(
    `\n${restarts} kernel restarts with the sidebar open (Chromium, real kernel):`
  );
  console.log(
    `  panel recovered (live with the new process, then a cell recorded): ${restarts - failed} of ${restarts}`
  );
  if (times.length) {
    console.log(
      `  restart done -> panel live: median ${median(times).toFixed(0)} ms, max ${Math.max(...times)} ms`
    );
  }
  table([
    ['left over (after 2 warm-up restarts, then after the run)', before, after]
  ]);
  console.log(
    `BENCH restarts=${restarts} recovered=${restarts - failed} page_comms=${after.pageComms - before.pageComms} ` +
      `kernel_comms=${after.kernelComms} helper_threads=${after.helperThreads} timers=${after.timers - before.timers} ` +
      `listeners=${after.listeners - before.listeners} nodes=${after.nodes - before.nodes} heap_mb=${(after.heapMB - before.heapMB).toFixed(1)}`
  );
  expect(failed).toBe(0);
  await expect(
    page.locator(`${SIDEBAR} [data-vram-role="state"]`)
  ).toHaveAttribute('data-vram-state', 'live');
});

test('soak: JS heap and DOM nodes do not grow', async ({ page }) => {
  const minutes = Number(process.env.VRAM_SOAK_MINUTES ?? 10);
  const hz = Math.min(20, Number(process.env.VRAM_SOAK_HZ ?? 10));
  test.setTimeout((minutes + 5) * 60 * 1000);
  await page.context().addInitScript(TIMER_PROBE);
  await page.goto();
  await page.evaluate(async interval => {
    const registry: any = await (window as any).galata.getPlugin(
      '@jupyterlab/apputils-extension:settings'
    );
    await registry.set(
      'jupyterlab-vram:plugin',
      'sampleIntervalSeconds',
      interval
    );
    await registry.set('jupyterlab-vram:plugin', 'changeThresholdMiB', 1);
  }, 1 / hz);
  await openSidebar(page);
  await page.notebook.createNew('endurance-soak.ipynb');
  await waitForState(page, 'live');
  const cdp = await page.context().newCDPSession((page as any).page); // Galata's fixture wraps the Playwright page
  // 2 MiB more (written: zero pages would not count in RSS) twice per sample
  // interval, given back at 256 MiB: every sample sees a change above the
  // 1 MiB threshold, so every one is sent.
  const step = 1 / hz / 2;
  // Set through the model: typing it would let the editor indent it again.
  const source =
    `import time\nend = time.time() + ${minutes * 60 + 30}\nheld = []\nwhile time.time() < end:\n` +
    `    held.append(bytearray(b'\\x01') * (2 << 20))\n    if len(held) == 128:\n        held = []\n    time.sleep(${step})`;
  await page.evaluate(source => {
    const notebook = (window.jupyterapp.shell.currentWidget as any).content;
    notebook.activeCellIndex = 0;
    notebook.activeCell.model.sharedModel.setSource(source);
  }, source);
  await page.evaluate(() => {
    void window.jupyterapp.commands.execute('notebook:run-cell');
  });
  const samples = () =>
    page.evaluate(async () => {
      const monitor: any = await (window as any).galata.getPlugin(
        'jupyterlab-vram:monitor'
      );
      return monitor.current?.sampleCount ?? 0;
    });
  const setup = await page.evaluate(async () => {
    const monitor: any = await (window as any).galata.getPlugin(
      'jupyterlab-vram:monitor'
    );
    const panel = window.jupyterapp.shell.currentWidget as any;
    return {
      interval: monitor.current?.hello?.config?.interval_s,
      kernel: panel.sessionContext.session?.kernel?.status
    };
  });
  console.log(
    `  (helper interval ${setup.interval} s; kernel ${setup.kernel} with the allocating cell)`
  );
  const warmUpMs = Math.min(60_000, (minutes * 60_000) / 5);
  await page.waitForTimeout(warmUpMs);
  type Reading = Awaited<ReturnType<typeof measurePage>> & {
    minute: number;
    samples: number;
  };
  const readings: Reading[] = [];
  const start = Date.now();
  const endAt = start - warmUpMs + minutes * 60_000;
  const firstSamples = await samples();
  const t0 = Date.now();
  for (;;) {
    const m = await measurePage(page, cdp); // the kernel is busy: page figures only
    readings.push({
      ...m,
      minute: (Date.now() - start + warmUpMs) / 60_000,
      samples: (await samples()) - firstSamples
    });
    if (Date.now() >= endAt) {
      break;
    }
    await page.waitForTimeout(
      Math.min(30_000, Math.max(1000, endAt - Date.now()))
    );
  }
  const seconds = (Date.now() - t0) / 1000;
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('notebook:interrupt-kernel')
  );

  console.log(
    `\nSoak at ${hz} Hz for ${minutes} min (Chromium, real kernel, a cell changing memory all the time):`
  );
  console.log('  minute  samples   heap MB   DOM nodes  listeners  timers');
  for (const r of readings) {
    console.log(
      `  ${r.minute.toFixed(1).padStart(6)}  ${String(r.samples).padStart(7)}  ${r.heapMB.toFixed(2).padStart(8)}  ` +
        `${String(r.nodes).padStart(10)}  ${String(r.listeners).padStart(9)}  ${String(r.timers).padStart(6)}`
    );
  }
  // A leak grows: judged by the highest reading and the last, against the
  // first after warm-up (V8 may also give memory back, which is no leak).
  const first = readings[0];
  const last = readings[readings.length - 1];
  const pct = (a: number, b: number) => ((b - a) / a) * 100;
  const report = (
    name: string,
    unit: string,
    pick: (r: Reading) => number,
    digits: number
  ) => {
    const values = readings.map(pick);
    const top = Math.max(...values);
    const growth = Math.max(
      pct(pick(first), top),
      pct(pick(first), pick(last))
    );
    console.log(
      `  ${name}: first ${pick(first).toFixed(digits)}${unit}, last ${pick(last).toFixed(digits)}${unit} ` +
        `(${pct(pick(first), pick(last)).toFixed(1)} %), range ${Math.min(...values).toFixed(digits)}` +
        `-${top.toFixed(digits)}${unit}; at most ${growth.toFixed(1)} % above the first: ` +
        (growth <= 5 ? 'no growth beyond 5 %, met' : 'GREW beyond 5 %')
    );
    return growth;
  };
  const rate = last.samples / seconds;
  console.log(
    `  samples shown: ${last.samples} in ${seconds.toFixed(0)} s (${rate.toFixed(1)} per second)`
  );
  const heapGrowth = report('JS heap', ' MB', r => r.heapMB, 2);
  const nodeGrowth = report('DOM nodes', '', r => r.nodes, 0);
  report('event listeners', '', r => r.listeners, 0);
  console.log(
    `BENCH soak_minutes=${minutes} hz=${hz} samples=${last.samples} heap_growth_pct=${heapGrowth.toFixed(1)} ` +
      `node_growth_pct=${nodeGrowth.toFixed(1)} heap_last_vs_first_pct=${pct(first.heapMB, last.heapMB).toFixed(1)}`
  );
  expect(last.samples).toBeGreaterThan(0);
});
