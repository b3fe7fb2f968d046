/**
 * Failed kernel operations, as the helper connection and its bootstrap treat
 * them: a readable text for the panel, and futures nobody waits for.
 */

/** Describes a failed kernel operation in one line of text for the panel. */
export function describeFailure(what: string, reason: unknown): string {
  const text =
    reason instanceof Error
      ? reason.message
      : String(reason ?? 'unknown error');
  return `${what}: ${text}`;
}

/** Futures reject when a kernel restarts; nothing waits on these ones. */
export function ignoreRejection(promise: Promise<unknown> | undefined): void {
  promise?.catch(() => undefined);
}
