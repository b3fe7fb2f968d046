/**
 * The placeholders that a snippet's code may use, such as `{{model}}` and
 * `{{optimizer}}`. Reading the setting checks this vocabulary at start-up,
 * so it lives apart from the rendering (snippet.ts), which loads only with
 * the first insertion.
 */

/** The placeholders a snippet may use, such as `{{model}}` and `{{optimizer}}`. */
export type PlaceholderKey =
  'model' | 'optimizer' | 'dataloader' | 'loss' | 'scaler';

/** Every placeholder a snippet may use, without its braces. */
export const PLACEHOLDER_KEYS: readonly PlaceholderKey[] = [
  'model',
  'optimizer',
  'dataloader',
  'loss',
  'scaler'
];

/**
 * The placeholder `{{eval_dataloader}}`, for the loader an evaluation loop
 * reads. It is not a PlaceholderKey because it is filled in differently, from
 * the evaluation loaders only (see snippet.ts).
 */
export const EVAL_DATALOADER = 'eval_dataloader';

/**
 * The pattern that finds a placeholder, such as `{{model}}`, in a snippet's
 * code.
 */
export const PLACEHOLDER_PATTERN = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;

/** Tells whether a word is the name of a known placeholder. */
export function isPlaceholderKey(key: string): key is PlaceholderKey {
  return (PLACEHOLDER_KEYS as readonly string[]).includes(key);
}

/** Returns the placeholders that a piece of code uses and `renderSnippet` does not know. */
export function unknownPlaceholders(code: readonly string[]): string[] {
  const unknown = new Set<string>();
  for (const line of code) {
    for (const match of line.matchAll(PLACEHOLDER_PATTERN)) {
      if (!isPlaceholderKey(match[1]) && match[1] !== EVAL_DATALOADER) {
        unknown.add(match[1]);
      }
    }
  }
  return Array.from(unknown);
}
