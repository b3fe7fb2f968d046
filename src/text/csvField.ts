/**
 * One field of a CSV export (the cell history's, the allocation sites').
 *
 * RFC 4180: a field with a comma, a double quote, a line break or
 * surrounding spaces is quoted, and its double quotes doubled. Text that
 * comes from the kernel and starts with = + - @, a tab or a carriage return
 * gets a leading apostrophe, so that a spreadsheet does not run it as a
 * formula; numbers are written as they are (a negative one is no formula).
 */

/** A value that a CSV export can hold in one field. */
export type CsvValue = string | number | boolean | null;

/** `isText`: the value is text from the kernel, to defuse as a formula. */
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
