/**
 * The confirmation that the Kernels tab asks for before it shuts a kernel
 * down. It names the notebooks that lose their kernel and warns that what
 * lives only in the kernel's memory will be gone. Paths and kernel names go
 * into the DOM as text only.
 *
 * Test hooks: `[data-vram-role="shutdown-kernel-body"]`; accept with
 * `.jp-Dialog .jp-mod-accept` ("Shut Down").
 */
import { confirmSentences } from '../../ui/confirmDialog';
import { trans } from '../../text/translation';

/** The kernel to shut down, as the dialog names it. */
export interface ShutdownKernelRequest {
  kernelId: string;
  /** The display name, such as "Python 3 (ipykernel)", or null if unknown. */
  kernelName: string | null;
  /** The notebooks on this kernel. */
  paths: string[];
  /**
   * Labels for the other sessions on the kernel that the panel does not
   * follow, such as a console for the notebook or a notebook not opened in
   * this page. They lose the kernel too, so the dialog names them. It is
   * absent when none are known.
   */
  others?: string[];
}

/** The dialog's sentences, with the question first. */
export function shutdownKernelText(request: ShutdownKernelRequest): string[] {
  const notebooks = request.paths.length
    ? request.paths.map(p => `\u201c${p}\u201d`).join(', ')
    : trans.__('this notebook');
  const kernel = request.kernelName
    ? trans.__('the %1 kernel', request.kernelName)
    : trans.__('the kernel');
  const others = request.others?.length
    ? [
        trans._n(
          'It is also the kernel of %2, which loses it too.',
          'It is also the kernel of %2, which lose it too.',
          request.others.length,
          request.others.join(', ')
        )
      ]
    : [];
  return [
    trans.__('Shut down %1 of %2?', kernel, notebooks),
    ...others,
    trans.__(
      'Every variable in it is lost, with all the memory it holds: anything not saved to disk has to be computed again.'
    ),
    trans.__(
      'The notebook stays open with no kernel (kernel %1).',
      request.kernelId
    )
  ];
}

/**
 * Asks in a JupyterLab dialog, and resolves to true when the user presses "Shut
 * Down".
 */
export function confirmShutdownKernelDialog(
  request: ShutdownKernelRequest
): Promise<boolean> {
  return confirmSentences({
    title: trans.__('Shut down the kernel?'),
    role: 'shutdown-kernel-body',
    sentences: shutdownKernelText(request),
    accept: trans.__('Shut Down'),
    acceptAriaLabel: trans.__('Shut down the kernel')
  });
}
