/**
 * Wall-clock times as short text, in the browser's time zone, 24-hour.
 */

function twoDigits(n: number): string {
  return String(n).padStart(2, '0');
}

/** "12:03:04" for a time in seconds since the epoch. */
export function clockTime(epochSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map(twoDigits).join(':');
}

/**
 * A tick of the timeline's time axis, on one line and without a date (the
 * chart spans minutes; a date line under the ticks overlapped its neighbour
 * and was cut at the sidebar's edge): "18:40" on the minute, ":15" between
 * minutes while ticks are seconds apart, which keeps ticks narrow enough for
 * a sidebar.
 */
export function timeTick(epochSeconds: number, incrementSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  if (incrementSeconds < 60 && d.getSeconds() !== 0) {
    return `:${twoDigits(d.getSeconds())}`;
  }
  return `${twoDigits(d.getHours())}:${twoDigits(d.getMinutes())}`;
}
