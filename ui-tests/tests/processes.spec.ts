/**
 * Every process the notebook starts: a cell starts a child process that
 * holds 200 MiB; the Processes tab lists it with its memory, the Host RAM
 * card counts "Kernel + 1 process", the cell's badge shows the processes'
 * figure, and Stop asks first, then ends it (the list is empty, and the
 * kernel finds the pid gone). A fork pool whose workers hold memory is
 * listed as something to release, and Release asks first, then ends its
 * workers and says what came back. Real kernel, real processes.
 */
import { expect, test } from '@jupyterlab/galata';

import {
  badgeOf,
  MiB,
  openLiveNotebook,
  SIDEBAR,
  sidebarRole
} from './helpers';

// See sidebar.spec.ts: Galata's kernel tracking breaks restarts/interrupts.
test.use({ kernels: null });

/**
 * The child touches every page of its 200 MiB, then says so; the cell waits
 * for that, then two more seconds, so that the helper reads the tree while
 * the cell runs and the cell's record carries the processes' figures.
 */
const START_CHILD = [
  'import os, subprocess, sys, time',
  'CHILD = \'b = bytearray(200 << 20); b[::4096] = b"x" * (len(b) // 4096); print("ready", flush=True); import time; time.sleep(600)\'',
  "child = subprocess.Popen([sys.executable, '-c', CHILD], stdout=subprocess.PIPE)",
  'child.stdout.readline()',
  'time.sleep(2)',
  'child.pid'
].join('\n');

