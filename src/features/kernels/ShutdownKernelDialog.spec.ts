/** Tests for the shutdown confirmation: its text, and the dialog's answers. */
import {
  confirmShutdownKernelDialog,
  ShutdownKernelRequest,
  shutdownKernelText
} from './ShutdownKernelDialog';
import { EVIL } from '../../testing/fixtures';
import { settle } from '../../testing/fakeKernel';

describe('shutdown confirmation', () => {
  const request: ShutdownKernelRequest = {
    kernelId: 'kernel-a',
    kernelName: 'Python 3 (ipykernel)',
    paths: ['a.ipynb']
  };

  it('names the notebook and says that variables are lost', () => {
    const [question, loss] = shutdownKernelText(request);
    expect(question).toBe(
      'Shut down the Python 3 (ipykernel) kernel of \u201ca.ipynb\u201d?'
    );
    expect(loss).toContain('Every variable in it is lost');
  });

  it.each([
    ['.jp-mod-accept', true],
    ['.jp-mod-reject', false]
  ])('answers %s with %s', async (button, answer) => {
    const answered = confirmShutdownKernelDialog({ ...request, paths: [EVIL] });
    await settle();
    const dialog = document.body.querySelector('.jp-Dialog') as HTMLElement;
    expect(
      dialog.querySelector('[data-vram-role="shutdown-kernel-body"]')!
        .textContent
    ).toContain(EVIL);
    expect(dialog.querySelector('img')).toBeNull();
    (
      dialog.querySelector(`.jp-Dialog-button${button}`) as HTMLButtonElement
    ).click();
    await expect(answered).resolves.toBe(answer);
  });
});
