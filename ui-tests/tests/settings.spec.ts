/**
 * The user's settings in a real JupyterLab: where JupyterLab's registry
 * refuses them (one value against the schema, from a hand-edited file),
 * the other values still apply and the refused one is named.
 */
import { expect, galata, test } from '@jupyterlab/galata';

import { kernelRepr, openLiveNotebook } from './helpers';

test.describe('settings JupyterLab refuses', () => {
  test.use({
    mockSettings: {
      ...galata.DEFAULT_SETTINGS,
      // As written in a settings file: the interval is below the schema's minimum.
      'jupyterlab-vram:plugin': {
        exactPeakPerCell: false,
        sampleIntervalSeconds: 0.01
      }
    }
  });

  test('keep their valid values, hold the bad one to its limit, and say which it was', async ({
    page
  }) => {
    await openLiveNotebook(page);
    await expect(
      page.getByText(
        'JupyterLab refused the GPU Memory settings (sampleIntervalSeconds: must be >= 0.05)',
        { exact: false }
      )
    ).toBeVisible();
    // What the kernel's helper was told.
    const config = await kernelRepr(
      page,
      "(lambda c: [c.reset_peak_per_cell, c.interval_s])(__import__('jupyterlab_vram_helper').get_runtime().sampler.config)"
    );
    expect(config).toBe('[False, 0.05]');
  });
});
