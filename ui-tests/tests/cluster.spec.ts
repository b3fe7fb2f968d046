/**
 * The Dask cluster a notebook drives: a real LocalCluster of two process
 * workers with a 300 MiB limit each. The Cluster section appears only once
 * the notebook made a client, lists both workers with their pids and their
 * memory against the limit; a cell that makes the workers hold 100 MiB each
 * carries the cluster's change on its badge and in the Cells tab;
 * collecting garbage across the workers asks first and reports each
 * worker; a task that grows past its worker's limit is explained, in the
 * section (the nanny's own words and the worker's last figures) and by the
 * out-of-memory assistant (the worker, not the kernel). Real kernel, real
 * Dask.
 */
import { expect, test } from '@jupyterlab/galata';

import {
  badgeOf,
  cellHeaderRow,
  cutCellColumns,
  MiB,
  openLiveNotebook,
  showCellHistory,
  SIDEBAR,
  sidebarRole
} from './helpers';

// See sidebar.spec.ts: Galata's kernel tracking breaks restarts/interrupts.
test.use({ kernels: null });

/** One worker's death is enough for KilledWorker: no retry on the other worker. */
const START_CLUSTER = [
  'import dask, time',
  'from dask.distributed import Client, LocalCluster, wait',
  "dask.config.set({'distributed.scheduler.allowed-failures': 0})",
  "cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit='300MiB', dashboard_address=None)",
  'client = Client(cluster)',
  "print(sorted(w['memory_limit'] for w in client.scheduler_info()['workers'].values()))"
].join('\n');

/** Each worker holds 100 MiB of touched pages; the cell waits for two readings. */
const HOLD = [
  "def hold(i): block = bytearray(100 << 20); block[::4096] = b'x' * (len(block) // 4096); return block",
  'held = client.map(hold, range(2), pure=False)',
  'wait(held)',
  'time.sleep(5)',
  "print('held', len(held))"
].join('\n');

/** Grows by 20 MiB steps past the 300 MiB limit, so the nanny restarts the worker. */
const GROW = [
  "def grow(): blocks = [bytearray(20 << 20) for _ in range(40)]; [b.__setitem__(slice(None, None, 4096), b'x' * (len(b) // 4096)) or time.sleep(0.05) for b in blocks]; time.sleep(30)",
  'client.submit(grow, pure=False).result()'
].join('\n');

test.describe('the Dask cluster', () => {
  test('is found, shown per worker and per cell, cleaned after asking, and a worker past its limit is explained', async ({
    page
  }) => {
    test.setTimeout(240_000);
    await openLiveNotebook(page);
    const section = sidebarRole(page, 'cluster-view');
    // Found, not imposed: no client yet, no section.
    await expect(sidebarRole(page, 'cluster-block')).toHaveCount(0);

    await page.notebook.setCell(0, 'code', START_CLUSTER);
    await page.notebook.runCell(0, true);
    expect((await page.notebook.getCellTextOutput(0))?.join('')).toContain(
      `[${300 * MiB}, ${300 * MiB}]`
    );

    // The section: one Dask cluster, two workers with their pids and their
    // memory against the limit.
    await expect(sidebarRole(page, 'cluster-block')).toHaveCount(1, {
      timeout: 30_000
    });
    await expect(sidebarRole(page, 'cluster-heading')).toContainText('Dask');
    const workers = section.locator('[data-vram-role="cluster-worker"]');
    await expect(workers).toHaveCount(2, { timeout: 30_000 });
    for (const worker of await workers.all()) {
      await expect(
        worker.locator('[data-vram-role="cluster-worker-where"]')
      ).toContainText(/pid \d+/);
      await expect(
        worker.locator('[data-vram-role="cluster-worker-memory"]')
      ).toContainText('300 MiB');
    }

    // A cell that makes each worker hold 100 MiB: its badge carries the
    // cluster's change (sampled), about +200 MiB.
    await page.notebook.addCell('code', HOLD);
    await page.notebook.runCell(1, true);
    expect((await page.notebook.getCellTextOutput(1))?.join('')).toContain(
      'held 2'
    );
    const badge = badgeOf(page, 1);
    await expect
      .poll(
        async () =>
          Number(await badge.getAttribute('data-vram-cluster-delta-bytes')),
        { timeout: 30_000 }
      )
      .toBeGreaterThan(150 * MiB);
    await expect(badge).toContainText('cluster');
    // The Cells tab has the cluster's column, read whole.
    await showCellHistory(page);
    await expect(
      page.locator(
        `${SIDEBAR} [data-vram-role="cell-row"][data-vram-execution-count="2"] .jp-vram-CellCol-cluster`
      )
    ).toHaveText(/^\+\d/);
    expect(await cutCellColumns(cellHeaderRow(page))).toEqual([]);
    await sidebarRole(page, 'memory-tab').click();

    // Collect garbage on every worker: it asks first, then reports each one.
    await sidebarRole(page, 'cluster-action-gc').click();
    const dialog = page.locator('.jp-Dialog');
    await expect(
      dialog.locator('[data-vram-role="cluster-action-dialog"]')
    ).toBeVisible();
    await dialog.locator('.jp-mod-accept').click();
    const result = sidebarRole(page, 'cluster-action-result');
    await expect(result).toHaveAttribute('data-vram-action-status', 'done', {
      timeout: 60_000
    });
    await expect(
      result.locator('[data-vram-role="cluster-action-worker"]')
    ).toHaveCount(2);

    // A task past its worker's limit: the nanny restarts the worker, the
    // cell fails with KilledWorker, and both say which worker and how full.
    await page.notebook.addCell('code', GROW);
    await page.notebook.runCell(2, true);
    const restart = section.locator(
      '[data-vram-role="cluster-event"][data-vram-event-kind="memory_restart"]'
    );
    await expect(restart).toHaveCount(1, { timeout: 60_000 });
    await expect(
      restart.locator('[data-vram-role="cluster-event-words"]')
    ).toContainText('exceeded 95% memory budget');
    await expect(
      restart.locator('[data-vram-role="cluster-event-last"]')
    ).toContainText('300 MiB');

    await expect(badgeOf(page, 2)).toHaveAttribute(
      'data-vram-out-of-memory',
      'true',
      { timeout: 30_000 }
    );
    await expect(sidebarRole(page, 'oom-headline')).toContainText(
      'a Dask worker of tcp://'
    );
    await expect(
      sidebarRole(page, 'oom-diagnosis').locator(
        '[data-vram-role="oom-cause"][data-vram-cause="cluster_worker"]'
      )
    ).toContainText('Its last figures');

    await page.notebook.addCell('code', 'client.close(); cluster.close()');
    await page.notebook.runCell(3, true);
  });
});
