/**
 * A kernel killed at its container's memory limit, in Chromium: run only
 * where the kernels run inside a cgroup with a memory limit. The test
 * server does that with VRAM_UI_KERNEL_MEMORY_LIMIT where the machine lets
 * it make a cgroup (root, a writable cgroup mount; see
 * jupyter_server_test_config.py), and scripts/test.sh runs this file so:
 *
 *     VRAM_UI_KERNEL_MEMORY_LIMIT=1536M npx playwright test tests/death-container.spec.ts
 *
 * Elsewhere it skips (the kernel's /proc/<pid>/cgroup names no such cgroup). A cell
 * allocates until the kernel's out-of-memory killer takes the kernel; the
 * restarted kernel's helper reports the cgroup's oom_kill count one higher,
 * and the panel says as fact that the out-of-memory killer killed it.
 */
import { expect, test } from '@jupyterlab/galata';
import * as fs from 'fs';

import { openLiveNotebook, sidebarRole, startCell } from './helpers';

test.use({ kernels: null });

/**
 * The memory limit of the cgroup jupyter_server_test_config.py made for the
 * server (named vram-ui-kernels-*), where the kernel `pid` runs in it; null
 * where it does not. Read from /proc and the cgroup mount, not from the panel:
 * whether the test runs must not hang on the figure it checks.
 */
function testCgroupLimit(pid: number): number | null {
  let lines: string[];
  try {
    lines = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n');
  } catch {
    return null;
  }
  for (const line of lines) {
    // "0::/path" (v2) or "4:memory:/path" (v1)
    const [, controllers, cgroupPath] = line.split(':');
    if (!cgroupPath || !/\/vram-ui-kernels-[^/]*$/.test(cgroupPath)) {
      continue;
    }
    const file =
      controllers === ''
        ? `/sys/fs/cgroup${cgroupPath}/memory.max`
        : controllers.split(',').includes('memory')
          ? `/sys/fs/cgroup/memory${cgroupPath}/memory.limit_in_bytes`
          : null;
    if (file === null) {
      continue;
    }
    const limit = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isFinite(limit) ? limit : null;
  }
  return null;
}

test('a kernel killed at its container limit is said to be OOM-killed, as fact', async ({
  page
}) => {
  await openLiveNotebook(page);
  const live = (await sidebarRole(page, 'state').textContent()) ?? '';
  const pid = Number(/kernel process (\d+)/.exec(live)?.[1]);
  expect(pid).toBeGreaterThan(1);
  const limit = testCgroupLimit(pid);
  test.skip(
    limit === null,
    'the kernels do not run in the test cgroup here (VRAM_UI_KERNEL_MEMORY_LIMIT unset, or no cgroup could be made)'
  );
  // The kernel runs under that limit: the Host RAM card must show it (or a tighter one
  // above it on the cgroup path, such as the machine's container's).
  const limitRow = sidebarRole(page, 'host-container-limit');
  await expect(limitRow).toHaveCount(1);
  await expect
    .poll(
      async () =>
        Number((await limitRow.getAttribute('data-vram-bytes')) ?? NaN),
      { timeout: 30_000 }
    )
    .toBeGreaterThan(0);
  expect(
    Number(await limitRow.getAttribute('data-vram-bytes'))
  ).toBeLessThanOrEqual(limit!);
  await expect(
    page.locator('#jp-vram-sidebar .jp-vram-Card-subtitle').first()
  ).toContainText('of container limit');

  await startCell(
    page,
    0,
    'import time\nhog = []\nwhile True:\n    hog.append(b"\\x01" * (16 << 20))\n    time.sleep(0.02)'
  );
  const death = sidebarRole(page, 'kernel-death');
  await expect(death).toBeVisible({ timeout: 120_000 });
  // The restarted kernel's first sample brings the evidence.
  await expect(death).toHaveAttribute('data-vram-verdict', 'oom-killed', {
    timeout: 60_000
  });
  await expect(sidebarRole(page, 'kernel-death-summary')).toContainText(
    /while its RAM was [\d.]+ (MiB|GiB), with [\d.]+ (B|KiB|MiB|GiB) more available \(container limit [\d.]+ (MiB|GiB)\): the out-of-memory killer killed it \(memory\.(events|oom_control) oom_kill\)\./
  );
  await expect(sidebarRole(page, 'kernel-death-cell')).toHaveText(
    'Cell [1] was running.'
  );
  await expect(
    page
      .locator('.Toastify__toast')
      .filter({ hasText: 'was killed by the out-of-memory killer' })
  ).toBeVisible();
  await expect(
    page
      .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')
      .nth(0)
      .locator('[data-vram-role="cell-death-badge"]')
  ).toHaveAttribute('data-vram-verdict', 'oom-killed');
});
