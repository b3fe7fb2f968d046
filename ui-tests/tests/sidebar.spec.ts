/**
 * The memory sidebar against a real `jupyter lab`, a real ipykernel and real
 * (CPU) PyTorch, in Debian's Chromium.
 */
import { expect, test } from '@jupyterlab/galata';
import * as path from 'path';

import {
  badgeOf,
  bytesOf,
  commsInKernel,
  holdUntilReleased,
  MiB,
  openInNewTab,
  openInPage,
  openLiveNotebook,
  openSidebar,
  releaseCell,
  reloadPage,
  restartKernel,
  SIDEBAR,
  sidebarRole,
  startCell,
  waitForBytes,
  waitForState
} from './helpers';

// The README's screenshots are rewritten only when asked for
// (UPDATE_SCREENSHOTS=1); otherwise the same shots go to the test results,
// and a test run leaves the checkout as it found it.
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.resolve(__dirname, '..', '..', 'docs', 'images')
  : path.resolve(__dirname, '..', 'test-results', 'screenshots');

// Galata intercepts the kernels API to track kernels, and its pattern also
// catches POST /api/kernels/<id>/restart, answering 201 instead of the
// server's 200; JupyterLab then treats the restart as failed and never
// reconnects. Without the interception Galata still cleans up the sessions.
test.use({ kernels: null });

