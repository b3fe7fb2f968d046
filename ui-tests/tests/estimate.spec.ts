/**
 * Will it fit? in the browser, with a real kernel and real (CPU) PyTorch:
 * from the Memory tab, the dialog offers the notebook's own names, the
 * estimate answers for a planned card with rows, a breakdown and the
 * remedies, a remedy's cell goes in with its batch size filled in, and the
 * model's state is as it was; from an out-of-memory diagnosis, a model that
 * fake tensors cannot run gets the operation and the line, and real steps,
 * after a confirmation, measure it.
 */
import { expect, test } from '@jupyterlab/galata';

import { openLiveNotebook, sidebarRole } from './helpers';

// See sidebar.spec.ts: Galata's kernel tracking breaks restarts/interrupts.
test.use({ kernels: null });

const MODEL = [
  'import torch',
  'from torch import nn',
  'net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))',
  'opt = torch.optim.Adam(net.parameters())',
  'criterion = nn.CrossEntropyLoss()',
  'batch = (torch.randn(32, 64), torch.randint(0, 10, (32,)))',
  'before = [t.detach().clone() for t in net.state_dict().values()]'
].join('\n');

async function cellText(
  page: import('@jupyterlab/galata').IJupyterLabPageFixture,
  index: number
): Promise<string> {
  return page.evaluate(
    index =>
      (
        window.jupyterapp.shell.currentWidget as any
      ).content.model.sharedModel.cells[index].getSource() as string,
    index
  );
}

test('the Memory tab estimates a training step for a planned card and inserts a remedy with its figures', async ({
  page
}) => {
  await openLiveNotebook(page);
  await page.notebook.setCell(0, 'code', MODEL);
  await page.notebook.runCell(0, true);

  await sidebarRole(page, 'estimate-run').click();
  const dialog = page.locator('.jp-Dialog');
  const field = (key: string) =>
    dialog.locator(`[data-vram-role="estimate-${key}"]`);
  // The kernel's own names are offered.
  await expect(field('model')).toHaveValue('net', { timeout: 30_000 });
  await expect(field('optimizer')).toHaveValue('opt');
  await expect(field('loss')).toHaveValue('criterion');
  await expect(field('batch')).toHaveValue('batch');
  await field('card').fill('4');
  await dialog.locator('.jp-mod-accept').click();

  const verdict = sidebarRole(page, 'estimate-verdict');
  await expect(verdict).toContainText('The largest batch size that fits', {
    timeout: 60_000
  });
  await expect(sidebarRole(page, 'estimate-card')).toContainText(
    'A planned card of 4 GiB'
  );
  // The whole estimate (the evaluation step and the remedies) has come.
  await expect(sidebarRole(page, 'estimate-progress')).toHaveCount(0, {
    timeout: 60_000
  });
  const rows = sidebarRole(page, 'estimate-rows').locator('tbody tr');
  await expect(rows).toHaveCount(6);
  await expect(rows.first()).toHaveAttribute('data-vram-batch', '8');
  await expect(sidebarRole(page, 'estimate-breakdown')).toContainText(
    'At batch size 32'
  );
  await expect(
    sidebarRole(page, 'estimate-role-optimizer_state')
  ).toContainText('Optimizer state');
  const variants = sidebarRole(page, 'estimate-variant');
  await expect(variants).toHaveCount(4);
  await expect(sidebarRole(page, 'estimate-notes')).toContainText(
    'fake CPU tensors'
  );

  // The largest batch size of the bfloat16 remedy goes into its cell.
  const amp = page.locator(
    '[data-vram-role="estimate-variant"][data-vram-variant="amp_bf16"]'
  );
  const ampText = (await amp.textContent()) ?? '';
  const largest = /Fits a batch of ([\d,]+)/
    .exec(ampText)?.[1]
    ?.replace(/,/g, '');
  expect(largest).toBeTruthy();
  await amp.locator('[data-vram-role="estimate-insert"]').click();
  await expect
    .poll(async () => cellText(page, 1), { timeout: 30_000 })
    .toContain(`BATCH_SIZE = ${largest}`);
  const code = await cellText(page, 1);
  expect(code).toContain(
    'with torch.autocast(device_type=device, dtype=torch.bfloat16):'
  );
  expect(code).toContain('batch_loss = criterion(net(inputs), targets)');
  expect(code).toContain('opt.step()');
  expect(code).toContain('on a card of 4 GiB');

  // Nothing of the model or the optimizer changed, and the kernel runs on.
  await page.notebook.addCell(
    'code',
    'print(all(torch.equal(a, b) for a, b in zip(before, net.state_dict().values())), len(opt.state), net.training)'
  );
  await page.notebook.runCell(2, true);
  expect((await page.notebook.getCellTextOutput(2))?.join('')).toContain(
    'True 0 True'
  );
});

test('an out-of-memory diagnosis offers the estimate; a refusal names the op and the line, and real steps measure it', async ({
  page
}) => {
  await openLiveNotebook(page);
  await page.notebook.setCell(
    0,
    'code',
    [
      'import torch',
      'from torch import nn',
      'class Gate(nn.Module): forward = lambda self, x: x.nonzero().float().sum() * 0 + x.sum()',
      'gated = nn.Sequential(nn.Linear(8, 8), Gate())',
      'xb = torch.randn(16, 8)'
    ].join('\n')
  );
  await page.notebook.runCell(0, true);
  await page.notebook.addCell(
    'code',
    'torch.empty(2**50, dtype=torch.uint8)  # 1 PiB: fails'
  );
  await page.notebook.runCell(1, true);

  const offer = sidebarRole(page, 'oom-diagnosis').locator(
    '[data-vram-role="oom-action"][data-vram-action="estimate-memory"]'
  );
  await expect(offer).toBeVisible({ timeout: 30_000 });
  await offer.click();
  const dialog = page.locator('.jp-Dialog');
  const field = (key: string) =>
    dialog.locator(`[data-vram-role="estimate-${key}"]`);
  await expect(field('model')).toHaveValue('gated', { timeout: 30_000 });
  await field('optimizer').fill('');
  await field('loss').fill('');
  await field('batch').fill('xb');
  await dialog.locator('.jp-mod-accept').click();

  const failure = sidebarRole(page, 'estimate-failure');
  await expect(failure).toContainText('aten.nonzero', { timeout: 60_000 });
  await expect(failure).toContainText('x.nonzero()');
  await sidebarRole(page, 'estimate-real-step').click();
  const confirm = page.locator('.jp-Dialog');
  await expect(
    confirm.locator('[data-vram-role="estimate-real-step-dialog"]')
  ).toContainText('put back afterwards');
  await confirm.locator('.jp-mod-accept').click();

  await expect(sidebarRole(page, 'estimate-notes')).toContainText(
    'real steps were measured on cpu',
    { timeout: 60_000 }
  );
  await expect(
    sidebarRole(page, 'estimate-rows').locator('tbody tr')
  ).not.toHaveCount(0);
  await expect(sidebarRole(page, 'estimate-real-step')).toHaveCount(0);
});
