/**
 * Shared steps of the browser tests: they read the sidebar through the
 * `data-vram-*` hooks the views render, never through styling.
 */
import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator, Page } from '@playwright/test';

export const SIDEBAR = '#jp-vram-sidebar';

export function sidebarRole(
  page: IJupyterLabPageFixture,
  role: string
): Locator {
  return page.locator(`${SIDEBAR} [data-vram-role="${role}"]`);
}

export async function openSidebar(page: IJupyterLabPageFixture): Promise<void> {
  await page.evaluate(async () => {
    await window.jupyterapp.commands.execute('jupyterlab-vram:open-sidebar');
  });
  await expect(page.locator(SIDEBAR)).toBeVisible();
}

export async function waitForState(
  page: IJupyterLabPageFixture,
  state: string,
  timeout = 60_000
): Promise<void> {
  await expect(sidebarRole(page, 'state')).toHaveAttribute(
    'data-vram-state',
    state,
    { timeout }
  );
}

/** The bytes a figure shows, from its machine-readable attribute. */
export async function bytesOf(
  page: IJupyterLabPageFixture,
  role: string
): Promise<number> {
  const value = await sidebarRole(page, role)
    .first()
    .getAttribute('data-vram-bytes');
  if (value === null) {
    throw new Error(`figure ${role} is unknown`);
  }
  return Number(value);
}

/** Waits until `predicate` holds for the figure `role`, and returns it. */
export async function waitForBytes(
  page: IJupyterLabPageFixture,
  role: string,
  predicate: (bytes: number) => boolean,
  timeout = 30_000
): Promise<number> {
  let last = NaN;
  await expect
    .poll(
      async () => {
        last = await bytesOf(page, role).catch(() => NaN);
        return predicate(last);
      },
      { timeout, message: `figure ${role} (last seen ${last})` }
    )
    .toBe(true);
  return last;
}

/** Types `source` into the first cell and starts it, without waiting for it to end. */
export async function startCell(
  page: IJupyterLabPageFixture,
  index: number,
  source: string
): Promise<void> {
  await page.notebook.setCell(index, 'code', source);
  await page.notebook.selectCells(index);
  await page.evaluate(async () => {
    // Not awaited: the command resolves only when the cell has finished.
    void window.jupyterapp.commands.execute('notebook:run-cell');
  });
}

/**
 * Python that waits until `releaseCell(page, name)` (at most 110 s), as a cell's
 * first lines: a test that needs a cell still running while it clicks and
 * waits holds it so, where a sleep would race the test on a slow machine.
 * Each release writes a new token into the file and ends one wait (a release
 * made before the cell starts counts too). The kernel never removes the file:
 * the server reads it back right after writing it. No indented block: the
 * editor would indent the lines typed after it.
 */
export function holdUntilReleased(name: string): string {
  const file = JSON.stringify(name);
  return [
    'import os as _os, time as _time',
    "_seen = globals().setdefault('_released_tokens', set())",
    `_token = lambda: open(${file}).read() if _os.path.exists(${file}) else ''`,
    "any((lambda t: t != '' and t not in _seen)(_token()) or _time.sleep(0.1) for _ in range(1100))",
    '_seen.add(_token())'
  ].join('\n');
}

/** Ends one wait of `holdUntilReleased(name)` in the current notebook's kernel (whose directory is the notebook's). */
export async function releaseCell(page: Page, name: string): Promise<void> {
  await page.evaluate(async name => {
    const path = (window.jupyterapp.shell.currentWidget as any).context
      .path as string;
    await window.jupyterapp.serviceManager.contents.save(
      `${path.slice(0, path.lastIndexOf('/') + 1)}${name}`,
      {
        type: 'file',
        format: 'text',
        content: `${Date.now()}-${Math.random()}`
      }
    );
  }, name);
}

/** Removes the file of `holdUntilReleased(name)`: a restarted kernel, which knows no token, waits again. */
export async function removeRelease(page: Page, name: string): Promise<void> {
  await page.evaluate(async name => {
    const path = (window.jupyterapp.shell.currentWidget as any).context
      .path as string;
    await window.jupyterapp.serviceManager.contents.delete(
      `${path.slice(0, path.lastIndexOf('/') + 1)}${name}`
    );
  }, name);
}

export const MiB = 2 ** 20;

/** The memory badge of the `cellIndex`-th cell of the visible notebook. */
export function badgeOf(
  page: IJupyterLabPageFixture,
  cellIndex: number
): Locator {
  return page
    .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')
    .nth(cellIndex)
    .locator('[data-vram-role="cell-badge"]');
}

/** Shows the sidebar's Cells tab (on any page: Galata's, or a plain Playwright one). */
export async function showCellHistory(
  page: Pick<Page, 'locator'>
): Promise<void> {
  const tab = page.locator(`${SIDEBAR} [data-vram-role="cells-tab"]`);
  if (await tab.isVisible()) {
    await tab.click();
  }
  await expect(
    page.locator(`${SIDEBAR} [data-vram-role="cell-history"]`)
  ).toBeVisible();
}

