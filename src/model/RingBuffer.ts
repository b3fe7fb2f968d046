/**
 * A bounded buffer of numbers. Pushing is O(1) and never allocates; when the
 * buffer is full, the oldest value is dropped. It is backed by one
 * Float64Array, so 86,400 samples (24 h at 1 Hz) cost 675 KiB per series and
 * make no garbage.
 *
 * Indices are logical: 0 is the oldest value held, `length - 1` the newest.
 */
export class RingBuffer {
  constructor(capacity: number) {
    this._data = new Float64Array(RingBuffer._checkCapacity(capacity));
  }

  /**
   * A buffer already holding `count` copies of `value`, for a series that
   * first appears after other series have rows.
   */
  static filled(capacity: number, count: number, value: number): RingBuffer {
    const buffer = new RingBuffer(capacity);
    const n = Math.min(count, buffer.capacity);
    buffer._data.fill(value, 0, n);
    buffer._length = n;
    buffer._start = 0;
    return buffer;
  }

  get capacity(): number {
    return this._data.length;
  }

  get length(): number {
    return this._length;
  }

  /**
   * Appends a value in O(1), dropping the oldest one when the buffer is full.
   */
  push(value: number): void {
    const capacity = this._data.length;
    if (this._length < capacity) {
      this._data[(this._start + this._length) % capacity] = value;
      this._length++;
    } else {
      this._data[this._start] = value;
      this._start = (this._start + 1) % capacity;
    }
  }

  /**
   * The value at logical index `i`, where 0 is the oldest, or NaN when out of
   * range.
   */
  get(i: number): number {
    if (i < 0 || i >= this._length || !Number.isInteger(i)) {
      return NaN;
    }
    return this._data[(this._start + i) % this._data.length];
  }

  /** The newest value, or NaN when the buffer is empty. */
  last(): number {
    return this.get(this._length - 1);
  }

  clear(): void {
    this._start = 0;
    this._length = 0;
  }

  /**
   * Copies logical indices [start, end) into a new Float64Array, with at
   * most two block copies however the data wraps. Out-of-range bounds are
   * clipped.
   */
  slice(start = 0, end = this._length): Float64Array {
    const from = Math.max(0, Math.min(start, this._length));
    const to = Math.max(from, Math.min(end, this._length));
    const out = new Float64Array(to - from);
    const capacity = this._data.length;
    const physicalFrom = (this._start + from) % capacity;
    const firstRun = Math.min(to - from, capacity - physicalFrom);
    out.set(this._data.subarray(physicalFrom, physicalFrom + firstRun), 0);
    if (firstRun < out.length) {
      out.set(this._data.subarray(0, out.length - firstRun), firstRun);
    }
    return out;
  }

  /**
   * Changes the capacity, keeping the newest values that fit. It costs
   * O(length), which is fine because it happens only when a setting changes.
   */
  setCapacity(capacity: number): void {
    const newCapacity = RingBuffer._checkCapacity(capacity);
    if (newCapacity === this._data.length) {
      return;
    }
    const keep = this.slice(Math.max(0, this._length - newCapacity));
    this._data = new Float64Array(newCapacity);
    this._data.set(keep);
    this._start = 0;
    this._length = keep.length;
  }

  private static _checkCapacity(capacity: number): number {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(
        `RingBuffer capacity must be a positive integer, got ${capacity}`
      );
    }
    return capacity;
  }

  private _data: Float64Array;
  private _start = 0;
  private _length = 0;
}
