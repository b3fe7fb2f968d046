/**
 * What a Holders row says beyond its figures: its summary line, and its note
 * about storage shared with other names. The kernel counts each storage
 * once, on the largest holder (ties are broken by name), so after
 * `alias = t` one of the two is listed with the bytes and the other with
 * 0 B. The note says which, and how much the 0 B name keeps alive all the
 * same. The functions only make text; names come from the kernel and are
 * rendered as text.
 */
import type { HolderEntry } from '../../protocol/cleanup';
import { ByteUnits, formatBytes } from '../../text/format';
import { trans } from '../../text/translation';

type Sharing = Pick<
  HolderEntry,
  'shared_with' | 'shared_bytes' | 'counted_under' | 'total_bytes'
>;

/**
 * The summary line, for example "torch.nn.modules.linear.Linear: 2 params,
 * 0 buffers, 2 grads". It gives the full type, then the summary without the
 * class name that the summary repeats: the kernel's module and optimizer
 * summaries begin with "Linear: " or "Adam: ", and an object's with
 * "Trainer holding".
 */
export function holderSummaryText(
  entry: Pick<HolderEntry, 'type_name' | 'summary'>
): string {
  const shortName = entry.type_name.split('.').pop() ?? entry.type_name;
  let summary = entry.summary;
  if (summary.startsWith(`${shortName}: `)) {
    summary = summary.slice(shortName.length + 2);
  } else if (summary.startsWith(`${shortName} holding `)) {
    // "Trainer holding 1 module" becomes "holding 1 module".
    summary = summary.slice(shortName.length + 1);
  } else if (summary.startsWith(`${shortName} of `)) {
    // In "dict of 2 tensors" the type is already the sentence's subject.
    return summary;
  }
  return `${entry.type_name}: ${summary}`;
}

/** The row's note about shared storage, or null when it shares none. */
export function sharingNote(entry: Sharing, units: ByteUnits): string | null {
  const others = entry.shared_with;
  if (others.length === 0) {
    return null;
  }
  if (entry.shared_bytes > 0 && entry.counted_under.length > 0) {
    const counted = new Set(entry.counted_under);
    const rest = others.filter(name => !counted.has(name));
    const keeps = trans._n(
      'keeps %2 alive that %3 counts (shared storage)',
      'keeps %2 alive that %3 count (shared storage)',
      entry.counted_under.length,
      formatBytes(entry.shared_bytes, units),
      entry.counted_under.join(', ')
    );
    return rest.length
      ? trans.__('%1; also shares storage with %2', keeps, rest.join(', '))
      : keeps;
  }
  // Nothing is counted elsewhere, so what the row shares is counted on this
  // row. A helper of an older version sends no shared_bytes, and a 0 B row
  // then claims nothing.
  return entry.total_bytes > 0
    ? trans.__('shares storage with %1, counted here', others.join(', '))
    : trans.__('shares storage with %1', others.join(', '));
}