/**
 * The shown columns of a Cells-tab row (or its header) whose text does not
 * fit, as "class: text"; [] when every column is read whole.
 */
export async function cutCellColumns(row: Locator): Promise<string[]> {
  return row.evaluate(el =>
    Array.from(el.children)
      .filter(col => (col as HTMLElement).offsetWidth > 0)
      .filter(col => col.scrollWidth > col.clientWidth)
      .map(col => `${col.className}: ${col.textContent}`)
  );
}

/** The header row of the Cells tab. */
export function cellHeaderRow(page: Pick<Page, 'locator'>): Locator {
  return page
    .locator(`${SIDEBAR} [data-vram-role="cell-sort"]`)
    .first()
    .locator('..');
}

/** Opens the sidebar and a new notebook, and waits until its helper is live. */
export async function openLiveNotebook(
  page: IJupyterLabPageFixture
): Promise<void> {
  await openSidebar(page);
  await page.notebook.createNew();
  await waitForState(page, 'live');
}

/**
 * A fresh page of JupyterLab (a reload, a second tab) shows the notebook at
 * `path` with the memory panel in `state` (live; `overheard` for a page
 * opened while a cell runs).
 */
export async function openInPage(
  page: Page,
  path: string,
  state = 'live'
): Promise<void> {
  await page.waitForFunction(
    () => (window as any).jupyterapp?.started !== undefined
  );
  await page.evaluate(async path => {
    await window.jupyterapp.started;
    await window.jupyterapp.restored;
    await window.jupyterapp.commands.execute('docmanager:open', { path });
    await window.jupyterapp.commands.execute('jupyterlab-vram:open-sidebar');
  }, path);
  await expect(
    page.locator(`${SIDEBAR} [data-vram-role="state"]`)
  ).toHaveAttribute('data-vram-state', state, { timeout: 60_000 });
}

/**
 * Another tab of the same JupyterLab as `page`, showing the notebook at
 * `path` with the memory panel in `state`. A workspace of its own:
 * JupyterLab moves a second window on the same workspace to a new one (a
 * navigation while the test reads the page).
 */
export async function openInNewTab(
  page: Page,
  path: string,
  workspace: string,
  state = 'live'
): Promise<Page> {
  const tab = await page.context().newPage();
  await tab.goto(`${new URL(page.url()).origin}/lab/workspaces/${workspace}`);
  await openInPage(tab, path, state);
  return tab;
}

/** The repr of a Python expression evaluated silently in the current notebook's kernel. */
export async function kernelRepr(
  page: Page,
  expression: string
): Promise<string> {
  return page.evaluate(async expression => {
    const kernel = (window.jupyterapp.shell.currentWidget as any).sessionContext
      .session.kernel;
    const reply = await kernel.requestExecute({
      code: '',
      silent: true,
      user_expressions: { value: expression }
    }).done;
    return reply.content.user_expressions.value.data['text/plain'] as string;
  }, expression);
}

/** How many comms the helper in the current notebook's kernel sends to. */
export async function commsInKernel(page: Page): Promise<number> {
  return Number(
    await kernelRepr(
      page,
      "len(__import__('jupyterlab_vram_helper').get_runtime().channel.targets())"
    )
  );
}

/**
 * Reloads the page. Not page.reload(): Galata's waits for a Launcher the
 * restored layout lacks. The reload is scheduled, not run inside evaluate: a
 * navigation that starts while evaluate is pending destroys its context.
 */
export async function reloadPage(page: Page): Promise<void> {
  const loaded = page.waitForEvent('load');
  await page.evaluate(() => {
    setTimeout(() => location.reload(), 0);
  });
  await loaded;
}

/** Restarts the current notebook's kernel as the Restart command does. */
export async function restartKernel(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const panel = window.jupyterapp.shell.currentWidget as any;
    await panel.sessionContext.restartKernel();
  });
}

/**
 * An init script that adds `ids` (extensions or single plugins) to the page
 * config's disabled extensions as the HTML is parsed, as JupyterLab's plugin
 * manager would: `page.addInitScript(disableInPageConfig([...]))`.
 */
export function disableInPageConfig(ids: string[]): string {
  return `(() => {
  const patch = node => {
    if (node.id !== 'jupyter-config-data' || node.dataset.vramPatched) return;
    const config = JSON.parse(node.textContent);
    config.disabledExtensions = [...(config.disabledExtensions || []), ...${JSON.stringify(ids)}];
    node.textContent = JSON.stringify(config);
    node.dataset.vramPatched = '1';
  };
  new MutationObserver(records => {
    for (const r of records) for (const n of r.addedNodes) if (n.nodeType === 1) patch(n);
  }).observe(document, { childList: true, subtree: true });
})();`;
}
