/**
 * Turning byte counts into short human text.
 *
 * `null` always means "unknown" and renders as an em dash, never as "0 B",
 * because the protocol keeps those two answers apart and the display must
 * too.
 */

/**
 * The byte units: 'binary' uses KiB, MiB and GiB (powers of 1024), and
 * 'decimal' uses kB, MB and GB (powers of 1000).
 */
export type ByteUnits = 'binary' | 'decimal';

/** What an unknown figure looks like. */
export const UNKNOWN_TEXT = '\u2014';

const UNIT_NAMES: Record<ByteUnits, string[]> = {
  binary: ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'],
  decimal: ['B', 'kB', 'MB', 'GB', 'TB', 'PB']
};

const UNIT_BASE: Record<ByteUnits, number> = { binary: 1024, decimal: 1000 };

function isKnown(value: number | null | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** The index into UNIT_NAMES of the unit that shows `bytes` best. */
function unitIndexFor(bytes: number, units: ByteUnits): number {
  const base = UNIT_BASE[units];
  let index = 0;
  let scaled = Math.abs(bytes);
  while (scaled >= base && index < UNIT_NAMES[units].length - 1) {
    scaled /= base;
    index++;
  }
  // Rounding can carry the figure up to the base (1,048,575 B would be
  // "1024 KiB"), so that case moves to the next unit up, "1 MiB".
  if (
    index < UNIT_NAMES[units].length - 1 &&
    Number(formatScaled(scaled, index)) >= base
  ) {
    index++;
  }
  return index;
}

/**
 * Formats about three significant digits, dropping trailing zeros: 1.25, 12.5,
 * 125.
 */
function formatScaled(value: number, unitIndex: number): string {
  if (unitIndex === 0) {
    return String(Math.round(value));
  }
  const abs = Math.abs(value);
  const decimals = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  const text = value.toFixed(decimals);
  return decimals > 0 ? text.replace(/\.?0+$/, '') : text;
}

/** Formats bytes as "1.5 GiB", "512 MiB" or "0 B", and unknown as "—". */
export function formatBytes(
  bytes: number | null | undefined,
  units: ByteUnits = 'binary'
): string {
  if (!isKnown(bytes)) {
    return UNKNOWN_TEXT;
  }
  const index = unitIndexFor(bytes, units);
  const value = bytes / Math.pow(UNIT_BASE[units], index);
  return `${formatScaled(value, index)} ${UNIT_NAMES[units][index]}`;
}

/**
 * Formats a use of a total as "1.2/80 GiB", with both figures in the unit
 * of the total so that they compare at a glance. Unknown parts show as "—".
 */
export function formatBytesOf(
  used: number | null | undefined,
  total: number | null | undefined,
  units: ByteUnits = 'binary'
): string {
  if (!isKnown(total)) {
    return `${formatBytes(used, units)}/${UNKNOWN_TEXT}`;
  }
  const index = unitIndexFor(total, units);
  const scale = Math.pow(UNIT_BASE[units], index);
  let usedText = UNKNOWN_TEXT;
  if (isKnown(used)) {
    usedText = formatScaled(used / scale, index);
    // A use too small for the total's unit must not read as none, so 2 MiB
    // of 80 GiB is "<0.01/80 GiB", not "0/80 GiB".
    if (usedText === '0' && used > 0 && index > 0) {
      usedText = '<0.01';
    }
  }
  return `${usedText}/${formatScaled(total / scale, index)} ${UNIT_NAMES[units][index]}`;
}

/** Returns part/total as a percentage, or null when it cannot be known. */
export function percentOf(
  part: number | null | undefined,
  total: number | null | undefined
): number | null {
  if (!isKnown(part) || !isKnown(total) || total <= 0) {
    return null;
  }
  return (part / total) * 100;
}

/**
 * Formats a share as "42%". A small non-zero share reads "<1%", and a share
 * just short of the whole reads ">99%", because 99.6 % rounded to "100%"
 * would read as full. Unknown reads "—".
 */
export function formatPercent(
  part: number | null | undefined,
  total: number | null | undefined
): string {
  const percent = percentOf(part, total);
  if (percent === null) {
    return UNKNOWN_TEXT;
  }
  if (percent > 0 && percent < 1) {
    return '<1%';
  }
  if (percent < 100 && Math.round(percent) >= 100) {
    return '>99%';
  }
  return `${Math.round(percent)}%`;
}

/** Formats bytes by device as "cuda:0 1 GiB · cpu 12 MiB", largest first. */
export function formatBytesByDevice(
  byDevice: { [device: string]: number },
  units: ByteUnits = 'binary'
): string {
  const parts = Object.entries(byDevice)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([device, n]) => `${device} ${formatBytes(n, units)}`);
  return parts.length ? parts.join(' \u00b7 ') : formatBytes(0, units);
}

/**
 * Formats a count with thousands separators, as in "1,024", for the `%2` of
 * a plural message: `trans._n('%2 object', '%2 objects', n,
 * formatCount(n))`. The `%1` of `_n` is the bare number, which is why `%2`
 * is needed.
 */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
