/**
 * A kernel killed while a cell runs, in Chromium against a real kernel: the
 * test sends SIGKILL to the kernel process (as the out-of-memory killer
 * would) while a cell holds 800 MiB; JupyterLab's server restarts it. The
 * panel says what the last figures suggest and names the running cell, a
 * notification appears, the cell is marked "kernel died" and gets a record
 * of what it took before the death (Cells tab, badge), and the timeline
 * keeps the last samples with a mark at the death (and at the user's
 * restart after it).
 */
import { expect, test } from '@jupyterlab/galata';

import {
  badgeOf,
  MiB,
  openInNewTab,
  openLiveNotebook,
  restartKernel,
  showCellHistory,
  SIDEBAR,
  sidebarRole,
  startCell,
  waitForBytes
} from './helpers';

// See sidebar.spec.ts: Galata's kernel tracking breaks restarts.
test.use({ kernels: null });

test('a kernel killed while a cell runs is explained, and the cell is marked', async ({
  page
}) => {
  await openLiveNotebook(page);
  const live = (await sidebarRole(page, 'state').textContent()) ?? '';
  const pid = Number(/kernel process (\d+)/.exec(live)?.[1]);
  expect(pid).toBeGreaterThan(1);

  await startCell(
    page,
    0,
    "import time\nx = bytearray(b'\\x01') * (800 * 2**20)\ntime.sleep(60)"
  );
  await waitForBytes(page, 'host-rss', bytes => bytes > 700 * MiB, 60_000);
  process.kill(pid, 'SIGKILL');

  const death = sidebarRole(page, 'kernel-death');
  await expect(death).toBeVisible({ timeout: 60_000 });
  // 800 MiB of this machine's RAM is far from any limit: no guess. On Linux the machine's
  // OOM kill count (/proc/vmstat) did not rise either: a SIGKILL is not the killer's.
  await expect(death).toHaveAttribute('data-vram-verdict', 'unknown');
  await expect(sidebarRole(page, 'kernel-death-summary')).toContainText(
    /The kernel died and was restarted while its RAM was [\d.]+ (MiB|GiB), with [\d.]+ (MiB|GiB) more available \(machine RAM [\d.]+ GiB\): memory was not near the limit, (so|and the machine's \/proc\/vmstat oom_kill count did not rise, so the out-of-memory killer did not kill it and) the cause is unknown\./
  );
  await expect(sidebarRole(page, 'kernel-death-cell')).toHaveText(
    'Cell [1] was running.'
  );

  const toast = page
    .locator('.Toastify__toast')
    .filter({ hasText: 'The kernel (running [1]) died' });
  await expect(toast).toBeVisible();
  await expect(toast).toContainText('the cause is unknown');

  const mark = page
    .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')
    .nth(0)
    .locator('[data-vram-role="cell-death-badge"]');
  await expect(mark).toHaveText('kernel died');
  // Its helper died before it could send the cell's record: the page writes
  // one from the figures sampled since the cell started (the 800 MiB it
  // took, at least), without repeating "kernel died" beside the mark.
  const badge = badgeOf(page, 0);
  await expect(badge).toHaveAttribute('data-vram-status', 'died');
  await expect(badge).toHaveAttribute('data-vram-peak-exact', 'false');
  expect(
    Number(await badge.getAttribute('data-vram-delta-bytes'))
  ).toBeGreaterThan(700 * MiB);
  await expect(badge).not.toContainText('kernel died');
  // JupyterLab's own "Kernel Restarting" dialog covers the page: dismiss it.
  await page.locator('.jp-Dialog .jp-mod-accept').click();
  await showCellHistory(page);
  const row = page.locator(
    `${SIDEBAR} [data-vram-role="cell-row"][data-vram-status="died"]`
  );
  await expect(row).toHaveCount(1);
  await expect(row).toHaveAttribute('data-vram-execution-count', '1');
  await expect(row).toContainText('died');
  await page.locator(`${SIDEBAR} [data-vram-role="memory-tab"]`).click();

  await expect(sidebarRole(page, 'timeline')).toHaveAttribute(
    'data-vram-deaths',
    '1'
  );
  // The restarted kernel goes live again; the explanation stays until the user restarts.
  await expect(sidebarRole(page, 'state')).toHaveAttribute(
    'data-vram-state',
    'live',
    { timeout: 60_000 }
  );
  await expect(death).toBeVisible();

  // A restart the user asks for (sessionContext.restartKernel, as the
  // Restart command does) is no death: the explanation and the cell's mark
  // go; the timeline keeps the dead kernel's figures, its death and the
  // restart marked.
  await restartKernel(page);
  await expect(death).toBeHidden();
  await expect(mark).toHaveCount(0);
  // The mark is gone; the record stays, and now says it.
  await expect(badge).toContainText('kernel died');
  await expect(sidebarRole(page, 'timeline')).toHaveAttribute(
    'data-vram-deaths',
    '1'
  );
  await expect(sidebarRole(page, 'timeline')).toHaveAttribute(
    'data-vram-restarts',
    '1'
  );
  await expect(sidebarRole(page, 'timeline-marks')).toHaveText(
    'Dashed lines mark where a kernel process ended (grey: the kernel was restarted; red: the kernel died).'
  );
  await expect(sidebarRole(page, 'state')).toHaveAttribute(
    'data-vram-state',
    'live',
    { timeout: 60_000 }
  );
  await expect(death).toBeHidden();
});

test('a kernel that exits at once has its cell named and marked', async ({
  page
}) => {
  await openLiveNotebook(page);
  // os._exit often leaves no time for the execute_input to leave the kernel
  // (not always: both ways, the cell is named and marked).
  await startCell(page, 0, 'import os; os._exit(1)');
  const death = sidebarRole(page, 'kernel-death');
  await expect(death).toBeVisible({ timeout: 60_000 });
  await expect(sidebarRole(page, 'kernel-death-cell')).toHaveText(
    /^(Cell \[1\] was running\.|The cell marked "kernel died" was most likely running: the kernel died before it said it had started it\.)$/
  );
  const mark = page
    .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')
    .nth(0)
    .locator('[data-vram-role="cell-death-badge"]');
  await expect(mark).toHaveText('kernel died');
});

test('a tab that did not start the cell marks it too, and keeps its record', async ({
  page
}) => {
  await openLiveNotebook(page);
  // Both tabs show the notebook as saved (without collaboration, an edit
  // in one tab does not reach the other).
  const code =
    "import time\nx = bytearray(b'\\x01') * (400 * 2**20)\ntime.sleep(60)";
  await page.notebook.setCell(0, 'code', code);
  await page.notebook.save();
  const path = await page.evaluate(
    () => (window.jupyterapp.shell.currentWidget as any).context.path as string
  );
  const live = (await sidebarRole(page, 'state').textContent()) ?? '';
  const pid = Number(/kernel process (\d+)/.exec(live)?.[1]);
  const second = await openInNewTab(page, path, 'vram-death-second-tab');

  // The cell is sent by the first tab: the second never sees its request,
  // only the kernel's echo of its code.
  await startCell(page, 0, code);
  await waitForBytes(page, 'host-rss', bytes => bytes > 350 * MiB, 60_000);
  await expect
    .poll(async () =>
      Number(
        await second
          .locator(`${SIDEBAR} [data-vram-role="host-rss"]`)
          .first()
          .getAttribute('data-vram-bytes')
      )
    )
    .toBeGreaterThan(350 * MiB);
  process.kill(pid, 'SIGKILL');

  const cell = second
    .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')
    .nth(0);
  await expect(cell.locator('[data-vram-role="cell-death-badge"]')).toHaveText(
    'kernel died',
    { timeout: 60_000 }
  );
  await expect(cell.locator('[data-vram-role="cell-badge"]')).toHaveAttribute(
    'data-vram-status',
    'died'
  );
  await second.close();
});

test('code a console of the notebook was running is not pinned on a notebook cell with the same code', async ({
  page
}) => {
  await openLiveNotebook(page);
  const code = 'import time\ntime.sleep(60)';
  // The notebook holds the same code, not run: only the console runs it.
  await page.notebook.setCell(0, 'code', code);
  const live = (await sidebarRole(page, 'state').textContent()) ?? '';
  const pid = Number(/kernel process (\d+)/.exec(live)?.[1]);
  expect(pid).toBeGreaterThan(1);
  await page.evaluate(async code => {
    const app = window.jupyterapp;
    const notebook = app.shell.currentWidget as any;
    (window as any).notebookKernel = notebook.sessionContext.session.kernel;
    const console = await app.commands.execute('notebook:create-console', {
      activate: false
    });
    await console.sessionContext.ready;
    console.console.promptCell.model.sharedModel.setSource(code);
    void console.console.execute(true);
    app.shell.activateById(notebook.id);
  }, code);
  // The console's cell runs: the notebook's connection hears its execute_input.
  await expect
    .poll(() => page.evaluate(() => (window as any).notebookKernel.status), {
      timeout: 30_000
    })
    .toBe('busy');
  await page.waitForTimeout(1000);
  process.kill(pid, 'SIGKILL');

  const death = sidebarRole(page, 'kernel-death');
  await expect(death).toBeVisible({ timeout: 60_000 });
  const cell = page.locator('.jp-NotebookPanel .jp-Notebook .jp-Cell').nth(0);
  await expect(cell.locator('[data-vram-role="cell-death-badge"]')).toHaveCount(
    0
  );
  await expect(cell.locator('[data-vram-role="cell-badge"]')).toHaveCount(0);
});
