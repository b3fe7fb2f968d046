/**
 * Inserting memory-saving code: placement, content, and the "restart needed"
 * warning once the kernel has initialised TensorFlow. Real kernel with CPU
 * torch and tensorflow-cpu.
 */
import { expect, test } from '@jupyterlab/galata';

import { openLiveNotebook, SIDEBAR, sidebarRole } from './helpers';

// See sidebar.spec.ts: Galata's kernel tracking breaks restarts/interrupts.
test.use({ kernels: null });

async function cellSources(page: any): Promise<string[]> {
  return page.evaluate(() => {
    const panel = window.jupyterapp.shell.currentWidget as any;
    return panel.content.model.sharedModel.cells.map((c: any) => c.getSource());
  });
}

async function activeCellIndex(page: any): Promise<number> {
  return page.evaluate(
    () => (window.jupyterapp.shell.currentWidget as any).content.activeCellIndex
  );
}

test.describe('inserting memory-saving code', () => {
  test('AMP goes directly below the active cell, selected and not run; undo removes it', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(0, 'code', '# first');
    await page.notebook.addCell('code', '# second');
    await page.notebook.addCell('code', '# third');
    await page.notebook.selectCells(1);

    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('jupyterlab-vram:insert-amp');
    });
    const sources = await cellSources(page);
    expect(sources).toHaveLength(4);
    expect(sources[0]).toBe('# first');
    expect(sources[1]).toBe('# second');
    expect(sources[2]).toContain('torch.amp.autocast');
    // The deprecated torch.cuda.amp only where an older PyTorch has nothing else.
    expect(sources[2]).not.toContain('torch.cuda.amp.autocast');
    expect(sources[2]).toContain(
      'else:  # PyTorch before 2.3 has only the CUDA one\n    scaler = torch.cuda.amp.GradScaler('
    );
    expect(sources[3]).toBe('# third');
    expect(await activeCellIndex(page)).toBe(2);
    const count = await page.evaluate(
      () =>
        (window.jupyterapp.shell.currentWidget as any).content.model.cells.get(
          2
        ).executionCount
    );
    expect(count).toBeNull();

    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('notebook:undo-cell-action');
    });
    expect(await cellSources(page)).toEqual(['# first', '# second', '# third']);
  });

  test('TensorFlow memory growth goes to the top; a restart warning once TF is initialised', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await page.notebook.setCell(0, 'code', '# first');
    await page.notebook.addCell('code', '# second');
    await page.notebook.selectCells(1);

    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute(
        'jupyterlab-vram:insert-tf-memory-growth'
      );
    });
    let sources = await cellSources(page);
    expect(sources[0]).toContain('set_memory_growth');
    expect(sources.slice(1)).toEqual(['# first', '# second']);
    expect(await activeCellIndex(page)).toBe(0);
    // TensorFlow has not started in this kernel: nothing to warn about.
    await expect(sidebarRole(page, 'restart-warning')).toBeHidden();

    // Start TensorFlow in the kernel, then ask again.
    await page.notebook.setCell(
      2,
      'code',
      'import tensorflow as tf\ntf.constant(1)'
    );
    await page.notebook.runCell(2, true);
    await page.notebook.selectCells(2);
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute(
        'jupyterlab-vram:insert-tf-memory-growth'
      );
    });
    sources = await cellSources(page);
    expect(sources[0]).toContain('set_memory_growth');
    expect(sources[1]).toContain('set_memory_growth');
    const warning = page.locator(
      `${SIDEBAR} [data-vram-role="restart-warning"]`
    );
    await expect(warning).toBeVisible({ timeout: 15_000 });
    await expect(warning).toHaveAttribute('data-vram-reason', 'tensorflow');
    await expect(warning).toContainText(/restart/i);
  });

  test('the notebook toolbar has a Memory menu with the snippets', async ({
    page
  }) => {
    // Wide enough that the toolbar does not fold the item into its overflow menu.
    await page.setViewportSize({ width: 1400, height: 800 });
    await openLiveNotebook(page);
    await page
      .locator(
        '.jp-NotebookPanel:not(.lm-mod-hidden) [data-vram-role="toolbar-memory"]'
      )
      .click();
    await expect(
      page.locator('[data-vram-role="toolbar-memory-menu"]')
    ).toBeVisible();
    await expect(
      page.locator('[data-vram-role="toolbar-memory-menu"]')
    ).toContainText(/free/i);
  });
});
