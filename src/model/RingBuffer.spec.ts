import { MemoryHistory, SeriesKey } from './MemoryHistory';
import { RingBuffer } from './RingBuffer';

function filled(capacity: number, values: number[]): RingBuffer {
  const b = new RingBuffer(capacity);
  values.forEach(v => b.push(v));
  return b;
}

describe('RingBuffer', () => {
  it('rejects a non-positive or fractional capacity', () => {
    expect(() => new RingBuffer(0)).toThrow(RangeError);
    expect(() => new RingBuffer(2.5)).toThrow(RangeError);
  });

  it('holds values in push order until full', () => {
    const b = filled(4, [1, 2, 3]);
    expect(b.length).toBe(3);
    expect(Array.from(b.slice())).toEqual([1, 2, 3]);
    expect(b.get(0)).toBe(1);
    expect(b.last()).toBe(3);
  });

  it('drops the oldest value on wrap-around', () => {
    const b = filled(3, [1, 2, 3, 4, 5]);
    expect(b.length).toBe(3);
    expect(Array.from(b.slice())).toEqual([3, 4, 5]);
    expect(b.get(0)).toBe(3);
    expect(b.get(2)).toBe(5);
  });

  it('returns NaN out of range and when empty', () => {
    const b = new RingBuffer(2);
    expect(b.last()).toBeNaN();
    b.push(1);
    expect(b.get(1)).toBeNaN();
    expect(b.get(-1)).toBeNaN();
  });

  it('slices ranges across the wrap point', () => {
    const b = filled(5, [0, 1, 2, 3, 4, 5, 6, 7]); // holds 3..7, start in the middle
    expect(Array.from(b.slice(1, 4))).toEqual([4, 5, 6]);
    expect(Array.from(b.slice(3))).toEqual([6, 7]);
    expect(Array.from(b.slice(-10, 100))).toEqual([3, 4, 5, 6, 7]);
    expect(b.slice(4, 2).length).toBe(0);
  });

  it('keeps the newest values when the capacity shrinks', () => {
    const b = filled(5, [1, 2, 3, 4, 5, 6]);
    b.setCapacity(3);
    expect(b.capacity).toBe(3);
    expect(Array.from(b.slice())).toEqual([4, 5, 6]);
    b.push(7);
    expect(Array.from(b.slice())).toEqual([5, 6, 7]);
  });

  it('keeps everything when the capacity grows', () => {
    const b = filled(3, [1, 2, 3, 4]);
    b.setCapacity(6);
    b.push(5);
    expect(Array.from(b.slice())).toEqual([2, 3, 4, 5]);
  });

  it('clears', () => {
    const b = filled(3, [1, 2]);
    b.clear();
    expect(b.length).toBe(0);
    b.push(9);
    expect(Array.from(b.slice())).toEqual([9]);
  });

  it('creates a pre-filled buffer for late series', () => {
    const b = RingBuffer.filled(4, 6, NaN);
    expect(b.length).toBe(4);
    expect(b.get(0)).toBeNaN();
  });

  it('takes 86,400 pushes and reads a 300-value window cheaply', () => {
    const b = new RingBuffer(86_400);
    for (let i = 0; i < 100_000; i++) {
      b.push(i);
    }
    expect(b.length).toBe(86_400);
    expect(b.get(0)).toBe(100_000 - 86_400);
    const win = b.slice(b.length - 300);
    expect(win.length).toBe(300);
    expect(win[0]).toBe(99_700);
  });
});

describe('MemoryHistory', () => {
  const row = (entries: [string, number][]) => new Map(entries);

  it('keeps series aligned with the time axis, NaN for absent figures', () => {
    const h = new MemoryHistory(10);
    h.append(1, row([[SeriesKey.hostRss, 100]]));
    h.append(
      2,
      row([
        [SeriesKey.hostRss, 110],
        ['gpu0.allocated', 5]
      ])
    );
    h.append(3, row([['gpu0.allocated', 6]]));
    const win = h.window(-Infinity);
    expect(Array.from(win.times)).toEqual([1, 2, 3]);
    expect(Array.from(win.series.get(SeriesKey.hostRss)!)).toEqual([
      100,
      110,
      NaN
    ]);
    expect(Array.from(win.series.get('gpu0.allocated')!)).toEqual([NaN, 5, 6]);
    expect(h.seriesKeys).toEqual([SeriesKey.hostRss, 'gpu0.allocated']);
    expect(h.latest('gpu0.allocated')).toBe(6);
    expect(h.latest('nope')).toBeNaN();
  });

  it('reads only the requested time window', () => {
    const h = new MemoryHistory(1000);
    for (let t = 0; t < 1000; t++) {
      h.append(t, row([[SeriesKey.hostRss, t * 2]]));
    }
    const win = h.window(990);
    expect(win.times.length).toBe(10);
    expect(win.series.get(SeriesKey.hostRss)![0]).toBe(1980);
    expect(h.lastTime).toBe(999);
  });

  it('bounds every column by the capacity and resizes together', () => {
    const h = new MemoryHistory(3);
    for (let t = 0; t < 5; t++) {
      h.append(t, row([['a', t]]));
    }
    expect(h.length).toBe(3);
    h.setCapacity(2);
    const win = h.window(-Infinity);
    expect(Array.from(win.times)).toEqual([3, 4]);
    expect(Array.from(win.series.get('a')!)).toEqual([3, 4]);
  });

  it('stops the window where the clock stepped back', () => {
    const h = new MemoryHistory(10);
    h.append(100, row([['a', 1]]));
    h.append(200, row([['a', 2]]));
    h.append(150, row([['a', 3]])); // clock stepped back
    h.append(151, row([['a', 4]]));
    const win = h.window(-Infinity);
    expect(Array.from(win.times)).toEqual([150, 151]);
    expect(Array.from(win.series.get('a')!)).toEqual([3, 4]);
    expect(h.length).toBe(4);
  });

  it('is not thrown off by an old out-of-order row', () => {
    const h = new MemoryHistory(10);
    h.append(1000, row([['a', 0]])); // e.g. a real sample before injected ones
    for (let t = 1; t <= 5; t++) {
      h.append(t, row([['a', t]]));
    }
    expect(Array.from(h.window(3).times)).toEqual([3, 4, 5]);
  });

  it('round-trips GPU series keys', () => {
    expect(SeriesKey.parseGpu(SeriesKey.gpu(3, 'reserved'))).toEqual({
      index: 3,
      figure: 'reserved'
    });
    expect(SeriesKey.parseGpu(SeriesKey.hostRss)).toBeNull();
  });
});