test.describe('the kernel\u2019s processes', () => {
  test('a child holding memory is listed, counted, shown on its cell, and stopped after asking', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(0, 'code', START_CHILD);
    await page.notebook.runCell(0, true);
    const pid = Number(
      (await page.notebook.getCellTextOutput(0))?.join('').trim()
    );
    expect(pid).toBeGreaterThan(1);

    // The Processes tab lists it, with its own memory (USS) of about 200 MiB.
    await sidebarRole(page, 'processes-tab').click();
    const row = page.locator(
      `${SIDEBAR} [data-vram-role="process-row"][data-vram-pid="${pid}"]`
    );
    await expect(row).toBeVisible({ timeout: 30_000 });
    await expect(row.locator('[data-vram-role="process-pid"]')).toHaveText(
      `pid ${pid}`
    );
    await expect(
      row.locator('[data-vram-role="process-command"]')
    ).toContainText('bytearray(200 << 20)');
    const host = row.locator('[data-vram-role="process-host"]');
    await expect
      .poll(async () => Number(await host.getAttribute('data-vram-bytes')), {
        timeout: 30_000
      })
      .toBeGreaterThan(190 * MiB);
    await expect(host).toHaveAttribute('data-vram-measure', 'uss');
    await expect(
      row.locator('[data-vram-role="process-origin"]')
    ).toContainText('[1]');

    // The Memory tab: the kernel's own RSS, and the kernel + 1 process.
    await sidebarRole(page, 'memory-tab').click();
    const tree = sidebarRole(page, 'host-tree');
    await expect(tree).toBeVisible();
    await expect(tree).toHaveAttribute('data-vram-process-count', '1');
    await expect(tree.locator('..')).toContainText('Kernel + 1 process');
    await expect(sidebarRole(page, 'host-rss')).toBeVisible();

    // The cell's badge shows what the processes took.
    const badge = badgeOf(page, 0);
    await expect(badge).toContainText(/processes (\+|max)/, {
      timeout: 30_000
    });
    expect(
      Number(await badge.getAttribute('data-vram-processes-max-bytes'))
    ).toBeGreaterThan(150 * MiB);

    // Stop asks first: Cancel leaves it running.
    await sidebarRole(page, 'processes-tab').click();
    const dialog = page.locator('.jp-Dialog');
    await row.locator('[data-vram-role="process-stop"]').click();
    await expect(
      dialog.locator('[data-vram-role="stop-process-dialog"]')
    ).toContainText(`pid ${pid}`);
    await dialog.locator('.jp-mod-reject').click();
    await expect(dialog).toHaveCount(0);
    await expect(row).toBeVisible();

    // Then accepted: it ends, and the list is empty.
    await row.locator('[data-vram-role="process-stop"]').click();
    await dialog.locator('.jp-mod-accept').click();
    const outcome = sidebarRole(page, 'process-stop-outcome');
    await expect(outcome).toHaveAttribute('data-vram-outcome', 'terminated', {
      timeout: 30_000
    });
    await expect(outcome).toContainText('it ended on SIGTERM');
    await expect(sidebarRole(page, 'process-row')).toHaveCount(0, {
      timeout: 30_000
    });

    // The kernel agrees: the child ended on SIGTERM, and its pid is gone.
    await page.notebook.addCell(
      'code',
      "print(child.wait(timeout=10), os.path.exists(f'/proc/{child.pid}'))"
    );
    await page.notebook.runCell(1, true);
    expect((await page.notebook.getCellTextOutput(1))?.join('')).toContain(
      '-15 False'
    );
  });

  test('a pool is listed to release, and Release asks first, then ends its workers and says what came back', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(
      0,
      'code',
      [
        'import multiprocessing as mp, time',
        // One line: the editor indents typed lines on its own.
        'def hold(_): global held; held = bytearray(60 << 20); held[::4096] = b"x" * (len(held) // 4096); time.sleep(0.5); return len(held)',
        "pool = mp.get_context('fork').Pool(2)",
        'print(sum(pool.map(hold, range(2))) >> 20, [p.pid for p in pool._pool])'
      ].join('\n')
    );
    await page.notebook.runCell(0, true);
    expect((await page.notebook.getCellTextOutput(0))?.join('')).toContain(
      '120 ['
    );

    await sidebarRole(page, 'processes-tab').click();
    const pool = page.locator(
      `${SIDEBAR} [data-vram-role="releasable-row"][data-vram-kind="mp_pool"][data-vram-name="pool"]`
    );
    await expect(pool).toBeVisible({ timeout: 30_000 });
    await expect(pool.locator('[data-vram-role="releasable-name"]')).toHaveText(
      'multiprocessing pool \u201cpool\u201d'
    );
    await expect(
      pool.locator('[data-vram-role="releasable-holds"]')
    ).toContainText('2 processes');

    // Release asks first: Cancel leaves the pool running.
    const dialog = page.locator('.jp-Dialog');
    await pool.locator('[data-vram-role="releasable-release"]').click();
    await expect(
      dialog.locator('[data-vram-role="release-engine-dialog"]')
    ).toContainText('pool.terminate() and pool.join()');
    await dialog.locator('.jp-mod-reject').click();
    await expect(dialog).toHaveCount(0);
    await expect(pool).toBeVisible();

    // Accepted: the workers end, the outcome says so, the rows go.
    await pool.locator('[data-vram-role="releasable-release"]').click();
    await dialog.locator('.jp-mod-accept').click();
    const outcome = sidebarRole(page, 'release-outcome');
    await expect(outcome).toHaveAttribute('data-vram-outcome', 'released', {
      timeout: 30_000
    });
    await expect(outcome).toContainText(
      'Released multiprocessing pool \u201cpool\u201d: 2 processes ended'
    );
    await expect(outcome).toContainText("The kernel's processes (host):");
    await expect(pool).toHaveCount(0);
    await expect(sidebarRole(page, 'process-row')).toHaveCount(0, {
      timeout: 30_000
    });

    // The kernel agrees: the pool is terminated.
    await page.notebook.addCell('code', 'print(pool._state)');
    await page.notebook.runCell(1, true);
    expect((await page.notebook.getCellTextOutput(1))?.join('')).toContain(
      'TERMINATE'
    );
  });
});
