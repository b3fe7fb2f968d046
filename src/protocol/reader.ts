/**
 * The reading machinery of the wire parsers (messages.ts and the other
 * modules of this folder). A `FieldReader` checks one field of untrusted
 * JSON at a time and throws a `ShapeError` naming its path, which each
 * parser turns into a readable error instead of a crash.
 */

/** Raised inside a parser, which turns it into a `malformed` result. */
export class ShapeError extends Error {}

/** A short, safe description of an untrusted value for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) {
    return 'nothing';
  }
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? text.slice(0, 57) + '...' : text;
}

/** Reads fields of one JSON object, naming the path in every error. */
export class FieldReader {
  constructor(
    readonly path: string,
    readonly data: { [key: string]: unknown }
  ) {}

  static of(value: unknown, path: string): FieldReader {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ShapeError(
        `${path}: expected an object, got ${describeValue(value)}`
      );
    }
    return new FieldReader(path, value as { [key: string]: unknown });
  }

  private fail(key: string, expected: string): never {
    throw new ShapeError(
      `${this.path}.${key}: expected ${expected}, got ${describeValue(this.data[key])}`
    );
  }

  has(key: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.data, key);
  }

  string(key: string): string {
    const v = this.data[key];
    return typeof v === 'string' ? v : this.fail(key, 'a string');
  }

  /** Reads a string or null. A missing key reads as null. */
  nullableString(key: string): string | null {
    const v = this.data[key];
    if (v === undefined || v === null) {
      return null;
    }
    return typeof v === 'string' ? v : this.fail(key, 'a string or null');
  }

  number(key: string): number {
    const v = this.data[key];
    return typeof v === 'number' && Number.isFinite(v)
      ? v
      : this.fail(key, 'a number');
  }

  /** Reads a number, or null for "unknown". A missing key reads as null. */
  nullableNumber(key: string): number | null {
    return this.isAbsent(key) ? null : this.number(key);
  }

  integer(key: string): number {
    const v = this.data[key];
    return typeof v === 'number' && Number.isInteger(v)
      ? v
      : this.fail(key, 'an integer');
  }

  /** Reads an integer or null. A missing key reads as null. */
  nullableInteger(key: string): number | null {
    return this.isAbsent(key) ? null : this.integer(key);
  }

  boolean(key: string): boolean {
    const v = this.data[key];
    return typeof v === 'boolean' ? v : this.fail(key, 'true or false');
  }

  /** Reads a boolean, or null for "unknown". A missing key reads as null. */
  nullableBoolean(key: string): boolean | null {
    return this.isAbsent(key) ? null : this.boolean(key);
  }

  /**
   * Reads a boolean. A missing or null key reads as `absent`, for a field
   * that older helpers do not send.
   */
  optionalBoolean(key: string, absent: boolean): boolean {
    return this.isAbsent(key) ? absent : this.boolean(key);
  }

  /**
   * Reads a byte count or counter: a non-negative number, or null for
   * "unknown". A missing key reads as null, never as 0, because a figure
   * that was not sent is unknown rather than zero.
   */
  bytes(key: string): number | null {
    const v = this.data[key];
    if (v === undefined || v === null) {
      return null;
    }
    return typeof v === 'number' && Number.isFinite(v) && v >= 0
      ? v
      : this.fail(key, 'a non-negative number or null');
  }

  object(key: string): FieldReader {
    if (!this.has(key)) {
      this.fail(key, 'an object');
    }
    return FieldReader.of(this.data[key], `${this.path}.${key}`);
  }

  /** Reads an object or null. A missing key reads as null. */
  nullableObject(key: string): FieldReader | null {
    const v = this.data[key];
    if (v === undefined || v === null) {
      return null;
    }
    return FieldReader.of(v, `${this.path}.${key}`);
  }

  array(key: string): unknown[] {
    const v = this.data[key];
    if (!Array.isArray(v)) {
      return this.fail(key, 'an array');
    }
    // JSON has no holes, but data built in the page may have them. map()
    // would skip them and leave undefined entries behind the parser's back,
    // so such an array is copied into a dense one first.
    return hasHoles(v) ? Array.from(v) : v;
  }

  /**
   * Reads an array or null. A missing key, as from older helpers, reads as
   * null.
   */
  nullableArray(key: string): unknown[] | null {
    return this.isAbsent(key) ? null : this.array(key);
  }

  private isAbsent(key: string): boolean {
    const v = this.data[key];
    return v === undefined || v === null;
  }
}

function hasHoles(array: unknown[]): boolean {
  for (let i = 0; i < array.length; i++) {
    if (!(i in array)) {
      return true;
    }
  }
  return false;
}

/** A value read from the wire, or why it could not be read. */
export type Parsed<T> = { value: T } | { error: string };

/**
 * Reads `value` with `read`. A shape error becomes `{ error }`, so this never
 * throws.
 */
export function parseWith<T>(
  value: unknown,
  path: string,
  read: (r: FieldReader) => T
): Parsed<T> {
  try {
    return { value: read(FieldReader.of(value, path)) };
  } catch (e) {
    return {
      error:
        e instanceof ShapeError
          ? e.message
          : `could not read ${path}: ${String(e)}`
    };
  }
}
