/**
 * Wall-clock times as short text, in the browser's time zone, 24-hour.
 */

function twoDigits(n: number): string {
  return String(n).padStart(2, '0');
}

/** "12:03:04" for a time in seconds since the epoch. */
export function clockTime(epochSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  return [d.getHours(), d.getMinutes(), d.getSeconds()]
    .map(twoDigits)
    .join(':');
}

/**
 * A tick of the timeline's time axis, on one line and without a date (the
 * chart spans minutes; a date line under the ticks overlapped its neighbour
 * and was cut at the sidebar's edge): "19:31:40" while ticks are seconds
 * apart (":40" alone read as a riddle), "19:32" once they are minutes apart.
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
