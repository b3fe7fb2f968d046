/**
 * "Run All" of 500 trivial cells in a real JupyterLab in Chromium, with the
 * extension and without it, alternated in one run (median of 3 each). The
 * target: with it, at most 1.05 times the time without it. Prints figures.
 *
 * Without the extension is the same server and browser: a second page whose
 * page config lists jupyterlab-vram among the disabled extensions (patched
 * in as the page loads, before JupyterLab reads it), so it neither
 * activates nor delivers its helper into that page's kernels.
 *
 *   cd ui-tests && npx playwright test --config playwright.benchmark.config.js runall
 */
import { expect, test } from '@jupyterlab/galata';
import { Page } from '@playwright/test';
import { disableInPageConfig } from '../tests/helpers';
import { median } from './stats';

test.use({ kernels: null });

const CELLS = Number(process.env.VRAM_RUNALL_CELLS ?? 500);
const ROUNDS = Number(process.env.VRAM_RUNALL_ROUNDS ?? 3);

/** Adds jupyterlab-vram to the page config's disabled extensions as the HTML is parsed. */
const DISABLE_VRAM = disableInPageConfig(['jupyterlab-vram']);

async function waitForApp(page: Page): Promise<void> {
  await page.waitForFunction(
    () => (window as any).jupyterapp?.started !== undefined,
    null,
    { timeout: 120_000 }
  );
  await page.evaluate(async () => {
    await window.jupyterapp.started;
    await window.jupyterapp.restored;
  });
}

/** A notebook of `CELLS` trivial code cells, written through the contents API. */
async function writeNotebook(page: Page, path: string): Promise<void> {
  await page.evaluate(
    async ({ path, cells }) => {
      const content = {
        nbformat: 4,
        nbformat_minor: 5,
        metadata: {
          kernelspec: {
            name: 'python3',
            display_name: 'Python 3 (ipykernel)',
            language: 'python'
          }
        },
        cells: Array.from({ length: cells }, (_, i) => ({
          cell_type: 'code',
          id: `c${i}`,
          metadata: {},
          source: `x = ${i}`,
          outputs: [],
          execution_count: null
        }))
      };
      await window.jupyterapp.serviceManager.contents.save(path, {
        type: 'notebook',
        format: 'json',
        content
      });
    },
    { path, cells: CELLS }
  );
}

/**
 * Opens the notebook on a fresh kernel, waits until that kernel is idle (and,
 * with the extension, the panel live), then times Run All to the last cell's
 * execution count. Returns milliseconds.
 */
async function runAll(
  page: Page,
  path: string,
  withExtension: boolean
): Promise<number> {
  return page.evaluate(
    async ({ path, withExtension }) => {
      const app = window.jupyterapp;
      const until = async (ok: () => boolean, ms: number, what: string) => {
        const end = Date.now() + ms;
        while (!ok()) {
          if (Date.now() > end) {
            throw new Error(`timed out: ${what}`);
          }
          await new Promise(r => setTimeout(r, 20));
        }
      };
      const panel: any = await app.commands.execute('docmanager:open', {
        path
      });
      await panel.context.ready;
      await panel.sessionContext.ready;
      await until(
        () => panel.sessionContext.session?.kernel?.status === 'idle',
        60_000,
        'kernel idle'
      );
      if (withExtension) {
        const monitor: any = await (window as any).galata.getPlugin(
          'jupyterlab-vram:monitor'
        );
        await until(
          () => monitor.current?.state === 'live',
          60_000,
          'panel live'
        );
      }
      await new Promise(r => setTimeout(r, 500));
      const cells = panel.content.widgets;
      const t0 = performance.now();
      await app.commands.execute('notebook:run-all-cells');
      await until(
        () => cells[cells.length - 1].model.executionCount !== null,
        600_000,
        'last cell ran'
      );
      const ms = performance.now() - t0;
      // Close it and shut its kernel down, so the next round starts the same way.
      await panel.sessionContext.shutdown();
      panel.context.model.dirty = false;
      panel.dispose();
      return ms;
    },
    { path, withExtension }
  );
}

test('Run All of 500 trivial cells, with and without the extension', async ({
  page
}) => {
  test.setTimeout(60 * 60 * 1000);
  await page.goto();
  const without = await page.context().newPage();
  await without.addInitScript(DISABLE_VRAM);
  // A workspace of its own: JupyterLab moves a second window on the same
  // workspace to a new one (a navigation).
  await without.goto(
    `${new URL(page.url()).origin}/lab/workspaces/vram-runall-without`
  );
  await waitForApp(without);
  const plugins = await without.evaluate(() =>
    window.jupyterapp.hasPlugin('jupyterlab-vram:plugin')
  );
  const activated = await without.evaluate(() =>
    (window.jupyterapp as any).isPluginActivated?.('jupyterlab-vram:plugin')
  );
  expect(activated ?? plugins).toBeFalsy(); // the patch took: no extension in that page

  const times: { with: number[]; without: number[] } = {
    with: [],
    without: []
  };
  for (let round = 0; round < ROUNDS; round++) {
    const order: [Page, boolean][] =
      round % 2
        ? [
            [without, false],
            [page, true]
          ]
        : [
            [page, true],
            [without, false]
          ];
    for (const [p, withExtension] of order) {
      const path = `runall-${withExtension ? 'with' : 'without'}-${round}.ipynb`;
      await writeNotebook(p, path);
      const ms = await runAll(p, path, withExtension);
      times[withExtension ? 'with' : 'without'].push(ms);
    }
  }
  const a = median(times.with);
  const b = median(times.without);
  const ratio = a / b;
  console.log(
    `\nRun All of ${CELLS} trivial cells, fresh kernel each time (Chromium, real server; ${ROUNDS} rounds, alternated):`
  );
  console.log(
    `  with jupyterlab-vram:    ${times.with.map(t => t.toFixed(0)).join(', ')} ms; median ${a.toFixed(0)} ms`
  );
  console.log(
    `  without (disabled):      ${times.without.map(t => t.toFixed(0)).join(', ')} ms; median ${b.toFixed(0)} ms`
  );
  console.log(
    `  ratio ${ratio.toFixed(3)} (target <= 1.05): ${ratio <= 1.05 ? 'met' : 'NOT met'}`
  );
  console.log(
    `BENCH runall_cells=${CELLS} with_ms=${a.toFixed(0)} without_ms=${b.toFixed(0)} ratio=${ratio.toFixed(3)}`
  );
  await without.close();
});
