/**
 * Per-cell memory accounting in the browser: badges on executed cells, the
 * sortable history, jumping to a cell, and badges in a long (windowed)
 * notebook. Real kernel, real CPU PyTorch.
 */
import { expect, galata, test } from '@jupyterlab/galata';

import {
  badgeOf,
  cellHeaderRow,
  cutCellColumns,
  holdUntilReleased,
  MiB,
  openLiveNotebook,
  releaseCell,
  removeRelease,
  showCellHistory,
  SIDEBAR,
  sidebarRole
} from './helpers';

async function numberAttr(
  loc: ReturnType<typeof badgeOf>,
  name: string
): Promise<number> {
  const value = await loc.getAttribute(name);
  if (value === null) {
    throw new Error(`${name} is missing`);
  }
  return Number(value);
}

// Galata intercepts the kernels API to track kernels, and its pattern also
// catches POST /api/kernels/<id>/restart, answering 201 instead of the
// server's 200; JupyterLab then treats the restart as failed and never
// reconnects. Without the interception Galata still cleans up the sessions.
test.use({ kernels: null });

test.describe('per-cell memory', () => {
  test('three cells get three badges with plausible figures', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(0, 'code', 'import torch');
    await page.notebook.addCell('code', 'x = torch.ones(50_000_000)  # 200 MB');
    await page.notebook.addCell('code', 'del x');
    await page.notebook.run();

    for (const i of [0, 1, 2]) {
      await expect(badgeOf(page, i)).toBeVisible();
      await expect(badgeOf(page, i)).toHaveAttribute('data-vram-status', 'ok');
    }
    // The allocating cell: RSS grew by 200 MB, within 10 %.
    const grown = await numberAttr(badgeOf(page, 1), 'data-vram-delta-bytes');
    expect(grown).toBeGreaterThan(180e6);
    expect(grown).toBeLessThan(220e6);
    expect(
      await numberAttr(badgeOf(page, 1), 'data-vram-peak-bytes')
    ).toBeGreaterThan(200e6);
    await expect(badgeOf(page, 1)).toContainText(/peak/);
    // The del cell gives it back.
    expect(
      await numberAttr(badgeOf(page, 2), 'data-vram-delta-bytes')
    ).toBeLessThan(-150 * MiB);
    expect(
      await numberAttr(badgeOf(page, 1), 'data-vram-duration-s')
    ).toBeGreaterThan(0);

    // The badge covers no code: below the editor, in the active cell too (whose
    // toolbar sits over the first line).
    await page.notebook.selectCells(1);
    const cell = page
      .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')
      .nth(1);
    const editor = await cell.locator('.jp-InputArea-editor').boundingBox();
    const badge = await badgeOf(page, 1).boundingBox();
    expect(editor && badge).toBeTruthy();
    expect(badge!.y).toBeGreaterThanOrEqual(editor!.y + editor!.height - 0.5);
  });

  test('a raising cell is recorded with its error type', async ({ page }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(
      0,
      'code',
      'raise ValueError("<b>not html</b>")'
    );
    await page.notebook.runCell(0, true);
    await expect(badgeOf(page, 0)).toHaveAttribute('data-vram-status', 'error');
    await expect(badgeOf(page, 0)).toHaveAttribute('title', /ValueError/);
    // Kernel text stays text.
    await expect(badgeOf(page, 0).locator('b')).toHaveCount(0);
    // In the Cells tab, at the sidebar's default width, every column of the row is read whole.
    await showCellHistory(page);
    const row = page.locator(
      `${SIDEBAR} [data-vram-role="cell-row"][data-vram-status="error"]`
    );
    await expect(row).toHaveAttribute('title', /ValueError/, {
      timeout: 30_000
    });
    expect(await cutCellColumns(row)).toEqual([]);
    expect(await cutCellColumns(cellHeaderRow(page))).toEqual([]);
    // Sorted, a heading carries an arrow: the narrow ones still fit.
    for (const key of ['execution_count', 'status']) {
      const header = page.locator(
        `${SIDEBAR} [data-vram-role="cell-sort"][data-vram-sort-key="${key}"]`
      );
      await header.click();
      await expect(header).toHaveAttribute('aria-sort', /ascending|descending/);
      expect(await cutCellColumns(cellHeaderRow(page))).toEqual([]);
    }
  });

  test('the history clears, sorts by every column, and a row jumps to its cell', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(0, 'code', 'import torch, time');
    await page.notebook.runCell(0, true);
    await expect(badgeOf(page, 0)).toBeVisible();

    await showCellHistory(page);
    const rows = page.locator(
      `${SIDEBAR} [data-vram-role="cell-row"]:not([hidden])`
    );
    await expect(rows).toHaveCount(1);
    // Importing torch costs hundreds of MB of RSS: clear it out of the ranking.
    await page.locator(`${SIDEBAR} [data-vram-role="clear-history"]`).click();
    const dialog = page.locator('.jp-Dialog');
    await expect(
      dialog.locator('[data-vram-role="clear-history-body"]')
    ).toContainText('Forget the 1 cell record of');
    await expect(rows).toHaveCount(1); // nothing cleared before the answer
    await dialog.locator('.jp-mod-accept').click();
    await expect(rows).toHaveCount(0);

    await page.notebook.addCell(
      'code',
      'big = torch.ones(40_000_000)  # 160 MB'
    );
    await page.notebook.addCell('code', 'time.sleep(1.2)');
    await page.notebook.addCell(
      'code',
      'small = torch.ones(5_000_000)  # 20 MB'
    );
    for (const i of [1, 2, 3]) {
      await page.notebook.runCell(i, true);
    }
    await expect(rows).toHaveCount(3);

    const sortBy = async (
      key: string,
      direction: 'ascending' | 'descending'
    ) => {
      const header = page.locator(
        `${SIDEBAR} [data-vram-role="cell-sort"][data-vram-sort-key="${key}"]`
      );
      for (
        let i = 0;
        i < 3 && (await header.getAttribute('aria-sort')) !== direction;
        i++
      ) {
        await header.click();
      }
      await expect(header).toHaveAttribute('aria-sort', direction);
    };
    const order = async () =>
      (await rows.evaluateAll(els =>
        els.map(el => Number(el.getAttribute('data-vram-execution-count')))
      )) as number[];

    await sortBy('delta', 'descending');
    expect((await order())[0]).toBe(2); // the 160 MB cell
    await sortBy('delta', 'ascending');
    expect((await order())[2]).toBe(2);
    await sortBy('duration', 'descending');
    expect((await order())[0]).toBe(3); // the sleeping cell
    await sortBy('execution_count', 'ascending');
    expect(await order()).toEqual([2, 3, 4]);
    await sortBy('execution_count', 'descending');
    expect(await order()).toEqual([4, 3, 2]);
    // Peaks are absolute (the most the kernel held during the cell): the last
    // cell, run while both tensors are alive, ranks first.
    await sortBy('peak', 'descending');
    expect((await order())[0]).toBe(4);
    await sortBy('status', 'ascending');
    expect((await order()).sort()).toEqual([2, 3, 4]);

    // Click the sleeping cell's row: that cell becomes the active one.
    await page.notebook.selectCells(0);
    await page
      .locator(
        `${SIDEBAR} [data-vram-role="cell-row"][data-vram-execution-count="3"]`
      )
      .click();
    await expect
      .poll(() =>
        page.evaluate(() => {
          const panel = window.jupyterapp.shell.currentWidget as any;
          return panel?.content?.activeCellIndex;
        })
      )
      .toBe(2);
  });

  test("a console on the notebook's kernel: its runs are labelled a console's", async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(0, 'code', 'a = 1');
    await page.notebook.runCell(0, true);
    await expect(badgeOf(page, 0)).toBeVisible();
    await showCellHistory(page);

    // "New Console for Notebook": a console of its own on the same kernel.
    await page.evaluate(() =>
      window.jupyterapp.commands.execute('notebook:create-console')
    );
    const prompt = page.locator('.jp-CodeConsole-promptCell .cm-content');
    await expect(prompt).toBeVisible();
    await prompt.click();
    await page.keyboard.type('b = list(range(1000))');
    await page.evaluate(() =>
      window.jupyterapp.commands.execute('console:run-forced')
    );
    await expect(
      page.locator('.jp-CodeConsole-content .jp-CodeCell')
    ).toHaveCount(1);

    // JupyterLab's console sends its own cell's id: the row still reads as a console's.
    const consoleRow = page.locator(
      `${SIDEBAR} [data-vram-role="cell-row"][data-vram-execution-count="2"]`
    );
    await expect(consoleRow).toContainText('console', { timeout: 30_000 });
    await expect(consoleRow).toHaveClass(/jp-vram-CellRow-console/);
    const notebookRow = page.locator(
      `${SIDEBAR} [data-vram-role="cell-row"][data-vram-execution-count="1"]`
    );
    await expect(notebookRow).not.toContainText('console');
    await consoleRow.click();
    await expect(
      page.locator(`${SIDEBAR} [data-vram-role="cell-message"]`)
    ).toHaveText('[2] ran in a console: there is no cell to go to.');
  });

  test('Restart and Run All: every cell is measured, and the panel is live while they run', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(
      0,
      'code',
      `x = bytearray(b'\\x01') * (200 * 2**20)\n${holdUntilReleased('end-the-first-cell')}`
    );
    await page.notebook.addCell('code', 'y = 1');
    const ran = page.notebook.run();
    await releaseCell(page, 'end-the-first-cell');
    await ran;
    await expect(badgeOf(page, 1)).toBeVisible();
    await removeRelease(page, 'end-the-first-cell');
    // As the Restart and Run All command does: the cells are sent as soon as
    // the restart is over, before the restarted kernel first says it is idle.
    await page.evaluate(async () => {
      const app = window.jupyterapp;
      await (app.shell.currentWidget as any).sessionContext.restartKernel();
      void app.commands.execute('notebook:run-all-cells');
    });
    // Live while the first cell still runs: the helper went ahead of it.
    await expect(sidebarRole(page, 'state')).toHaveAttribute(
      'data-vram-state',
      'live'
    );
    await expect(sidebarRole(page, 'kernel-busy')).toBeVisible();
    await releaseCell(page, 'end-the-first-cell');
    // Both cells have records of the restarted kernel, not the earlier ones.
    for (const i of [0, 1]) {
      await expect(badgeOf(page, i)).not.toHaveAttribute(
        'data-vram-earlier',
        /.*/,
        { timeout: 30_000 }
      );
      await expect(badgeOf(page, i)).toHaveAttribute('data-vram-status', 'ok');
    }
    expect(
      await numberAttr(badgeOf(page, 0), 'data-vram-delta-bytes')
    ).toBeGreaterThan(180 * MiB);
  });

  test('badges can be hidden and shown again', async ({ page }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(0, 'code', 'a = bytearray(10 * 2**20)');
    await page.notebook.runCell(0, true);
    await expect(badgeOf(page, 0)).toBeVisible();
    const toggle = () =>
      page.evaluate(async () => {
        await window.jupyterapp.commands.execute(
          'jupyterlab-vram:toggle-cell-badges'
        );
      });
    await toggle();
    await expect(badgeOf(page, 0)).toBeHidden();
    await toggle();
    await expect(badgeOf(page, 0)).toBeVisible();
  });
});

