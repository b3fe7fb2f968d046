/**
 * The Kernels tab against a real kernel: the notebook's kernel is listed with
 * its host RAM, the GPU-process note says what NVML can (not) show here, and
 * "Shut Down" asks first, then leaves the notebook without a kernel.
 */
import { expect, test } from '@jupyterlab/galata';

import { openLiveNotebook, sidebarRole } from './helpers';

// See sidebar.spec.ts: Galata's kernel tracking breaks restarts/interrupts.
test.use({ kernels: null });

test('the Kernels tab lists the kernel and shuts it down after a confirmation', async ({
  page
}) => {
  await openLiveNotebook(page);
  await sidebarRole(page, 'kernels-tab').click();
  const row = sidebarRole(page, 'kernel-row');
  await expect(row).toHaveCount(1);
  await expect(row.locator('[data-vram-role="kernel-notebook"]')).toContainText(
    '.ipynb'
  );
  // At the sidebar's default width, the notebook's name and the kernel's are read whole, not cut.
  for (const role of ['kernel-notebook', 'kernel-name', 'kernel-state']) {
    const cut = await row
      .locator(`[data-vram-role="${role}"]`)
      .evaluate(
        el =>
          el.scrollWidth > el.clientWidth ||
          el.getBoundingClientRect().width < 40
      );
    expect(cut, role).toBe(false);
  }
  const rss = row.locator('[data-vram-role="kernel-host-rss"]');
  await expect(rss).toHaveAttribute('data-vram-bytes', /^[1-9]\d{6,}$/, {
    timeout: 30_000
  });
  await expect(sidebarRole(page, 'gpu-processes-note')).toBeVisible();
  // These machines have no GPU (and no NVIDIA driver): said as such, not as hidden GPU processes.
  await expect(sidebarRole(page, 'gpu-processes-note')).toHaveAttribute(
    'data-vram-visibility',
    'no-gpus'
  );
  await expect(sidebarRole(page, 'gpu-processes-note')).toContainText(
    'No GPU is visible to these kernels'
  );

  await row.locator('[data-vram-role="kernel-shutdown"]').click();
  const dialog = page.locator('.jp-Dialog');
  await expect(
    dialog.locator('[data-vram-role="shutdown-kernel-body"]')
  ).toContainText('.ipynb');
  await dialog.locator('.jp-Dialog-button.jp-mod-reject').click();
  await expect(row).toHaveCount(1);
  await expect(row.locator('[data-vram-role="kernel-state"]')).toHaveAttribute(
    'data-vram-state',
    /./
  );

  await row.locator('[data-vram-role="kernel-shutdown"]').click();
  await page.locator('.jp-Dialog .jp-mod-accept').click();
  await expect
    .poll(
      () =>
        page.evaluate(() => {
          const panel = window.jupyterapp.shell.currentWidget as any;
          return panel?.sessionContext?.session?.kernel?.id ?? null;
        }),
      { timeout: 30_000 }
    )
    .toBeNull();
  await expect(row.locator('[data-vram-role="kernel-state"]')).toHaveAttribute(
    'data-vram-state',
    /^(?!live$).+/,
    { timeout: 30_000 }
  );
});
