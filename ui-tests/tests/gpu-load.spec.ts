/**
 * The GPU's load beside its memory, in the browser: the GPU card's figures,
 * the cell badge's utilisation, the Cells tab's load columns and their sort,
 * and the "input-bound?" hint with its snippet. The kernels see the stand-in
 * card of tests/fake_nvml (busy at 87 % SM, 300 W of 700 W, held back by the
 * power cap), so this runs only with VRAM_UI_FAKE_NVML=1.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import {
  badgeOf,
  openLiveNotebook,
  showCellHistory,
  SIDEBAR,
  sidebarRole
} from './helpers';

// See cells.spec.ts: Galata's kernel tracking breaks restarts.
test.use({ kernels: null });

test.skip(
  process.env.VRAM_UI_FAKE_NVML !== '1',
  'needs the stand-in NVML card: run with VRAM_UI_FAKE_NVML=1'
);

/** Drags the right sidebar's edge `by` px to the left, so that every column of the Cells table shows. */
async function widenSidebar(
  page: IJupyterLabPageFixture,
  by: number
): Promise<void> {
  const handle = page
    .locator('#jp-main-split-panel > .lm-SplitPanel-handle:not(.lm-mod-hidden)')
    .last();
  const box = (await handle.boundingBox())!;
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width / 2, y);
  await page.mouse.down();
  await page.mouse.move(box.x - by, y, { steps: 8 });
  await page.mouse.up();
}

function row(page: IJupyterLabPageFixture, count: number) {
  return page.locator(
    `${SIDEBAR} [data-vram-role="cell-row"][data-vram-execution-count="${count}"]`
  );
}

