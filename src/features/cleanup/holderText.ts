/**
 * What a Holders row says beyond its figures: its summary line, and its note
 * about storage shared with other names. The kernel counts each storage
 * once, on the largest holder (ties by name), so `alias = t` lists one of
 * the two with the bytes and the other with 0 B: the note says which, and
 * how much the 0 B name keeps alive all the same. Pure text; names come
 * from the kernel and are rendered as text.
 */
import type { HolderEntry } from '../../protocol/cleanup';
import { ByteUnits, formatBytes } from '../../text/format';
import { trans } from '../../text/translation';

type Sharing = Pick<
  HolderEntry,
  'shared_with' | 'shared_bytes' | 'counted_under' | 'total_bytes'
>;

/**
 * "torch.nn.modules.linear.Linear: 2 params, 0 buffers, 2 grads": the type,
 * then the summary without the class name it repeats (the kernel's module and
 * optimizer summaries begin "Linear: ", "Adam: ", an object's "Trainer holding").
 */
export function holderSummaryText(
  entry: Pick<HolderEntry, 'type_name' | 'summary'>
): string {
  const shortName = entry.type_name.split('.').pop() ?? entry.type_name;
  let summary = entry.summary;
  if (summary.startsWith(`${shortName}: `)) {
    summary = summary.slice(shortName.length + 2);
  } else if (summary.startsWith(`${shortName} holding `)) {
    summary = summary.slice(shortName.length + 1); // "Trainer holding 1 module"
  } else if (summary.startsWith(`${shortName} of `)) {
    return summary; // "dict of 2 tensors": the type is the sentence's subject already
  }
  return `${entry.type_name}: ${summary}`;
}

/** The row's note about shared storage; null when it shares none. */
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
  // Nothing counted elsewhere: what it shares is counted on this row (an
  // older helper sends no shared_bytes: a 0 B row then claims nothing).
  return entry.total_bytes > 0
    ? trans.__('shares storage with %1, counted here', others.join(', '))
    : trans.__('shares storage with %1', others.join(', '));
}
