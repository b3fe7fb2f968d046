/**
 * The test of whether a figure of a diagnosis is worth a sentence, shared
 * by the modules that word a diagnosis and those that offer its fixes.
 */

/**
 * Tells whether a figure is worth giving in a sentence. An unknown one would
 * print as a dash, and "0 B" for a holder or process that the kernel could
 * not size is not a real figure. Without one, a sentence says the same thing
 * without the number.
 */
export function known(v: number | null | undefined): v is number {
  return typeof v === 'number' && v > 0;
}
