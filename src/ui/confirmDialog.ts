/**
 * The confirmation before a step that cannot be undone (deleting what holds
 * memory, shutting a kernel down): a JupyterLab dialog whose default button
 * is Cancel, and whose accept button (`.jp-mod-accept`) is styled as a
 * warning.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { element } from './dom';
import { trans } from '../text/translation';

/** True when the user presses the accept button. */
export async function confirmDialog(options: {
  title: string;
  body: HTMLElement;
  accept: string;
  acceptAriaLabel: string;
}): Promise<boolean> {
  const result = await showDialog({
    title: options.title,
    body: new Widget({ node: options.body }),
    buttons: [
      Dialog.cancelButton({ label: trans.__('Cancel') }),
      Dialog.warnButton({
        label: options.accept,
        ariaLabel: options.acceptAriaLabel
      })
    ],
    defaultButton: 0
  });
  return result.button.accept;
}

/**
 * `confirmDialog` with a body of plain sentences, one paragraph each. They
 * are set as text only, because the paths and names in them are data.
 * `role` is the body's `data-vram-role`, for tests.
 */
export function confirmSentences(options: {
  title: string;
  role: string;
  sentences: readonly string[];
  accept: string;
  acceptAriaLabel: string;
}): Promise<boolean> {
  const body = element('div', 'jp-vram-ConfirmBody', { role: options.role });
  for (const sentence of options.sentences) {
    body.appendChild(
      element('p', 'jp-vram-ConfirmBody-line', { text: sentence })
    );
  }
  return confirmDialog({
    title: options.title,
    body,
    accept: options.accept,
    acceptAriaLabel: options.acceptAriaLabel
  });
}
