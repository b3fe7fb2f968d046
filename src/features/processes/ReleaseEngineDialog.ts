/**
 * The question before a release: what it is (kind, the notebook's name,
 * the helper's label), what it holds, and what Release does to it. Cancel
 * is the default button. The label and the name are kernel text: they go in
 * as text.
 */
import type { ByteUnits } from '../../text/format';
import type { Releasable } from '../../protocol/release';
import { confirmDialog } from '../../ui/confirmDialog';
import { element } from '../../ui/dom';
import { trans } from '../../text/translation';
import { releasableName, releaseSentences } from './releaseText';

/** Asks whether to release `releasable`; true when the user confirms. */
export function confirmRelease(
  releasable: Releasable,
  units: ByteUnits
): Promise<boolean> {
  const body = element('div', 'jp-vram-ConfirmBody', {
    role: 'release-engine-dialog'
  });
  for (const sentence of releaseSentences(releasable, units)) {
    body.appendChild(
      element('p', 'jp-vram-ConfirmBody-line', { text: sentence })
    );
  }
  return confirmDialog({
    title: trans.__('Release what the kernel started?'),
    body,
    accept: trans.__('Release'),
    acceptAriaLabel: trans.__('Release %1', releasableName(releasable))
  });
}
