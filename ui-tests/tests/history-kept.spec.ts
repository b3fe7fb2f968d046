/**
 * Nothing of the cell history is lost, in Chromium against a real kernel:
 * records of an earlier kernel process survive a page reload (the kernel
 * itself only keeps its own process's records) and show in a second tab; a
 * helper delivered anew into the same process starts a new series without
 * hiding the old one; an export made while the kernel restarts holds every
 * record.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Page } from '@playwright/test';
import { readFileSync } from 'fs';

import {
  badgeOf,
  openInNewTab,
  openInPage,
  openLiveNotebook,
  reloadPage,
  restartKernel,
  showCellHistory,
  SIDEBAR,
  waitForState
} from './helpers';

// See sidebar.spec.ts: Galata's kernel tracking breaks restarts.
test.use({ kernels: null });

const ROWS = `${SIDEBAR} [data-vram-role="cell-row"]:not([hidden])`;

/**
 * The Cells tab's rows as "kernel start:[execution count]", marked when of
 * an earlier kernel; sorted, whatever order the tab shows.
 */
async function rows(page: Page): Promise<string[]> {
  const shown = await page
    .locator(ROWS)
    .evaluateAll(els =>
      els.map(
        el =>
          `${el.getAttribute('data-vram-kernel-start')}:[${el.getAttribute('data-vram-execution-count')}]` +
          (el.classList.contains('jp-vram-CellRow-earlier') ? ' earlier' : '')
      )
    );
  return shown.sort();
}

async function runCells(
  page: IJupyterLabPageFixture,
  sources: string[]
): Promise<void> {
  for (const [i, source] of sources.entries()) {
    if (i === 0) {
      await page.notebook.setCell(0, 'code', source);
    } else {
      await page.notebook.addCell('code', source);
    }
    await page.notebook.runCell(i, true);
    await expect(badgeOf(page, i)).toBeVisible();
  }
}

/**
 * Adds a code cell at the end of the active notebook and runs it, through
 * JupyterLab's own commands (Galata's notebook helpers need the page Galata
 * loaded, not a reloaded one).
 */
async function runNewCell(page: Page, source: string): Promise<void> {
  await page.evaluate(async source => {
    const app = window.jupyterapp;
    const notebook = (app.shell.currentWidget as any).content;
    notebook.activeCellIndex = notebook.widgets.length - 1;
    await app.commands.execute('notebook:insert-cell-below');
    notebook.activeCell.model.sharedModel.setSource(source);
    await app.commands.execute('notebook:run-cell');
  }, source);
}