test.describe('GPU load', () => {
  test("the GPU card shows the card's load and the kernel's share", async ({
    page
  }) => {
    await openLiveNotebook(page);
    await expect(sidebarRole(page, 'gpu-load-sm')).toHaveText('87%');
    await expect(sidebarRole(page, 'gpu-load-bandwidth')).toHaveText('41%');
    await expect(sidebarRole(page, 'gpu-load-power')).toHaveText(
      '300 W of 700 W (43%)'
    );
    await expect(sidebarRole(page, 'gpu-load-temperature')).toHaveText(
      '64 \u00b0C'
    );
    await expect(sidebarRole(page, 'gpu-load-clocks')).toHaveText(
      'SM 1980 MHz · memory 2619 MHz'
    );
    await expect(sidebarRole(page, 'gpu-load-throttle')).toHaveText(
      'power cap'
    );
    // PCIe and the per-process figures are read every 10 s, the first PCIe
    // reading 10 s after the comm opened; a heartbeat brings them.
    await expect(sidebarRole(page, 'gpu-load-pcie')).toHaveText(
      'TX 1.00 MB/s · RX 2.00 MB/s',
      { timeout: 45_000 }
    );
    await expect(sidebarRole(page, 'gpu-load-share')).toHaveText(
      'SM 87%; other processes 0%',
      { timeout: 45_000 }
    );
    await expect(
      sidebarRole(page, 'gpu-load-share').locator('..')
    ).toHaveAttribute('title', /\(this kernel\): SM 87%/);
  });

  test('the badge shows the utilisation, the Cells tab sorts by load and energy', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(0, 'code', 'import time; time.sleep(2.5)');
    await page.notebook.addCell('code', 'time.sleep(0.5)');
    await page.notebook.run();
    const badge = badgeOf(page, 0);
    await expect(badge).toHaveAttribute('data-vram-gpu-mean', '87');
    await expect(badge).toContainText('GPU 87%');
    await expect(badge).toHaveAttribute('data-vram-gpu-coverage', 'full');
    // The stand-in card is held back by its power cap: the hint says so.
    await expect(badge).toHaveAttribute('data-vram-hints', 'throttled');
    await expect(badge).toHaveAttribute('title', /held back by: power cap/);
    await expect(badge).toHaveAttribute('title', /Throttled: .*power/);

    await showCellHistory(page);
    await widenSidebar(page, 260);
    for (const key of ['gpu_mean', 'gpu_max', 'energy']) {
      await expect(
        page.locator(`${SIDEBAR} [data-vram-sort-key="${key}"]`)
      ).toBeVisible();
    }
    await expect(row(page, 2)).toHaveAttribute('data-vram-gpu-mean', '87');
    // 300 W for 2.5 s: 750 J, give or take the hooks' time.
    const energy = Number(
      await row(page, 1).getAttribute('data-vram-energy-j')
    );
    expect(energy).toBeGreaterThan(600);
    expect(energy).toBeLessThan(1200);
    const header = page.locator(`${SIDEBAR} [data-vram-sort-key="energy"]`);
    await header.click();
    await expect(header).toHaveAttribute('aria-sort', 'descending');
    const order = () =>
      page
        .locator(`${SIDEBAR} [data-vram-role="cell-row"]:not([hidden])`)
        .evaluateAll(els =>
          els.map(el => el.getAttribute('data-vram-execution-count'))
        );
    expect(await order()).toEqual(['1', '2']);
    await header.click();
    await expect(header).toHaveAttribute('aria-sort', 'ascending');
    expect(await order()).toEqual(['2', '1']);
    await page.locator(`${SIDEBAR} [data-vram-sort-key="gpu_mean"]`).click();
    await expect(
      page.locator(`${SIDEBAR} [data-vram-sort-key="gpu_mean"]`)
    ).toHaveAttribute('aria-sort', 'descending');
  });

  test('a long cell on an idle card asks "input-bound?" and offers the DataLoader snippet', async ({
    page
  }) => {
    await openLiveNotebook(page);
    // VRAM_FAKE_NVML_SM_PERCENT sets the card's load for a whole server (the
    // kernels inherit the server's environment); this test needs an idle
    // card beside the busy one of the others, so it sets the stand-in
    // module's figure in its own kernel, where the helper reads it.
    await page.notebook.setCell(
      0,
      'code',
      'import pynvml, time; pynvml.SM_PERCENT = 5'
    );
    await page.notebook.addCell('code', 'time.sleep(10.5)');
    await page.notebook.run();
    const badge = badgeOf(page, 1);
    await expect(badge).toHaveAttribute('data-vram-hints', /input-bound/, {
      timeout: 30_000
    });
    await expect(badge).toContainText('GPU 5% · input-bound?');
    await expect(badge).toHaveAttribute('title', /Input-bound\?/);

    await showCellHistory(page);
    await row(page, 2).click();
    const detail = sidebarRole(page, 'cell-load-detail');
    await expect(detail).toBeVisible();
    await expect(
      detail.locator(
        '[data-vram-role="cell-hint"][data-vram-hint="input-bound"]'
      )
    ).toContainText('Input-bound?');
    await detail
      .locator('[data-vram-role="insert-dataloader-snippet"]')
      .click();
    // The snippet goes below the cell whose row was clicked.
    await expect
      .poll(() =>
        page.evaluate(() => {
          const panel = window.jupyterapp.shell.currentWidget as any;
          return panel.content.model.sharedModel.cells.map((c: any) =>
            c.getSource()
          );
        })
      )
      .toEqual([
        'import pynvml, time; pynvml.SM_PERCENT = 5',
        'time.sleep(10.5)',
        expect.stringContaining('pin_memory')
      ]);
  });

  test('the timeline offers the load lines, off by default', async ({
    page
  }) => {
    await openLiveNotebook(page);
    const sm = sidebarRole(page, 'timeline-load-sm');
    const power = sidebarRole(page, 'timeline-load-power');
    await expect(sm).not.toBeChecked();
    await expect(power).not.toBeChecked();
    await sm.check();
    await power.check();
    await expect(
      page.locator(`${SIDEBAR} .u-legend`).getByText('GPU 0 utilisation')
    ).toBeVisible();
    await expect(
      page.locator(`${SIDEBAR} .u-legend`).getByText('GPU 0 power')
    ).toBeVisible();
  });
});
