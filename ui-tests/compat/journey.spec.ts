/**
 * The smoke journey, run once per target of scripts/smoke-journeys.sh (an
 * older or newer JupyterLab, Notebook 7, a kernel gateway): open a notebook,
 * the memory panel goes live, running a cell puts a badge on it, "Free memory"
 * reports a result, a snippet inserts a cell. The browser console must hold
 * no warning or error of ours, "Unsatisfied version" of a shared module
 * included (what a labextension built for a newer JupyterLab causes).
 */
import { ConsoleMessage, expect, Page, test } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

interface Target {
  name: string;
  ui: 'lab' | 'notebook';
  baseURL: string;
  root: string;
  /** The Python the kernel must run in: proves whose kernel it is. */
  kernelPython: string;
}

const SIDEBAR = '#jp-vram-sidebar';
const MiB = 2 ** 20;

function role(page: Page, name: string) {
  return page.locator(`${SIDEBAR} [data-vram-role="${name}"]`);
}

/**
 * A message is ours when it names the extension or comes from its files. An
 * "Unsatisfied version" warning comes from the remoteEntry of the extension
 * that asked for the version, so ours carry our URL; other extensions' own
 * (Notebook 7.2.3's lab-extension asks for ^4.2.6 on its 4.2.5 core) are
 * attached to the report, not counted.
 */
function isOurs(text: string, url: string): boolean {
  return /jupyterlab[-_]vram/i.test(text) || url.includes('/jupyterlab-vram/');
}

/** Records every console warning/error and uncaught error of the page. */
function watchConsole(page: Page): { ours: string[]; all: string[] } {
  const seen = { ours: [] as string[], all: [] as string[] };
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() !== 'warning' && message.type() !== 'error') {
      return;
    }
    const url = message.location().url ?? '';
    const line = `${message.type()}: ${message.text()} (${url})`;
    seen.all.push(line);
    if (isOurs(message.text(), url)) {
      seen.ours.push(line);
    }
  });
  page.on('pageerror', error => {
    const line = `uncaught: ${error.stack ?? error.message}`;
    seen.all.push(line);
    if (isOurs(line, '')) {
      seen.ours.push(line);
    }
  });
  return seen;
}

/** A one-cell notebook in the server's root that holds 64 MiB when run. */
function writeNotebook(target: Target, name: string): void {
  const notebook = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: {
        name: 'python3',
        display_name: 'Python 3 (ipykernel)',
        language: 'python'
      }
    },
    cells: [
      {
        id: 'journey-cell',
        cell_type: 'code',
        metadata: {},
        execution_count: null,
        outputs: [],
        source:
          "import sys\nblock = b'x' * (64 * 2**20)  # 64 MiB, written: resident\nprint(sys.executable)"
      }
    ]
  };
  fs.writeFileSync(path.join(target.root, name), JSON.stringify(notebook));
}

async function appReady(page: Page): Promise<void> {
  await page.waitForFunction(
    () => (window as any).jupyterapp !== undefined,
    undefined,
    {
      timeout: 120_000
    }
  );
  await page.evaluate(() => (window as any).jupyterapp.restored);
}

async function cellSources(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    return panel.content.model.sharedModel.cells.map((cell: any) =>
      cell.getSource()
    );
  });
}

test('open a notebook, live panel, cell badge, free memory, insert a snippet', async ({
  page
}, testInfo) => {
  const target = testInfo.project.metadata as Target;
  // One file per target and try: two targets share a server (JupyterLab and
  // Notebook 7 of one venv), and a file shares its kernel session.
  const file = `journey-${target.name}-${testInfo.retry}.ipynb`;
  writeNotebook(target, file);
  const consoleSeen = watchConsole(page);

  if (target.ui === 'notebook') {
    // Notebook 7's file browser loads the extension too (no notebook there).
    await page.goto('/tree');
    await appReady(page);
    await expect(
      page.locator('.jp-DirListing-item', { hasText: file })
    ).toBeVisible();
    await page.goto(`/notebooks/${file}`);
  } else {
    // ?reset: a retry starts from an empty workspace, not the failed try's notebook.
    await page.goto(`/lab/tree/${file}?reset`);
  }
  await appReady(page);
  const cells = page.locator(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell'
  );
  await expect(cells).toHaveCount(1);

  // The memory panel goes live: the helper reports from the kernel.
  await page.evaluate(() =>
    (window as any).jupyterapp.commands.execute('jupyterlab-vram:open-sidebar')
  );
  await expect(page.locator(SIDEBAR)).toBeVisible();
  await expect(role(page, 'state')).toHaveAttribute('data-vram-state', 'live', {
    timeout: 120_000
  });
  await expect(role(page, 'host-card')).toContainText('Kernel (RSS)');
  await expect
    .poll(async () =>
      Number(
        await role(page, 'host-rss').first().getAttribute('data-vram-bytes')
      )
    )
    .toBeGreaterThan(10 * MiB);

  // Running the cell: its output says which Python ran it, and it gets a badge.
  await page.evaluate(() =>
    (window as any).jupyterapp.commands.execute('notebook:run-cell')
  );
  await expect(cells.first().locator('.jp-OutputArea-output')).toContainText(
    target.kernelPython
  );
  const badge = cells.first().locator('[data-vram-role="cell-badge"]');
  await expect(badge).toBeVisible();
  await expect(badge).toHaveAttribute('data-vram-status', 'ok');
  expect(
    Number(await badge.getAttribute('data-vram-delta-bytes'))
  ).toBeGreaterThan(32 * MiB);
  await expect(badge).toContainText(/MiB/);

  // "Free memory" reports what it did.
  await role(page, 'action-free-memory').click();
  const result = role(page, 'action-result');
  await expect(result).toHaveAttribute('data-vram-outcome', 'done');
  await expect(result).toContainText(/gc collected \d/);

  // A snippet goes in as a new cell below the active one.
  const before = await cellSources(page);
  await page
    .locator(
      `${SIDEBAR} [data-vram-role="snippet-button"][data-vram-snippet="no-grad-eval"]`
    )
    .click();
  await expect
    .poll(async () => (await cellSources(page)).length)
    .toBe(before.length + 1);
  const after = await cellSources(page);
  const inserted = after.filter(source => !before.includes(source));
  expect(inserted).toHaveLength(1);
  expect(inserted[0]).toContain('with torch.no_grad():');
  await expect(cells.filter({ hasText: 'torch.no_grad()' })).toHaveCount(1);

  await testInfo.attach('console warnings and errors', {
    body: consoleSeen.all.join('\n') || '(none)',
    contentType: 'text/plain'
  });
  expect(
    consoleSeen.ours,
    'console warnings/errors of jupyterlab-vram'
  ).toEqual([]);
});
