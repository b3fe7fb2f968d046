/**
 * How the helper connection and its bootstrap treat failed kernel
 * operations: they describe each in a readable text for the panel, and they
 * ignore the rejections of futures that nobody waits for.
 */

/** Describes a failed kernel operation in one line of text for the panel. */
export function describeFailure(what: string, reason: unknown): string {
  const text =
    reason instanceof Error
      ? reason.message
      : String(reason ?? 'unknown error');
  return `${what}: ${text}`;
}

/**
 * Ignores the rejection of a future that nothing waits for, since futures
 * reject whenever their kernel restarts.
 */
export function ignoreRejection(promise: Promise<unknown> | undefined): void {
  promise?.catch(() => undefined);
}
