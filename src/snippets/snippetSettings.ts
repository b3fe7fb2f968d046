/**
 * The `snippets` setting, read again in code: the settings editor's raw JSON
 * mode lets a user type anything, and the schema cannot say "ids are
 * unique". Invalid entries are skipped with a reason (logged, never thrown);
 * the first of two snippets with one id wins.
 */
import { DEFAULT_SNIPPETS } from './defaultSnippets';
import { Snippet, unknownPlaceholders } from './snippet';

export interface SnippetSettings {
  /** Every valid snippet, hidden ones included, in settings order. */
  all: Snippet[];
  /** The ones shown in the palette, the toolbar menu and the sidebar. */
  visible: Snippet[];
  /** Why entries were skipped (or kept with a doubt), one sentence each. */
  problems: string[];
}

const ID_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

const REQUIRED = [
  'id',
  'title',
  'description',
  'framework',
  'placement',
  'requiresFresh',
  'code'
];

/** Every field a snippet may have: the required ones and `hidden`. */
const FIELDS = new Set([...REQUIRED, 'hidden']);

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One entry of the setting, or why it is not a snippet. */
export function parseSnippet(
  value: unknown
): { snippet: Snippet } | { error: string } {
  if (!isObject(value)) {
    return { error: 'not an object' };
  }
  const extra = Object.keys(value).filter(key => !FIELDS.has(key));
  if (extra.length) {
    return { error: `unknown field(s) ${extra.map(k => `"${k}"`).join(', ')}` };
  }
  const missing = REQUIRED.filter(key => !(key in value));
  if (missing.length) {
    return {
      error: `missing field(s) ${missing.map(k => `"${k}"`).join(', ')}`
    };
  }
  const {
    id,
    title,
    description,
    framework,
    placement,
    requiresFresh,
    code
  } = value;
  const hidden = value.hidden ?? false;
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
    return { error: '"id" must be a kebab-case string' };
  }
  if (typeof title !== 'string' || title.trim() === '') {
    return { error: '"title" must be a non-empty string' };
  }
  if (typeof description !== 'string') {
    return { error: '"description" must be a string' };
  }
  if (framework !== 'torch' && framework !== 'tensorflow') {
    return { error: '"framework" must be "torch" or "tensorflow"' };
  }
  if (placement !== 'below' && placement !== 'top') {
    return { error: '"placement" must be "below" or "top"' };
  }
  if (
    requiresFresh !== null &&
    requiresFresh !== 'cuda' &&
    requiresFresh !== 'tensorflow'
  ) {
    return { error: '"requiresFresh" must be "cuda", "tensorflow" or null' };
  }
  if (typeof hidden !== 'boolean') {
    return { error: '"hidden" must be true or false' };
  }
  if (
    !Array.isArray(code) ||
    code.length === 0 ||
    !code.every(line => typeof line === 'string')
  ) {
    return { error: '"code" must be a non-empty array of strings (lines)' };
  }
  return {
    snippet: {
      id,
      title,
      description,
      framework,
      placement,
      requiresFresh,
      hidden,
      code: [...code]
    }
  };
}

/**
 * The snippets of the settings' composite value. A composite without a
 * `snippets` array (no settings registry) reads as the default list.
 */
export function readSnippetSettings(composite: unknown): SnippetSettings {
  const raw = isObject(composite) ? composite.snippets : undefined;
  const entries: readonly unknown[] = Array.isArray(raw)
    ? raw
    : DEFAULT_SNIPPETS;
  const problems: string[] = [];
  if (raw !== undefined && !Array.isArray(raw)) {
    problems.push('"snippets" is not an array: using the default snippets');
  }
  const all: Snippet[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    const parsed = parseSnippet(entry);
    const label = `snippet ${i + 1}${
      isObject(entry) && typeof entry.id === 'string' ? ` ("${entry.id}")` : ''
    }`;
    if ('error' in parsed) {
      problems.push(`Skipped ${label}: ${parsed.error}`);
      return;
    }
    const snippet = parsed.snippet;
    if (seen.has(snippet.id)) {
      problems.push(
        `Skipped ${label}: another snippet before it has the id "${snippet.id}"`
      );
      return;
    }
    seen.add(snippet.id);
    const unknown = unknownPlaceholders(snippet.code);
    if (unknown.length) {
      problems.push(
        `${label} uses unknown placeholder(s) ${unknown
          .map(u => `{{${u}}}`)
          .join(', ')}: they are left as they are`
      );
    }
    all.push(snippet);
  });
  return { all, visible: all.filter(s => !s.hidden), problems };
}

/** Log the problems of a reading (once per change of settings). */
export function warnAboutSnippetProblems(settings: SnippetSettings): void {
  for (const problem of settings.problems) {
    console.warn(`jupyterlab-vram: snippets setting: ${problem}`);
  }
}
