/**
 * The out-of-memory assistant in the browser: a cell that keeps 400 MB in a
 * name, then one that dies of a real MemoryError (an absurd NumPy array),
 * gets an "out of memory" badge; the sidebar explains why with numbers (too
 * big for the machine) and ranks fixes; "Delete the largest holders" deletes the name (after the
 * confirmation) and says what it freed, and the diagnosis shows the kernel's
 * RAM now beside its RAM at the failure, and no longer offers the fix it
 * has done. Real kernel, real NumPy.
 */
import { expect, test } from '@jupyterlab/galata';

import { badgeOf, MiB, openLiveNotebook, sidebarRole } from './helpers';

// See sidebar.spec.ts: Galata's kernel tracking breaks restarts/interrupts.
test.use({ kernels: null });

test('a cell that dies of out-of-memory gets a marker, a diagnosis and a working fix', async ({
  page
}) => {
  await openLiveNotebook(page);
  await page.notebook.setCell(
    0,
    'code',
    'import numpy as np\nkept = np.ones(50_000_000)  # 400 MB'
  );
  await page.notebook.runCell(0, true);
  await page.notebook.addCell(
    'code',
    'np.empty(2**50, dtype=np.uint8)  # 1 PiB: fails'
  );
  await page.notebook.runCell(1, true);

  const badge = badgeOf(page, 1);
  await expect(badge).toHaveAttribute('data-vram-out-of-memory', 'true', {
    timeout: 30_000
  });
  await expect(badge).toContainText('out of memory');
  await expect(badge).toHaveClass(/jp-vram-CellBadge-oom/);

  const diagnosis = sidebarRole(page, 'oom-diagnosis');
  await expect(diagnosis).toBeVisible({ timeout: 30_000 });
  await expect(sidebarRole(page, 'oom-headline')).toContainText(
    /ran out of host RAM: it asked for 1 PiB with .* free of/
  );
  await expect(
    diagnosis.locator('[data-vram-role="oom-cause"]').first()
  ).toHaveAttribute('data-vram-cause', 'too_big');
  // 1 PiB is too big whatever is freed, so no other cause is named; the
  // notebook's 400 MB still shows, and deleting it is still offered.
  await expect(sidebarRole(page, 'oom-figures')).toContainText(
    'Held by notebook references'
  );
  // Beside the kernel's RSS at the failure, its RSS now (the 400 MB included).
  const rssNow = diagnosis.locator(
    '[data-vram-role="oom-figure-now"][data-vram-figure="process"]'
  );
  await expect(rssNow).toContainText('now');
  const rssBefore = Number(await rssNow.getAttribute('data-vram-bytes'));
  expect(rssBefore).toBeGreaterThan(400 * MiB);

  // On a host out-of-memory, Free memory promises no CUDA cache.
  await expect(
    diagnosis.locator(
      '[data-vram-role="oom-action"][data-vram-action="free-memory"]'
    )
  ).toHaveAttribute('title', /where CUDA is initialised/);
  const remove = diagnosis.locator(
    '[data-vram-role="oom-action"][data-vram-action="delete-holders"]'
  );
  await expect(remove).toContainText('kept');
  // 1 PiB does not fit whatever is freed: the fix says it helps the next cells, not this request.
  await expect(remove).toHaveAttribute(
    'title',
    /Not enough for this request: it is larger than the whole machine/
  );
  await remove.click();
  const dialog = page.locator('.jp-Dialog');
  await expect(
    dialog.locator('[data-vram-role="delete-plan-name"]')
  ).toContainText('kept');
  await dialog.locator('.jp-mod-accept').click();

  const result = sidebarRole(page, 'action-result');
  await expect(result).toHaveAttribute('data-vram-action', 'delete', {
    timeout: 30_000
  });
  expect(
    Number(await result.getAttribute('data-vram-freed-bytes'))
  ).toBeGreaterThan(300 * MiB);
  // The fix is done: the card no longer offers to delete what is gone.
  await expect(remove).toHaveCount(0);
  // The diagnosis says where things stand now: the fix worked.
  await expect
    .poll(async () => Number(await rssNow.getAttribute('data-vram-bytes')), {
      timeout: 30_000
    })
    .toBeLessThan(rssBefore - 300 * MiB);

  await page.notebook.addCell('code', "'kept' in globals()");
  await page.notebook.runCell(2, true);
  expect((await page.notebook.getCellTextOutput(2))?.join('')).toContain(
    'False'
  );

  await sidebarRole(page, 'oom-dismiss').click();
  await expect(diagnosis).toBeHidden();
});
