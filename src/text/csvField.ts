/**
 * One field of a CSV export, such as the cell history's or the allocation
 * sites'.
 *
 * As RFC 4180 requires, a field with a comma, a double quote, a line break
 * or surrounding spaces is quoted, and its double quotes are doubled. Text
 * that comes from the kernel and starts with = + - @, a tab or a carriage
 * return gets a leading apostrophe, so that a spreadsheet does not run it as
 * a formula. Numbers are written as they are, because a negative number is
 * not a formula.
 */

/** A value that a CSV export can hold in one field. */
export type CsvValue = string | number | boolean | null;

/**
 * Writes one field. `isText` says that the value is text from the kernel,
 * which must be kept from running as a formula.
 */
export function csvField(value: CsvValue, isText = false): string {
  if (value === null) {
    return '';
  }
  let text = String(value);
  if (isText && /^[=+\-@\t\r]/.test(text)) {
    text = "'" + text;
  }
  if (/[",\r\n]/.test(text) || /^\s|\s$/.test(text)) {
    return '"' + text.replace(/"/g, '""') + '"';
  }
  return text;
}