test.describe('memory sidebar', () => {
  test('says there is no notebook before one is open', async ({ page }) => {
    await openSidebar(page);
    await waitForState(page, 'no-notebook');
    await expect(sidebarRole(page, 'state')).toContainText(/notebook/i);
  });

  test("the keyboard moves between the tabs, and picks the timeline's span", async ({
    page
  }) => {
    await openLiveNotebook(page);
    await sidebarRole(page, 'memory-tab').focus();
    await page.keyboard.press('ArrowRight');
    await expect(sidebarRole(page, 'cells-tab')).toBeFocused();
    await expect(sidebarRole(page, 'cells-tab')).toHaveAttribute(
      'aria-selected',
      'true'
    );
    await expect(sidebarRole(page, 'timeline')).toBeHidden();
    await page.keyboard.press('End');
    await expect(sidebarRole(page, 'kernels-tab')).toHaveAttribute(
      'aria-selected',
      'true'
    );
    await page.keyboard.press('Home');
    await expect(sidebarRole(page, 'memory-tab')).toHaveAttribute(
      'aria-selected',
      'true'
    );
    await expect(sidebarRole(page, 'timeline')).toBeVisible();
    // The span is a setting: picked here, it is what the Settings Editor shows.
    await sidebarRole(page, 'timeline-window').selectOption('120');
    await expect
      .poll(() =>
        page.evaluate(async () => {
          const settings =
            await window.jupyterapp.serviceManager.settings.fetch(
              'jupyterlab-vram:plugin'
            );
          return (settings.settings as any)?.timelineWindowMinutes ?? null;
        })
      )
      .toBe(120);
    await expect(sidebarRole(page, 'timeline-window')).toHaveValue('120');
    await sidebarRole(page, 'timeline-window').selectOption('5'); // as the other tests expect it
  });

  test('goes live for a Python notebook and says what it cannot see', async ({
    page
  }) => {
    await openLiveNotebook(page);
    expect(await bytesOf(page, 'host-rss')).toBeGreaterThan(10 * MiB);
    expect(await bytesOf(page, 'host-total')).toBeGreaterThan(
      await bytesOf(page, 'host-available')
    );
    // This machine has no GPU: the panel must say it accounts RAM only.
    await expect(
      sidebarRole(page, 'note').filter({ hasText: /no gpu/i })
    ).toBeVisible();
    await expect(page.locator('[data-vram-role="status-item"]')).toContainText(
      /RAM/
    );
    await expect(sidebarRole(page, 'timeline')).toBeVisible();
    // Under the cursor, the legend names the time of day, 24-hour, without a date.
    const chart = page.locator(
      `${SIDEBAR} [data-vram-role="timeline"] .u-over`
    );
    await expect(chart).toBeVisible({ timeout: 30_000 });
    const box = (await chart.boundingBox())!;
    await page.mouse.move(box.x + box.width - 4, box.y + box.height / 2);
    await expect(
      page
        .locator(`${SIDEBAR} [data-vram-role="timeline"] .u-legend .u-series`)
        .first()
    ).toHaveText(/^Time\s*\d\d:\d\d:\d\d$/);
  });

  test('opened after its notebook went live, the panel says what it cannot see', async ({
    page
  }) => {
    // The notes' wording loads with the panel: a model live before that
    // derives them when the panel first reads them.
    await page.notebook.createNew();
    await expect(page.locator('[data-vram-role="status-item"]')).toContainText(
      /RAM \d/
    );
    expect(await page.locator('.jp-vram-MemorySidebar').count()).toBe(0); // the panel is not loaded yet
    await openSidebar(page);
    await waitForState(page, 'live');
    // At once: not at the next sample (an idle kernel's may be 10 s away).
    expect(
      await sidebarRole(page, 'note')
        .filter({ hasText: /no gpu/i })
        .count()
    ).toBe(1);
  });

  test('a cell that allocates memory moves the RAM figure, and del brings it back', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(0, 'code', 'import torch');
    await page.notebook.runCell(0, true);
    const before = await waitForBytes(page, 'host-rss', b => b > 0);

    await page.notebook.addCell(
      'code',
      'x = torch.ones(50_000_000)  # 200 MB, every page written'
    );
    await page.notebook.runCell(1, true);
    const grown = await waitForBytes(
      page,
      'host-rss',
      b => b > before + 150 * MiB
    );

    await page.notebook.addCell('code', 'del x');
    await page.notebook.runCell(2, true);
    await waitForBytes(page, 'host-rss', b => b < grown - 150 * MiB);
  });

  test('stays live while a long cell runs', async ({ page }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(0, 'code', 'import time, torch');
    await page.notebook.runCell(0, true);
    const before = await waitForBytes(page, 'host-rss', b => b > 0);

    await page.notebook.addCell(
      'code',
      [
        'held = []',
        'for _ in range(4):',
        '    held.append(torch.ones(25_000_000))  # +100 MB',
        '    time.sleep(2)'
      ].join('\n')
    );
    await startCell(page, 1, await page.notebook.getCellTextInput(1));
    await expect(sidebarRole(page, 'kernel-busy')).toBeVisible({
      timeout: 10_000
    });
    // The figure grows while the kernel is still busy with the same cell.
    await waitForBytes(page, 'host-rss', b => b > before + 150 * MiB, 10_000);
    await expect(sidebarRole(page, 'kernel-busy')).toBeVisible();
    await page.notebook.waitForRun(1);
    await expect(sidebarRole(page, 'kernel-busy')).toBeHidden();
  });

  test("the helper's comm stays on the kernel's main shell, behind running cells", async ({
    page
  }) => {
    // JupyterLab 4.4+ gives a comm a subshell per comm target where the
    // kernel has subshells (ipykernel 7 does): requests would then run on
    // another thread beside the user's cell.
    await openLiveNotebook(page);
    const subshells = await page.evaluate(async () => {
      const kernel = (window.jupyterapp.shell.currentWidget as any)
        .sessionContext.session.kernel;
      await kernel.info;
      const reply = await kernel.requestListSubshell({}).done;
      return {
        supported: kernel.supportsSubshells as boolean,
        ids: reply.content.subshell_id as string[]
      };
    });
    expect(subshells.supported).toBe(true); // else this test proves nothing
    expect(subshells.ids).toEqual([]);

    // The setting changed at run time: JupyterLab sets it on every open comm.
    const afterChange = await page.evaluate(async () => {
      const kernel = (window.jupyterapp.shell.currentWidget as any)
        .sessionContext.session.kernel;
      const before = kernel.commsOverSubshells;
      kernel.commsOverSubshells = 'perComm';
      try {
        await new Promise(resolve => setTimeout(resolve, 1500)); // a subshell request would be answered by now
        const reply = await kernel.requestListSubshell({}).done;
        return reply.content.subshell_id as string[];
      } finally {
        kernel.commsOverSubshells = before;
      }
    });
    expect(afterChange).toEqual([]);
  });

  test('a notebook closed and opened again while its kernel runs on leaves one comm in the kernel', async ({
    page
  }) => {
    await openLiveNotebook(page);
    const path = await page.evaluate(
      () =>
        (window.jupyterapp.shell.currentWidget as any).context.path as string
    );
    for (let round = 0; round < 2; round++) {
      // Closing the tab leaves the kernel running (JupyterLab's default).
      await page.evaluate(() => window.jupyterapp.shell.currentWidget!.close());
      await openInPage(page, path);
    }
    expect(await commsInKernel(page)).toBe(1);
  });

  test('a connection to the kernel lost and made again leaves one comm in the kernel', async ({
    page
  }) => {
    await openLiveNotebook(page);
    for (let round = 0; round < 2; round++) {
      await page.evaluate(async () => {
        const kernel = (window.jupyterapp.shell.currentWidget as any)
          .sessionContext.session.kernel;
        await kernel.reconnect();
      });
      await waitForState(page, 'live');
    }
    // The comm of the lost connection is closed by the one that replaces it.
    await expect.poll(() => commsInKernel(page)).toBe(1);
  });

  test('recovers after a kernel restart', async ({ page }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(
      0,
      'code',
      'import torch\nx = torch.ones(50_000_000)'
    );
    await page.notebook.runCell(0, true);
    const big = await waitForBytes(page, 'host-rss', b => b > 200 * MiB);

    const restartedAt = Date.now() / 1000; // this machine's clock is the kernel's
    await restartKernel(page);
    await waitForState(page, 'live');
    // A fresh process, without torch and the tensor: far less resident memory.
    await waitForBytes(page, 'host-rss', b => b < big - 150 * MiB);
    // The timeline keeps the first process's figures, and marks the restart.
    const timeline = sidebarRole(page, 'timeline');
    await expect(timeline).toHaveAttribute('data-vram-restarts', '1');
    expect(Number(await timeline.getAttribute('data-vram-from'))).toBeLessThan(
      restartedAt
    );
  });

  test('the timeline survives a page reload', async ({ page }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(
      0,
      'code',
      "held = bytearray(b'\\x01') * (300 * 2**20)"
    );
    await page.notebook.runCell(0, true);
    await waitForBytes(page, 'host-rss', b => b > 300 * MiB);
    await page.notebook.save();
    const path = await page.evaluate(
      () =>
        (window.jupyterapp.shell.currentWidget as any).context.path as string
    );
    const timeline = page.locator(`${SIDEBAR} [data-vram-role="timeline"]`);
    const before = Number(await timeline.getAttribute('data-vram-points'));
    const reloadedAt = Date.now() / 1000; // this machine's clock is the kernel's

    await reloadPage(page);
    await openInPage(page, path);
    // The kernel's helper sent the samples the first page charted: the new
    // page charts them too, from before the reload, the 300 MiB included.
    await expect
      .poll(async () => Number(await timeline.getAttribute('data-vram-points')))
      .toBeGreaterThan(before);
    expect(Number(await timeline.getAttribute('data-vram-from'))).toBeLessThan(
      reloadedAt - 1
    );
    // The first page's comm is closed, not left for the helper to keep sending to.
    expect(await commsInKernel(page)).toBe(1);
  });

  test('an earlier kernel process stays on the timeline after a restart and a reload', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(
      0,
      'code',
      "held = bytearray(b'\\x01') * (300 * 2**20)"
    );
    await page.notebook.runCell(0, true);
    const big = await waitForBytes(page, 'host-rss', b => b > 300 * MiB);
    await page.notebook.save();
    const path = await page.evaluate(
      () =>
        (window.jupyterapp.shell.currentWidget as any).context.path as string
    );
    const restartedAt = Date.now() / 1000; // this machine's clock is the kernel's
    await restartKernel(page);
    await waitForState(page, 'live');
    await waitForBytes(page, 'host-rss', b => b < big - 150 * MiB);
    const timeline = page.locator(`${SIDEBAR} [data-vram-role="timeline"]`);
    await expect(timeline).toHaveAttribute('data-vram-restarts', '1');

    await reloadPage(page);
    await openInPage(page, path);
    // The new process's helper knows nothing of the first one: its figures
    // and the restart come back from this browser's storage.
    await expect(timeline).toHaveAttribute('data-vram-restarts', '1');
    expect(Number(await timeline.getAttribute('data-vram-from'))).toBeLessThan(
      restartedAt
    );
  });

  test('a page reloaded while a cell runs is live before the cell ends', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.save();
    const path = await page.evaluate(
      () =>
        (window.jupyterapp.shell.currentWidget as any).context.path as string
    );
    // The cell holds 300 MiB, then keeps the kernel busy: this page's comm
    // to the helper waits until it ends.
    await startCell(
      page,
      0,
      "import time\nheld = bytearray(b'\\x01') * (300 * 2**20)\ntime.sleep(40)\n'done'"
    );
    await waitForBytes(page, 'host-rss', b => b > 300 * MiB);

    await reloadPage(page);
    await openInPage(page, path, 'overheard');
    const state = sidebarRole(page, 'state');
    // Live from the samples the helper sends the first page's comm, with the
    // 300 MiB, while the cell still runs; no request can be made yet.
    await expect(state).toContainText('by way of another connection');
    await expect(sidebarRole(page, 'action-free-memory')).toBeDisabled();
    expect(await bytesOf(page, 'host-rss')).toBeGreaterThan(300 * MiB);
    const heardAt = Number(
      await sidebarRole(page, 'timeline').getAttribute('data-vram-points')
    );
    await expect
      .poll(async () =>
        Number(
          await sidebarRole(page, 'timeline').getAttribute('data-vram-points')
        )
      )
      .toBeGreaterThan(heardAt);

    // The cell ends: the page's own comm opens, and the first page's is closed.
    await expect(state).toContainText(/^Live: kernel process/, {
      timeout: 60_000
    });
    expect(await commsInKernel(page)).toBe(1);
  });

  test('a second tab follows a restart made in the first, and keeps a running cell busy when a third reloads', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.save();
    const path = await page.evaluate(
      () =>
        (window.jupyterapp.shell.currentWidget as any).context.path as string
    );
    const second = await openInNewTab(page, path, 'vram-second-tab');
    const pidOf = async (p: typeof second) =>
      /kernel process (\d+)/.exec(
        (await p
          .locator(`${SIDEBAR} [data-vram-role="state"]`)
          .textContent()) ?? ''
      )?.[1];
    const firstPid = await pidOf(second);
    expect(firstPid).toBe(await pidOf(page));

    // A cell runs, started in the first tab: both say the kernel is busy.
    await startCell(page, 0, 'import time\ntime.sleep(30)');
    const busyNote = (p: typeof second) =>
      p.locator(`${SIDEBAR} [data-vram-role="kernel-busy"]`);
    await expect(busyNote(page)).toBeVisible();
    await expect(busyNote(second)).toBeVisible();
    // A third tab opens the notebook and reloads: JupyterLab's status says
    // idle for its subshell requests, yet the cell still runs.
    // (Opened mid-cell, it shows the figures heard on the others' comms:
    // its request for the kernel's info waits behind the cell.)
    const third = await openInNewTab(page, path, 'vram-third-tab', 'overheard');
    await reloadPage(third);
    await openInPage(third, path, 'overheard');
    await expect(busyNote(page)).toBeVisible();
    await expect(busyNote(second)).toBeVisible();

    // The first tab restarts the kernel (interrupting the cell): the second
    // tab hears the new process's helper and follows at once (not after its
    // silence watch), with the restart marked on its timeline. So does the
    // third, whose info request went with the old process.
    await restartKernel(page);
    await waitForState(page, 'live');
    const newPid = await pidOf(page);
    expect(newPid).not.toBe(firstPid);
    await expect.poll(() => pidOf(second), { timeout: 10_000 }).toBe(newPid);
    await expect(
      second.locator(`${SIDEBAR} [data-vram-role="timeline"]`)
    ).toHaveAttribute('data-vram-restarts', '1');
    await expect.poll(() => pidOf(third), { timeout: 10_000 }).toBe(newPid);
    await expect(
      third.locator(`${SIDEBAR} [data-vram-role="state"]`)
    ).toHaveAttribute('data-vram-state', 'live');
    await second.close();
    await third.close();
  });

  test('a tab whose helper waits behind a cell follows a restart made in another', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.save();
    const path = await page.evaluate(
      () =>
        (window.jupyterapp.shell.currentWidget as any).context.path as string
    );
    const second = await openInNewTab(page, path, 'vram-waiting-tab');
    const stateOf = (p: typeof second) =>
      p.locator(`${SIDEBAR} [data-vram-role="state"]`);
    const pidOf = async (p: typeof second) =>
      /kernel process (\d+)/.exec((await stateOf(p).textContent()) ?? '')?.[1];
    await startCell(page, 0, 'import time\ntime.sleep(60)');
    await expect(
      second.locator(`${SIDEBAR} [data-vram-role="kernel-busy"]`)
    ).toBeVisible();
    // The second tab's connection drops and comes back: its helper is
    // delivered anew (the kernel's info is known), queued behind the cell.
    await second.evaluate(async () => {
      const kernel = (window.jupyterapp.shell.currentWidget as any)
        .sessionContext.session.kernel;
      await kernel.reconnect();
    });
    await expect(stateOf(second)).toHaveAttribute(
      'data-vram-state',
      'overheard'
    );

    // The first tab restarts the kernel: what the second one sent went with
    // the old process, and it hears no status of the restart.
    await restartKernel(page);
    await waitForState(page, 'live');
    const newPid = await pidOf(page);
    await expect.poll(() => pidOf(second), { timeout: 10_000 }).toBe(newPid);
    await expect(stateOf(second)).toHaveAttribute('data-vram-state', 'live');
    expect(await commsInKernel(page)).toBe(2);
    await second.close();
  });

  test('a helper the kernel skipped behind a failing cell is started again', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.save();
    const path = await page.evaluate(
      () =>
        (window.jupyterapp.shell.currentWidget as any).context.path as string
    );
    const second = await openInNewTab(page, path, 'vram-skipped-tab');
    const stateOf = (p: typeof second) =>
      p.locator(`${SIDEBAR} [data-vram-role="state"]`);
    // The cell runs until the test lets it fail (a sleep would race the
    // steps below on a slow machine: the bootstrap must queue behind it).
    await startCell(
      page,
      0,
      `${holdUntilReleased('fail-the-cell')}\nraise ValueError("the cell fails")`
    );
    await expect(
      second.locator(`${SIDEBAR} [data-vram-role="kernel-busy"]`)
    ).toBeVisible();
    // Every bootstrap the second tab sends, with the kernel's answer.
    await second.evaluate(() => {
      const w = window as any;
      w.vramBootstraps = [] as string[];
      const kernel =
        w.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
      const send = kernel.requestExecute.bind(kernel);
      kernel.requestExecute = (content: any, ...rest: unknown[]) => {
        const future = send(content, ...rest);
        // The helper's bootstrap: the user expression of an empty silent cell.
        if (
          content.silent &&
          content.user_expressions?.jupyterlab_vram_bootstrap
        ) {
          const i = w.vramBootstraps.push('sent') - 1;
          future.done.then(
            (reply: any) => (w.vramBootstraps[i] = reply.content.status),
            () => (w.vramBootstraps[i] = 'failed')
          );
        }
        return future;
      };
    });
    const bootstraps = () =>
      second.evaluate(() => (window as any).vramBootstraps as string[]);
    // A connection blip in the second tab: its helper is delivered anew, queued behind the cell.
    await second.evaluate(async () => {
      const kernel = (window.jupyterapp.shell.currentWidget as any)
        .sessionContext.session.kernel;
      await kernel.reconnect();
    });
    await expect.poll(bootstraps).toEqual(['sent']);
    await expect(stateOf(second)).toHaveAttribute(
      'data-vram-state',
      /^(bootstrapping|overheard)$/
    );

    // The cell fails: ipykernel skips the execute requests queued behind it, the
    // second tab's bootstrap included. The tab sends it again.
    await releaseCell(page, 'fail-the-cell');
    await expect(stateOf(second)).toHaveAttribute('data-vram-state', 'live', {
      timeout: 30_000
    });
    await expect.poll(bootstraps).toEqual(['aborted', 'ok']);
    expect(await commsInKernel(page)).toBe(2); // the skipped delivery's comm was closed
    await second.close();
  });

  test('screenshots for the README, light and dark', async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.sidebar.close('left');
    await openLiveNotebook(page);
    await page.notebook.setCell(
      0,
      'code',
      'import torch, time\nmodel_weights = torch.ones(64 * 2**20)  # 256 MiB'
    );
    await page.notebook.runCell(0, true);
    await page.notebook.addCell(
      'code',
      'batches = []\nfor _ in range(6):\n    batches.append(torch.ones(8 * 2**20))\n    time.sleep(0.7)'
    );
    await page.notebook.runCell(1, true);
    // What the shots show is checked first: a README picture of a panel that is not live,
    // or of cells without figures, would pass for one.
    await waitForState(page, 'live');
    for (const i of [0, 1]) {
      await expect(badgeOf(page, i)).toHaveAttribute('data-vram-status', 'ok');
    }
    await waitForBytes(page, 'host-rss', b => b > 256 * MiB + 6 * 32 * MiB);
    await expect(sidebarRole(page, 'timeline')).toBeVisible();
    await page.waitForTimeout(1500);
    await page
      .locator(SIDEBAR)
      .screenshot({ path: path.join(SCREENSHOTS, 'sidebar-light.png') });
    await page.screenshot({
      path: path.join(SCREENSHOTS, 'jupyterlab-light.png')
    });
    await page.locator(`${SIDEBAR} [data-vram-role="cells-tab"]`).click();
    await expect(
      page.locator(`${SIDEBAR} [data-vram-role="cell-row"]:not([hidden])`)
    ).toHaveCount(2);
    await page
      .locator(SIDEBAR)
      .screenshot({ path: path.join(SCREENSHOTS, 'cells-light.png') });
    await page.locator(`${SIDEBAR} [data-vram-role="memory-tab"]`).click();
    await expect(sidebarRole(page, 'timeline')).toBeVisible();
    await page.theme.setDarkTheme();
    await page.waitForTimeout(1000);
    await page
      .locator(SIDEBAR)
      .screenshot({ path: path.join(SCREENSHOTS, 'sidebar-dark.png') });
    await page.screenshot({
      path: path.join(SCREENSHOTS, 'jupyterlab-dark.png')
    });
    await page.theme.setLightTheme();
  });
});
