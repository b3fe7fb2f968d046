/**
 * The words of a failure, for the sentences the panel and notifications show.
 */

/** The message of a rejection, for a sentence shown to the user. */
export function errorText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
