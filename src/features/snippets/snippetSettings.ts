/**
 * Reads the `snippets` setting again in code, because the settings editor's
 * raw JSON mode lets a user type anything, and the schema cannot say that
 * ids are unique. Invalid entries are skipped with a reason, which is
 * logged and never thrown, and the first of two snippets with one id wins.
 *
 * Built-in snippets follow the installed version. JupyterLab's Settings
 * Editor writes the whole composite into the user's settings when any one
 * setting changes, so the default list lands there, frozen at that version,
 * and would hide every later fix. An entry marked `builtin` (every default
 * is), or one with a default snippet's id and title (such a copy from before
 * the mark), is read as today's default with the entry's `hidden`; a list
 * that holds built-ins also gets the defaults it lacks. A list without any
 * is the user's own and replaces the defaults.
 */
import { unknownPlaceholders } from './placeholders';
import type { Snippet } from './snippet';

/**
 * The `snippets` setting after it was checked: the valid snippets and the
 * reasons for skipping the others.
 */
export interface SnippetSettings {
  /** Every valid snippet, hidden ones included, in settings order. */
  all: Snippet[];
  /** The ones shown in the palette, the toolbar menu and the sidebar. */
  visible: Snippet[];
  /**
   * Why entries were skipped, or kept despite a doubt such as an unknown
   * placeholder, one sentence each.
   */
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

/** Every field a snippet may have: the required ones, `hidden` and `builtin`. */
const FIELDS = new Set([...REQUIRED, 'hidden', 'builtin']);

/** Returns the valid entries of `defaults`, the default snippets, by id. */
export function builtinSnippets(
  defaults: readonly unknown[]
): Map<string, Snippet> {
  const builtins = new Map<string, Snippet>();
  for (const entry of defaults) {
    const parsed = parseSnippet(entry);
    if ('snippet' in parsed && !builtins.has(parsed.snippet.id)) {
      builtins.set(parsed.snippet.id, parsed.snippet);
    }
  }
  return builtins;
}

/**
 * Returns today's default for `snippet` when it is a built-in or a copy of
 * one, and null when it is the user's own.
 */
function builtinFor(
  builtins: ReadonlyMap<string, Snippet>,
  snippet: Snippet
): Snippet | null {
  const current = builtins.get(snippet.id);
  if (!current) {
    return null;
  }
  return snippet.builtin || snippet.title === current.title ? current : null;
}

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads one entry of the setting, or says why it is not a snippet. */
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
  const { id, title, description, framework, placement, requiresFresh, code } =
    value;
  const hidden = value.hidden ?? false;
  const builtin = value.builtin ?? false;
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
  if (typeof builtin !== 'boolean') {
    return { error: '"builtin" must be true or false' };
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
      ...(builtin ? { builtin } : {}),
      code: [...code]
    }
  };
}

/**
 * Reads the snippets of the settings' composite value. `defaults` is the
 * default list of the installed version: the schema's default as the settings
 * registry gives it, or else defaultSnippets.ts, which is generated from it.
 * `builtinById` holds the valid entries of `defaults`, so that a caller that
 * reads often can parse them once. A composite without a `snippets` array,
 * which is what a host without a settings registry gives, reads as the
 * default list.
 */
export function readSnippetSettings(
  composite: unknown,
  defaults: readonly unknown[],
  builtinById: ReadonlyMap<string, Snippet> = builtinSnippets(defaults)
): SnippetSettings {
  const raw = isObject(composite) ? composite.snippets : undefined;
  const entries: readonly unknown[] = Array.isArray(raw) ? raw : defaults;
  const problems: string[] = [];
  if (raw !== undefined && !Array.isArray(raw)) {
    problems.push('"snippets" is not an array: using the default snippets');
  }
  const all: Snippet[] = [];
  const seen = new Set<string>();
  let builtins = 0;
  entries.forEach((entry, i) => {
    const parsed = parseSnippet(entry);
    const label = `snippet ${i + 1}${
      isObject(entry) && typeof entry.id === 'string' ? ` ("${entry.id}")` : ''
    }`;
    if ('error' in parsed) {
      problems.push(`Skipped ${label}: ${parsed.error}`);
      return;
    }
    const current = builtinFor(builtinById, parsed.snippet);
    if (parsed.snippet.builtin && !current) {
      problems.push(
        `Skipped ${label}: a built-in snippet this version no longer has`
      );
      return;
    }
    if (current) {
      builtins += 1;
    }
    const snippet: Snippet = current
      ? { ...current, code: [...current.code], hidden: parsed.snippet.hidden }
      : parsed.snippet;
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
  if (builtins > 0) {
    // The list is a copy of the defaults from an earlier version, so it also
    // gets the defaults added since then.
    for (const snippet of builtinById.values()) {
      if (!seen.has(snippet.id)) {
        all.push({ ...snippet, code: [...snippet.code] });
      }
    }
  }
  return { all, visible: all.filter(s => !s.hidden), problems };
}

/** Logs the problems of a reading; callers do so once per change of settings. */
export function warnAboutSnippetProblems(settings: SnippetSettings): void {
  for (const problem of settings.problems) {
    console.warn(`jupyterlab-vram: snippets setting: ${problem}`);
  }
}
