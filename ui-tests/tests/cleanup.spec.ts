/**
 * Freeing memory from the sidebar: free actions report what came back, and
 * inspect -> tick -> confirm deletes a variable (and its Out[] copy) and
 * shows the bytes freed. Real kernel, real CPU PyTorch.
 */
import { expect, test } from '@jupyterlab/galata';

import {
  holdUntilReleased,
  MiB,
  openLiveNotebook,
  releaseCell,
  SIDEBAR,
  sidebarRole,
  startCell
} from './helpers';

// See sidebar.spec.ts: Galata's kernel tracking breaks restarts/interrupts.
test.use({ kernels: null });

test.describe('freeing memory', () => {
  test('garbage collection reports what it collected', async ({ page }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(
      0,
      'code',
      'class Node:\n    pass\nfor _ in range(1000):\n    a, b = Node(), Node()\n    a.other, b.other = b, a\ndel a, b'
    );
    await page.notebook.runCell(0, true);
    await page
      .locator(`${SIDEBAR} [data-vram-role="action-collect-garbage"]`)
      .click();
    const result = sidebarRole(page, 'action-result');
    await expect(result).toHaveAttribute('data-vram-outcome', 'done');
    await expect(result).toContainText(/collected/i);
  });

  test('inspect, tick a tensor, confirm: it is gone and the bytes freed are shown', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(
      0,
      'code',
      'import torch\nbig = torch.ones(50_000_000)  # 200 MB\nt = torch.ones(1_000_000)\nt_alias = t'
    );
    await page.notebook.runCell(0, true);
    // Echo it, so Out[2] and _ hold it too: deleting the name alone would not free it.
    await page.notebook.addCell('code', 'big');
    await page.notebook.runCell(1, true);

    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute(
        'jupyterlab-vram:inspect-memory'
      );
    });
    await expect(sidebarRole(page, 'holders-view')).toBeVisible();
    const entry = page.locator(
      `${SIDEBAR} [data-vram-role="holder-entry"][data-vram-name="big"]`
    );
    await expect(entry).toBeVisible({ timeout: 30_000 });
    expect(
      Number(await entry.getAttribute('data-vram-bytes'))
    ).toBeGreaterThanOrEqual(200e6);
    await expect(entry).toContainText(/Out\[2\]/);
    // Two names of one storage: one row counts it, the other (0 B) says what it keeps alive.
    const note = (name: string) =>
      page.locator(
        `${SIDEBAR} [data-vram-role="holder-entry"][data-vram-name="${name}"] [data-vram-role="holder-note"]`
      );
    await expect(note('t')).toHaveText(
      'shares storage with t_alias, counted here'
    );
    await expect(note('t_alias')).toHaveText(
      'keeps 3.81 MiB alive that t counts (shared storage)'
    );

    await entry.locator('input[type="checkbox"]').check();
    await sidebarRole(page, 'delete-selected').click();
    const dialog = page.locator('.jp-Dialog');
    await expect(
      dialog.locator('[data-vram-role="delete-plan-name"]')
    ).toContainText('big');
    await dialog.locator('.jp-mod-accept').click();

    const result = sidebarRole(page, 'action-result');
    await expect(result).toHaveAttribute('data-vram-action', 'delete', {
      timeout: 30_000
    });
    await expect(result).toContainText(/freed/);
    expect(
      Number(await result.getAttribute('data-vram-freed-bytes'))
    ).toBeGreaterThan(150 * MiB);
    await expect(entry).toHaveCount(0);

    // The name is really gone from the kernel.
    await page.notebook.addCell('code', "'big' in globals()");
    await page.notebook.runCell(2, true);
    expect((await page.notebook.getCellTextOutput(2))?.join('')).toContain(
      'False'
    );
  });

  test('while a cell runs, a request waits in a queue and can be cancelled', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await startCell(page, 0, holdUntilReleased('end-the-cell'));
    await expect(sidebarRole(page, 'kernel-busy')).toBeVisible({
      timeout: 10_000
    });

    await page
      .locator(`${SIDEBAR} [data-vram-role="action-collect-garbage"]`)
      .click();
    const queued = sidebarRole(page, 'queued-action');
    await expect(queued).toContainText(/queued/i);
    await queued.locator('[data-vram-role="cancel-action"]').click();
    await expect(queued).toHaveCount(0);
    await expect(sidebarRole(page, 'action-result')).toHaveAttribute(
      'data-vram-outcome',
      'cancelled'
    );

    // Queued again and left alone: it runs when the cell is over.
    await page
      .locator(`${SIDEBAR} [data-vram-role="action-collect-garbage"]`)
      .click();
    await expect(queued).toHaveCount(1);
    await releaseCell(page, 'end-the-cell');
    await page.notebook.waitForRun(0);
    await expect(sidebarRole(page, 'action-result')).toHaveAttribute(
      'data-vram-outcome',
      'done',
      {
        timeout: 30_000
      }
    );
    await expect(queued).toHaveCount(0);
  });
});