test.describe('per-cell memory in a fully windowed notebook', () => {
  // 'full' windowing keeps only the cells in view in the DOM: badges must be
  // attached as cells come into view, not once at load.
  test.use({
    mockSettings: {
      ...galata.DEFAULT_SETTINGS,
      '@jupyterlab/notebook-extension:tracker': {
        ...galata.DEFAULT_SETTINGS['@jupyterlab/notebook-extension:tracker'],
        windowingMode: 'full'
      }
    }
  });

  test('a 200-cell notebook shows badges on the cells in view after scrolling to the end', async ({
    page
  }) => {
    await openLiveNotebook(page);
    // Build the notebook through the shared model: typing 200 cells is slow.
    await page.evaluate(() => {
      const panel = window.jupyterapp.shell.currentWidget as any;
      const shared = panel.content.model.sharedModel;
      shared.transact(() => {
        shared.deleteCellRange(0, shared.cells.length);
        const cells = [];
        for (let i = 0; i < 200; i++) {
          cells.push({
            cell_type: 'code',
            source: `v${i} = bytearray(${(i % 5) + 1} * 2**20)`
          });
        }
        shared.insertCells(0, cells);
      });
    });
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('notebook:run-all-cells');
    });
    await expect
      .poll(
        () =>
          page.evaluate(() => {
            const panel = window.jupyterapp.shell.currentWidget as any;
            const cells = panel.content.model.cells;
            return cells.get(cells.length - 1).executionCount;
          }),
        { timeout: 90_000 }
      )
      .toBe(200);
    await page.evaluate(async () => {
      const panel = window.jupyterapp.shell.currentWidget as any;
      const notebook = panel.content;
      notebook.activeCellIndex = notebook.widgets.length - 1;
      await notebook.scrollToItem(notebook.widgets.length - 1);
    });
    // Windowing is really on: far fewer cells are attached than exist.
    expect(
      await page
        .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')
        .count()
    ).toBeLessThan(100);
    const lastCell = page
      .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')
      .filter({ hasText: 'v199 = bytearray' });
    await expect(lastCell.locator('[data-vram-role="cell-badge"]')).toBeVisible(
      { timeout: 30_000 }
    );
    await expect(
      lastCell.locator('[data-vram-role="cell-badge"]')
    ).toHaveAttribute('data-vram-execution-count', '200');
  });
});
