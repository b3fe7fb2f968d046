import { clockTime, timeTick } from './clockText';

describe('clock text', () => {
  // The times are built in the browser's own time zone, because the
  // functions read them in it.
  const at = new Date(2026, 10, 24, 18, 39, 5).getTime() / 1000;

  it('writes a time of day on 24 hours, seconds included', () => {
    expect(clockTime(at)).toBe('18:39:05');
    expect(clockTime(new Date(2026, 10, 24, 7, 3, 0).getTime() / 1000)).toBe(
      '07:03:00'
    );
  });

  it('writes a time-axis tick without a date: whole while ticks are seconds apart, to the minute after', () => {
    const minute = new Date(2026, 10, 24, 18, 40, 0).getTime() / 1000;
    expect(timeTick(at, 15)).toBe('18:39:05');
    expect(timeTick(minute, 30)).toBe('18:40:00');
    expect(timeTick(minute, 60)).toBe('18:40');
    expect(timeTick(at, 120)).toBe('18:39');
  });
});
