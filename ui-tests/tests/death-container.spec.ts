/**
 * A kernel killed at its container's memory limit, in Chromium: run only
 * where the kernels run inside a cgroup with a memory limit. The test
 * server does that with VRAM_UI_KERNEL_MEMORY_LIMIT where the machine lets
 * it make a cgroup (root, a writable cgroup mount; see
 * jupyter_server_test_config.py), and scripts/test.sh runs this file so:
 *
 *     VRAM_UI_KERNEL_MEMORY_LIMIT=1536M npx playwright test tests/death-container.spec.ts
 *
 * Elsewhere it skips (the Host RAM card shows no container limit). A cell
 * allocates until the kernel's out-of-memory killer takes the kernel; the
 * restarted kernel's helper reports the cgroup's oom_kill count one higher,
 * and the panel says as fact that the out-of-memory killer killed it.
 */
import { expect, test } from '@jupyterlab/galata';

import { openLiveNotebook, sidebarRole, startCell } from './helpers';

test.use({ kernels: null });

test('a kernel killed at its container limit is said to be OOM-killed, as fact', async ({ page }) => {
  await openLiveNotebook(page);
  const limitRow = sidebarRole(page, 'host-container-limit');
  await expect(limitRow).toHaveCount(1);
  test.skip(
    (await limitRow.getAttribute('data-vram-bytes')) === null,
    'JupyterLab does not run under a cgroup memory limit here'
  );
  await expect(page.locator('#jp-vram-sidebar .jp-vram-Card-subtitle').first()).toContainText(
    'of container limit'
  );

  await startCell(
    page,
    0,
    'import time\nhog = []\nwhile True:\n    hog.append(b"\\x01" * (16 << 20))\n    time.sleep(0.02)'
  );
  const death = sidebarRole(page, 'kernel-death');
  await expect(death).toBeVisible({ timeout: 120_000 });
  // The restarted kernel's first sample brings the evidence.
  await expect(death).toHaveAttribute('data-vram-verdict', 'oom-killed', { timeout: 60_000 });
  await expect(sidebarRole(page, 'kernel-death-summary')).toContainText(
    /while its RAM was [\d.]+ (MiB|GiB), with [\d.]+ (B|KiB|MiB|GiB) more available \(container limit [\d.]+ (MiB|GiB)\): the out-of-memory killer killed it \(memory\.(events|oom_control) oom_kill\)\./
  );
  await expect(sidebarRole(page, 'kernel-death-cell')).toHaveText('Cell [1] was running.');
  await expect(
    page.locator('.Toastify__toast').filter({ hasText: 'was killed by the out-of-memory killer' })
  ).toBeVisible();
  await expect(
    page
      .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')
      .nth(0)
      .locator('[data-vram-role="cell-death-badge"]')
  ).toHaveAttribute('data-vram-verdict', 'oom-killed');
});