test('the cell history survives a restart, a reload, a second tab and a new helper', async ({
  page
}) => {
  await openLiveNotebook(page);
  await runCells(page, ['a = 1', 'b = 2']);
  await restartKernel(page);
  await waitForState(page, 'live');
  // New cells below (a badge covers the middle of a run cell's input, where
  // Galata double-clicks to edit it).
  await page.notebook.addCell('code', 'c = 3');
  await page.notebook.runCell(2, true);
  await showCellHistory(page);
  const expected = ['1:[1] earlier', '1:[2] earlier', '2:[1]'];
  await expect.poll(() => rows(page)).toEqual(expected);
  await page.notebook.save();
  const path = await page.evaluate(
    () => (window.jupyterapp.shell.currentWidget as any).context.path as string
  );

  // Export while the kernel restarts: every record is in the file.
  const download = page.waitForEvent('download');
  const exported = await page.evaluate(async () => {
    const panel = window.jupyterapp.shell.currentWidget as any;
    const restart = panel.sessionContext.restartKernel();
    const file = await window.jupyterapp.commands.execute(
      'jupyterlab-vram:export-cell-history',
      {
        format: 'json'
      }
    );
    const status = panel.sessionContext.session?.kernel?.status;
    await restart;
    return { file, status };
  });
  expect(exported.file).toMatch(/\.json$/);
  expect([
    'restarting',
    'starting',
    'busy',
    'unknown',
    'autorestarting'
  ]).toContain(exported.status);
  const json = JSON.parse(readFileSync(await (await download).path(), 'utf-8'));
  expect(
    json.records.map((r: any) => [r.derived.kernel_start, r.execution_count])
  ).toEqual([
    [1, 1],
    [1, 2],
    [2, 1]
  ]);
  await waitForState(page, 'live');

  // A reload: the kernel (third process now) knows none of these records.
  await reloadPage(page);
  await openInPage(page, path);
  await showCellHistory(page);
  await expect
    .poll(() => rows(page))
    .toEqual(['1:[1] earlier', '1:[2] earlier', '2:[1] earlier']);

  // A second tab of the same JupyterLab sees the same history.
  const second = await openInNewTab(page, path, 'vram-second-tab');
  await showCellHistory(second);
  await expect
    .poll(() => rows(second))
    .toEqual(['1:[1] earlier', '1:[2] earlier', '2:[1] earlier']);
  await second.close();

  // The helper delivered anew into the same process, as after an upgrade of
  // the extension: the kernel's helper is marked as another bundle, and the
  // connection to the kernel drops and comes back, so the frontend delivers
  // its helper again. Its record ids start again at 1, as a new series; the
  // old records stay: the marking cell, [1] of the third process (kernel
  // start 3), and then [2] under the new helper (kernel start 4).
  await runNewCell(
    page,
    "import sys; sys.modules['jupyterlab_vram_helper'].__bundle_hash__ = 'an older bundle'"
  );
  await page.evaluate(async () => {
    const panel = window.jupyterapp.shell.currentWidget as any;
    await panel.sessionContext.session.kernel.reconnect();
  });
  await waitForState(page, 'live');
  // The kernel's helper is the frontend's bundle again (silent: no record).
  await expect
    .poll(() =>
      page.evaluate(async () => {
        const kernel = (window.jupyterapp.shell.currentWidget as any)
          .sessionContext.session.kernel;
        const reply = await kernel.requestExecute({
          code: '',
          silent: true,
          user_expressions: {
            hash: "sys.modules['jupyterlab_vram_helper'].__bundle_hash__"
          }
        }).done;
        return reply.content.user_expressions.hash.data['text/plain'];
      })
    )
    .not.toBe("'an older bundle'");
  await runNewCell(page, 'd = 4');
  await expect
    .poll(() => rows(page))
    .toEqual([
      '1:[1] earlier',
      '1:[2] earlier',
      '2:[1] earlier',
      '3:[1] earlier',
      '4:[2]'
    ]);
});

test('a renamed notebook takes its kept history along: the next new notebook, named as it was, starts empty', async ({
  page
}) => {
  await openLiveNotebook(page);
  const path = await page.evaluate(
    () => (window.jupyterapp.shell.currentWidget as any).context.path as string
  );
  await runCells(page, ['a = 1', 'b = 2']);
  await showCellHistory(page);
  await expect(page.locator(ROWS)).toHaveCount(2);
  // Renamed through the contents manager, as the file browser and
  // "Rename Notebook…" do; the open notebook follows.
  const renamed = path.replace(/[^/]*$/, 'renamed.ipynb');
  await page.evaluate(
    async ([from, to]) => {
      await window.jupyterapp.serviceManager.contents.rename(from, to);
    },
    [path, renamed]
  );
  await expect
    .poll(() =>
      page.evaluate(
        () =>
          (window.jupyterapp.shell.currentWidget as any).sessionContext.session
            ?.path as string
      )
    )
    .toBe(renamed);
  // A new notebook, made as a user makes one, gets the old name again and a new kernel.
  await page.notebook.createNew();
  await expect
    .poll(() =>
      page.evaluate(
        () =>
          (window.jupyterapp.shell.currentWidget as any).context.path as string
      )
    )
    .toBe(path);
  await waitForState(page, 'live');
  await page.notebook.setCell(0, 'code', 'c = 3');
  await page.notebook.runCell(0, true);
  await expect(badgeOf(page, 0)).toBeVisible();
  await expect(page.locator(ROWS)).toHaveCount(1);
  await page.waitForTimeout(1000); // the kept history is read by now
  expect(await rows(page)).toHaveLength(1); // its own cell only: nothing of the renamed notebook's
});
