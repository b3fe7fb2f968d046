/**
 * The question before a release: what it is (kind, the notebook's name,
 * the helper's label), what it holds, and what Release does to it. Cancel
 * is the default button. The label and the name are kernel text: they go in
 * as text.
 */
import type { ByteUnits } from '../../text/format';
import type { Releasable } from '../../protocol/release';
import { confirmSentences } from '../../ui/confirmDialog';
import { trans } from '../../text/translation';
import { releasableName, releaseSentences } from './releaseText';

/** Asks whether to release `releasable`; true when the user confirms. */
export function confirmRelease(
  releasable: Releasable,
  units: ByteUnits
): Promise<boolean> {
  return confirmSentences({
    title: trans.__('Release what the kernel started?'),
    role: 'release-engine-dialog',
    sentences: releaseSentences(releasable, units),
    accept: trans.__('Release'),
    acceptAriaLabel: trans.__('Release %1', releasableName(releasable))
  });
}
