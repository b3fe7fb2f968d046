/**
 * Live memory by notebook line: turn recording on from the Lines tab, run a
 * cell that allocates on its third line, click the row: the cell is active
 * and the cursor is on that line. A new stack depth applies while
 * recording, and the panel says what it cost. The Cells tab sorts by what
 * each cell still holds. A graph-holding loss history is flagged in the Holders tab. Real kernel, real NumPy and CPU PyTorch.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import {
  cellHeaderRow,
  cutCellColumns,
  openLiveNotebook,
  showCellHistory,
  SIDEBAR,
  sidebarRole
} from './helpers';

// See sidebar.spec.ts: Galata's kernel tracking breaks restarts/interrupts.
test.use({ kernels: null });

/**
 * A live notebook whose first cell imported NumPy, and allocation recording
 * turned on with the Lines tab's toggle; returns the toggle.
 */
async function recordFromLinesTab(
  page: IJupyterLabPageFixture
): Promise<Locator> {
  await openLiveNotebook(page);
  await page.notebook.setCell(0, 'code', 'import numpy as np');
  await page.notebook.runCell(0, true);
  await sidebarRole(page, 'lines-tab').click();
  const toggle = sidebarRole(page, 'record-allocations');
  await expect(toggle).toBeEnabled({ timeout: 30_000 });
  await toggle.check();
  return toggle;
}

