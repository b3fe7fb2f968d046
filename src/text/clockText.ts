/**
 * Wall-clock times as short text, in the browser's time zone, on the 24-hour
 * clock.
 */

function twoDigits(n: number): string {
  return String(n).padStart(2, '0');
}

/** Formats a time in seconds since the epoch as "12:03:04". */
export function clockTime(epochSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  return [d.getHours(), d.getMinutes(), d.getSeconds()]
    .map(twoDigits)
    .join(':');
}

/**
 * A tick of the timeline's time axis, on one line and without a date. The
 * chart spans minutes, and a date line under the ticks would overlap its
 * neighbour and be cut at the sidebar's edge. The tick reads "19:31:40"
 * while ticks are seconds apart, because ":40" alone would be unclear, and
 * "19:32" once they are minutes apart.
 */
export function timeTick(
  epochSeconds: number,
  incrementSeconds: number
): string {
  if (incrementSeconds < 60) {
    return clockTime(epochSeconds);
  }
  const d = new Date(epochSeconds * 1000);
  return `${twoDigits(d.getHours())}:${twoDigits(d.getMinutes())}`;
}
