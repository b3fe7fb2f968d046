/**
 * One plugin per feature, against a real `jupyter lab`: a feature switched
 * off (as JupyterLab's plugin manager does, through the page config's
 * disabled extensions) takes its tab and commands away and leaves the rest
 * working; and another extension adds a tab of its own to the memory panel
 * through the public IVramSidebar token.
 */
import { expect, test } from '@jupyterlab/galata';

import {
  disableInPageConfig,
  openLiveNotebook,
  sidebarRole,
  SIDEBAR
} from './helpers';

test.use({ kernels: null });

test('with the Kernels plugin switched off, the other features keep working', async ({
  page
}) => {
  await page.addInitScript(disableInPageConfig(['jupyterlab-vram:kernels']));
  await page.goto();
  const activated = await page.evaluate(() => ({
    kernels: (window.jupyterapp as any).isPluginActivated(
      'jupyterlab-vram:kernels'
    ),
    cells: (window.jupyterapp as any).isPluginActivated('jupyterlab-vram:cells')
  }));
  expect(activated).toEqual({ kernels: false, cells: true });
  await openLiveNotebook(page);
  // The Memory tab is live with the host's figure; no Kernels tab, nor its command.
  await expect(sidebarRole(page, 'host-rss')).toHaveText(/\d/);
  await expect(sidebarRole(page, 'kernels-tab')).toHaveCount(0);
  expect(
    await page.evaluate(() =>
      window.jupyterapp.commands.hasCommand('jupyterlab-vram:shutdown-kernel')
    )
  ).toBe(false);
  // The other tabs are there and work: a cell's run reaches the Cells tab.
  await page.notebook.setCell(0, 'code', 'x = 1');
  await page.notebook.runCell(0);
  await sidebarRole(page, 'cells-tab').click();
  await expect(sidebarRole(page, 'cell-row')).toHaveCount(1);
  await sidebarRole(page, 'holders-tab').click();
  await expect(sidebarRole(page, 'action-inspect')).toBeVisible();
});

test('another extension adds a tab through IVramSidebar, loaded when first shown', async ({
  page
}) => {
  await openLiveNotebook(page);
  await page.evaluate(async () => {
    const sidebar: any = await (window as any).galata.getPlugin(
      'jupyterlab-vram:sidebar'
    );
    // A Lumino Widget of the page's own Lumino, as another extension has it:
    // the sidebar's class extends Panel, which extends Widget.
    const Panel = Object.getPrototypeOf(sidebar.constructor);
    const Widget = Object.getPrototypeOf(Panel);
    (window as any).vramExtraLoads = 0;
    sidebar.addTab({
      id: 'extra',
      label: 'Extra',
      rank: 1000,
      load: async () => {
        (window as any).vramExtraLoads++;
        const widget = new Widget();
        widget.node.dataset.vramRole = 'extra-content';
        widget.node.textContent = 'Hello from another extension';
        return widget;
      }
    });
  });
  const tab = sidebarRole(page, 'extra-tab');
  await expect(tab).toHaveText('Extra');
  // Last by rank, after the Kernels tab.
  await expect(page.locator(`${SIDEBAR} .jp-vram-Tab`).last()).toHaveText(
    'Extra'
  );
  expect(await page.evaluate(() => (window as any).vramExtraLoads)).toBe(0);
  await tab.click();
  await expect(sidebarRole(page, 'extra-content')).toHaveText(
    'Hello from another extension'
  );
  await expect(sidebarRole(page, 'timeline')).toBeHidden();
  await sidebarRole(page, 'memory-tab').click();
  await expect(sidebarRole(page, 'extra-content')).toBeHidden();
  await tab.click();
  expect(await page.evaluate(() => (window as any).vramExtraLoads)).toBe(1);
});