test.describe('which line holds the memory', () => {
  test('a row of the Lines tab leads to the cell and line that allocated', async ({
    page
  }) => {
    const toggle = await recordFromLinesTab(page);
    await expect(sidebarRole(page, 'recording-status')).toContainText(
      'Recording on',
      {
        timeout: 30_000
      }
    );
    await expect(sidebarRole(page, 'recording-status')).toContainText(
      'tracemalloc'
    );
    // These machines have no GPU: the GPU part is not said to wait for CUDA, and the snapshot says why it is off.
    await expect(sidebarRole(page, 'recording-status')).toContainText(
      'no GPU is visible to this kernel, so only the host is recorded'
    );
    await expect(sidebarRole(page, 'export-gpu-snapshot')).toBeDisabled();
    await expect(sidebarRole(page, 'export-gpu-snapshot')).toHaveAttribute(
      'title',
      /No GPU is visible/
    );

    await page.notebook.addCell(
      'code',
      'a = 1\nb = 2\nbig = np.ones(5_000_000)  # 40 MB\nc = 3'
    );
    await page.notebook.addCell('code', 'print("another cell")');
    await page.notebook.runCell(1, true);
    await page.notebook.runCell(2, true);
    await page.notebook.selectCells(2);

    await sidebarRole(page, 'sites-refresh').click();
    const row = page
      .locator(
        `${SIDEBAR} [data-vram-role="site-row"][data-vram-device="host"][data-vram-line="3"]`
      )
      .first();
    await expect(row).toBeVisible({ timeout: 30_000 });
    expect(Number(await row.getAttribute('data-vram-bytes'))).toBeGreaterThan(
      38e6
    );
    await expect(row).toContainText('big = np.ones(5_000_000)');
    // The library's small allocations (IPython's, the JSON decoder's) wait
    // behind one closed line, so the notebook's own lines come first.
    const fold = page.locator(
      `${SIDEBAR} [data-vram-role="site-fold"][data-vram-device="host"]`
    );
    await expect(fold).toHaveCount(1);
    await expect(fold.locator('summary')).toContainText(
      /smaller sites outside the notebook: .* in .* allocations/
    );
    expect(await fold.evaluate(el => (el as HTMLDetailsElement).open)).toBe(
      false
    );
    const folded = fold.locator('[data-vram-role="site-row"]');
    expect(await folded.count()).toBeGreaterThanOrEqual(2);
    expect(
      await fold
        .locator('[data-vram-role="site-row"][data-vram-execution-count]')
        .count()
    ).toBe(0);
    await expect(folded.first()).toBeHidden();
    await row.click();

    // The allocating cell is active, in edit mode, with the cursor on line 3.
    await expect
      .poll(async () =>
        page.evaluate(() => {
          const notebook = (window as any).jupyterapp.shell.currentWidget
            .content;
          const cell = notebook.activeCell;
          const position = cell?.editor?.getCursorPosition();
          return {
            index: notebook.activeCellIndex,
            mode: notebook.mode,
            line: position?.line ?? null
          };
        })
      )
      .toEqual({ index: 1, mode: 'edit', line: 2 });

    // Off: nothing is recorded any more.
    await toggle.uncheck();
    await expect(sidebarRole(page, 'recording-status')).toContainText(
      'Recording is off',
      {
        timeout: 30_000
      }
    );
    await expect(
      page.locator(`${SIDEBAR} [data-vram-role="site-row"]`)
    ).toHaveCount(0);
  });

  test('a new stack depth restarts host recording at once, and the panel says so', async ({
    page
  }) => {
    await recordFromLinesTab(page);
    const status = sidebarRole(page, 'recording-status');
    await expect(status).toContainText('16 frames', { timeout: 30_000 });

    await page.notebook.addCell('code', 'before = np.ones(5_000_000)  # 40 MB');
    await page.notebook.runCell(1, true);
    const setFrames = (frames: number) =>
      page.evaluate(async frames => {
        const registry = await window.galata.getPlugin(
          '@jupyterlab/apputils-extension:settings'
        );
        await registry!.set(
          'jupyterlab-vram:plugin',
          'allocationHostFrames',
          frames
        );
      }, frames);
    await setFrames(32);
    // Applied while recording, without a toggle; what it cost is said.
    await expect(status).toContainText(
      'Host recording restarted with 32 frames',
      { timeout: 30_000 }
    );
    await expect(status).toContainText(
      'earlier host allocations are not attributed'
    );

    await page.notebook.addCell('code', 'after = np.ones(3_000_000)  # 24 MB');
    await page.notebook.runCell(2, true);
    await sidebarRole(page, 'sites-refresh').click();
    const hostRows = page.locator(
      `${SIDEBAR} [data-vram-role="site-row"][data-vram-device="host"]`
    );
    await expect(hostRows.first()).toBeVisible({ timeout: 30_000 });
    const sizes = async () =>
      (await hostRows.evaluateAll(rows =>
        rows.map(r => Number(r.getAttribute('data-vram-bytes')))
      )) as number[];
    // The array made after the restart has its line; the one made before lost its stack.
    await expect
      .poll(async () => (await sizes()).some(b => b > 23e6 && b < 26e6), {
        timeout: 30_000
      })
      .toBe(true);
    expect((await sizes()).some(b => b > 38e6)).toBe(false);
    await setFrames(16);
  });

  test('the Cells tab sorts by what each cell still holds', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(0, 'code', 'import numpy as np');
    await page.notebook.runCell(0, true); // before recording: no Alive figure
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute(
        'jupyterlab-vram:record-allocations',
        { enabled: true }
      );
    });
    await page.notebook.addCell('code', 'small = np.ones(2_000_000)  # 16 MB');
    await page.notebook.addCell('code', 'large = np.ones(6_000_000)  # 48 MB');
    await page.notebook.addCell('code', 'medium = np.ones(4_000_000)  # 32 MB');
    for (const i of [1, 2, 3]) {
      await page.notebook.runCell(i, true);
    }
    await showCellHistory(page);
    const rows = page.locator(
      `${SIDEBAR} [data-vram-role="cell-row"]:not([hidden])`
    );
    const alive = (count: number) =>
      page.locator(
        `${SIDEBAR} [data-vram-role="cell-row"][data-vram-execution-count="${count}"]`
      );
    // The per-cell figures come after each cell (throttled): wait for the last one.
    await expect(alive(4)).toHaveAttribute('data-vram-alive', /MiB/, {
      timeout: 30_000
    });
    await expect(alive(2)).toHaveAttribute('data-vram-alive', /MiB/);

    const header = page.locator(
      `${SIDEBAR} [data-vram-role="cell-sort"][data-vram-sort-key="alive"]`
    );
    const order = async () =>
      (await rows.evaluateAll(els =>
        els.map(el => Number(el.getAttribute('data-vram-execution-count')))
      )) as number[];
    await header.click();
    const first = await header.getAttribute('aria-sort');
    expect(['ascending', 'descending']).toContain(first);
    // Largest first going down, smallest first going up; the cell run before
    // recording has no figure and stays last both ways.
    const expected = { descending: [3, 4, 2, 1], ascending: [2, 4, 3, 1] };
    expect(await order()).toEqual(
      expected[first as 'ascending' | 'descending']
    );
    // Six columns at the sidebar's default width: every figure shown is read whole
    // (Time gives way, its figure stays in the row's tooltip).
    for (const line of [alive(4), alive(2), cellHeaderRow(page)]) {
      expect(await cutCellColumns(line)).toEqual([]);
    }
    await expect(alive(4)).toHaveAttribute('title', /Duration/);
    await header.click();
    const second = first === 'ascending' ? 'descending' : 'ascending';
    await expect(header).toHaveAttribute('aria-sort', second);
    expect(await order()).toEqual(expected[second]);
  });

  test('a loss history that keeps autograd graphs is flagged, with a fix', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(
      0,
      'code',
      'import torch\nmodel = torch.nn.Linear(32, 1)\nlosses = []\n' +
        'for _ in range(3):\n    loss = model(torch.randn(64, 32)).pow(2).mean()\n    losses.append(loss)'
    );
    await page.notebook.runCell(0, true);
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute(
        'jupyterlab-vram:inspect-memory'
      );
    });
    const entry = page.locator(
      `${SIDEBAR} [data-vram-role="holder-entry"][data-vram-name="losses"]`
    );
    await expect(entry).toHaveAttribute('data-vram-graph-holding', 'true', {
      timeout: 30_000
    });
    // Each iteration's graph saved its input (64x32 floats) and output (64x1) for backward.
    await expect(
      entry.locator('[data-vram-role="holder-graph"]')
    ).toContainText(
      /autograd graph alive .*saved for backward hold 24\.[78] KiB that no variable holds/
    );
    // The warning and its buttons are no smaller than the rest of the row.
    const sizes = await entry.evaluate(el => {
      const px = (role: string) =>
        parseFloat(
          getComputedStyle(el.querySelector(`[data-vram-role="${role}"]`)!)
            .fontSize
        );
      return {
        row: px('holder-summary'),
        warning: px('holder-graph'),
        fix: px('graph-fix')
      };
    });
    expect(sizes.warning).toBeGreaterThanOrEqual(sizes.row);
    expect(sizes.fix).toBeGreaterThanOrEqual(sizes.row);
    await entry.locator('[data-vram-role="graph-fix"]').click();
    await expect.poll(async () => await page.notebook.getCellCount()).toBe(2);
    expect(await page.notebook.getCellTextInput(1)).toContain(
      'losses = [_keep(t) for t in losses]'
    );
  });
});
