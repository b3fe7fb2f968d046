/**
 * The code snippets of the out-of-memory playbook, as pure functions that
 * say what a snippet is, how its placeholders are filled in, where its cell
 * goes, and whether the kernel must restart for it to take effect. They use
 * neither the DOM nor JupyterLab; the snippet commands (snippetCommands.ts)
 * and the views build on them.
 */
import { SampleMessage } from '../../protocol/sample';
import {
  EVAL_DATALOADER,
  isPlaceholderKey,
  PLACEHOLDER_PATTERN,
  PlaceholderKey
} from './placeholders';
import { trans } from '../../text/translation';

/** The framework a snippet is written for. */
export type SnippetFramework = 'torch' | 'tensorflow';

/**
 * Where a snippet's cell goes. `below` puts it under the active cell; `top`
 * makes it the notebook's first cell, for settings that must be made before
 * the framework initialises.
 */
export type SnippetPlacement = 'below' | 'top';

/** What must not be initialised yet for the snippet to take effect. */
export type SnippetRequiresFresh = 'cuda' | 'tensorflow' | null;

/**
 * One code snippet of the out-of-memory playbook, as the `snippets` setting
 * lists it.
 */
export interface Snippet {
  /** The snippet's id, in kebab-case and unique within the list. */
  id: string;
  title: string;
  description: string;
  framework: SnippetFramework;
  placement: SnippetPlacement;
  requiresFresh: SnippetRequiresFresh;
  /** Hidden snippets stay out of the palette, the menu and the sidebar. */
  hidden: boolean;
  /**
   * Marks the extension's own snippet, which is read from the installed
   * version whatever copy of it the user's settings hold (see
   * snippetSettings.ts).
   */
  builtin?: boolean;
  /** Lines of Python, with {{placeholder}} tokens. */
  code: string[];
}

/** The name a placeholder gets when the kernel found nothing of its kind. */
export const DEFAULT_PLACEHOLDER_NAMES: Readonly<
  Record<PlaceholderKey, string>
> = Object.freeze({
  model: 'model',
  optimizer: 'optimizer',
  dataloader: 'train_loader',
  loss: 'criterion',
  scaler: 'scaler'
});

/**
 * The default name of `{{eval_dataloader}}`, the loader an evaluation loop
 * reads. The kernel reports data loaders of every kind together, so the first
 * one whose name has the word val, valid, validation, test, eval, dev or
 * holdout is taken, and `val_loader` otherwise. A training loader is never
 * taken, because an evaluation snippet that looped over the training data
 * would evaluate on what the model learnt.
 */
const DEFAULT_EVAL_DATALOADER = 'val_loader';
// The pattern matches whole words of the name ("val_loader", "test_dl",
// "loader_eval2"), not letters inside another word ("latest_loader",
// "device_loader", "interval_loader"), so that a training loader is not
// mistaken for an evaluation one.
const EVAL_NAME = /(^|_)(val|valid|validation|test|eval|dev|holdout)(_|\d|$)/i;

/** The data loaders found whose names say they hold evaluation data. */
function evalLoadersFound(names: SnippetNames | null | undefined): string[] {
  const found = names?.dataloader;
  return Array.isArray(found)
    ? found.filter(name => isUsableName(name) && EVAL_NAME.test(name))
    : [];
}

/** Returns the name that replaces `{{eval_dataloader}}`. */
export function chooseEvalLoader(
  names: SnippetNames | null | undefined
): string {
  return evalLoadersFound(names)[0] ?? DEFAULT_EVAL_DATALOADER;
}

/**
 * The names the kernel found for each placeholder, best first. A placeholder
 * may be missing when the kernel found nothing of its kind.
 */
export type SnippetNames = Partial<Record<PlaceholderKey, readonly string[]>>;

/**
 * Matches a public Python identifier, one that does not start with an
 * underscore, such as a name the user bound a model to.
 */
const PUBLIC_IDENTIFIER = /^[A-Za-z][A-Za-z0-9_]*$/;

const PYTHON_KEYWORDS = new Set([
  'False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await',
  'break', 'class', 'continue', 'def', 'del', 'elif', 'else', 'except',
  'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is',
  'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise', 'return', 'try',
  'while', 'with', 'yield'
]); // prettier-ignore

/** True when `name` can stand in the code as a variable name. */
export function isUsableName(name: unknown): name is string {
  return (
    typeof name === 'string' &&
    PUBLIC_IDENTIFIER.test(name) &&
    !PYTHON_KEYWORDS.has(name)
  );
}

/**
 * Returns the first usable name found for a placeholder, if any.
 * `{{dataloader}}` is the loader that a snippet trains on or takes a batch
 * from, so an evaluation loader (`val_loader`, `test_dl`) is never taken for
 * it: training on held-out data would go unnoticed. Without another loader it
 * gets the default name, and the cell gets a TODO line.
 */
function nameFound(
  key: PlaceholderKey,
  names: SnippetNames | null | undefined
): string | undefined {
  const found = names?.[key];
  return Array.isArray(found)
    ? found.find(
        name =>
          isUsableName(name) && (key !== 'dataloader' || !EVAL_NAME.test(name))
      )
    : undefined;
}

/**
 * Returns the name that replaces a placeholder: the first usable one found, or
 * else the default.
 */
export function chooseName(
  key: PlaceholderKey,
  names: SnippetNames | null | undefined
): string {
  return nameFound(key, names) ?? DEFAULT_PLACEHOLDER_NAMES[key];
}

type NamedKey = PlaceholderKey | typeof EVAL_DATALOADER;

/** Says in a TODO line's words what the kernel looks for, per placeholder. */
const KIND_WORDS: Readonly<Record<NamedKey, string>> = Object.freeze({
  model: 'model (nn.Module)',
  optimizer: 'optimizer',
  dataloader: 'training DataLoader',
  loss: 'loss function (nn loss module)',
  scaler: 'GradScaler',
  eval_dataloader: 'evaluation DataLoader (a name with val, test or eval)'
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Tells whether the code binds the placeholder before reading it, as
 * `{{scaler}} = GradScaler(...)` creates the scaler. That is the case when its
 * first use is the target of a plain assignment that does not also read it;
 * such a placeholder needs no TODO line.
 */
function assignedFirst(code: readonly string[], key: NamedKey): boolean {
  const token = `{{${key}}}`;
  const line = code.find(text => text.includes(token));
  if (line === undefined) {
    return false;
  }
  const target = new RegExp(`^\\s*${escapeRegExp(token)}\\s*=(?!=)`);
  return target.test(line) && line.indexOf(token, line.indexOf(token) + 1) < 0;
}

/**
 * Returns comment lines for the placeholders that got a default name because
 * the kernel has nothing of their kind, or was not asked. The cell still runs
 * with the default name, so the user must learn that it is a stand-in, not
 * their own.
 */
export function missingNameNotes(
  code: readonly string[],
  names: SnippetNames | null | undefined
): string[] {
  const used: NamedKey[] = [];
  for (const line of code) {
    for (const match of line.matchAll(PLACEHOLDER_PATTERN)) {
      const key = match[1];
      if (
        (isPlaceholderKey(key) || key === EVAL_DATALOADER) &&
        !used.includes(key) &&
        !assignedFirst(code, key)
      ) {
        used.push(key);
      }
    }
  }
  const defaultName = (key: NamedKey) =>
    key === EVAL_DATALOADER
      ? DEFAULT_EVAL_DATALOADER
      : DEFAULT_PLACEHOLDER_NAMES[key];
  if (!names) {
    return used.length === 0
      ? []
      : [
          '# TODO: the kernel did not say which names it has (busy or not connected): ' +
            `${used.map(key => '`' + defaultName(key) + '`').join(', ')} ` +
            (used.length === 1 ? 'stands' : 'stand') +
            ' in for your own below'
        ];
  }
  return used
    .filter(key =>
      key === EVAL_DATALOADER
        ? evalLoadersFound(names).length === 0
        : nameFound(key, names) === undefined
    )
    .map(key => {
      const name = defaultName(key);
      const evalOnly = key === 'dataloader' ? evalLoadersFound(names) : [];
      const why =
        evalOnly.length > 0
          ? ` (${evalOnly.join(', ')} ${evalOnly.length === 1 ? 'is' : 'are'} for evaluation)`
          : '';
      return `# TODO: no ${KIND_WORDS[key]} found in the kernel${why}: define \`${name}\` or change the name below`;
    });
}

/**
 * Returns the snippet's code ready for a cell, with its lines joined by
 * newlines. Every known `{{key}}` is replaced by the first name the kernel
 * found for it, or else by the default placeholder name. Unknown placeholders
 * are left as they are, because a user's own template text is not the
 * extension's to remove; reading the settings warns about them.
 */
export function renderSnippet(
  snippet: Pick<Snippet, 'code'>,
  names?: SnippetNames | null
): string {
  const lines = [...snippet.code];
  // A cell magic (`%%time`) must stay the cell's first line.
  const at = lines.length > 0 && lines[0].trimStart().startsWith('%%') ? 1 : 0;
  lines.splice(at, 0, ...missingNameNotes(snippet.code, names));
  return lines
    .join('\n')
    .replace(PLACEHOLDER_PATTERN, (token, key: string) =>
      isPlaceholderKey(key)
        ? chooseName(key, names)
        : key === EVAL_DATALOADER
          ? chooseEvalLoader(names)
          : token
    );
}

/**
 * Returns the index of the new cell. `top` gives 0; `below` gives the index
 * just under the active cell, or 0 when there is none, kept within
 * [0, cellCount].
 */
export function placementIndex(
  placement: SnippetPlacement,
  activeCellIndex: number,
  cellCount: number
): number {
  if (placement === 'top') {
    return 0;
  }
  const below =
    Number.isInteger(activeCellIndex) && activeCellIndex >= 0
      ? activeCellIndex + 1
      : 0;
  return Math.max(0, Math.min(below, Math.max(0, cellCount)));
}

/**
 * What the kernel has already initialised. Null means unknown, because
 * there was no answer or the answer lacked the flag.
 */
export interface RuntimeFlags {
  cudaInitialized: boolean | null;
  tensorflowInitialized: boolean | null;
}

/**
 * Reads the runtime flags from a sample (`torch.cuda_initialized` and
 * `tensorflow.gpus_initialized`); without a sample they are unknown.
 */
export function runtimeFlagsOfSample(
  sample: Pick<SampleMessage, 'torch' | 'tensorflow'> | null | undefined
): RuntimeFlags {
  return {
    cudaInitialized: sample ? sample.torch.cuda_initialized : null,
    tensorflowInitialized: sample ? sample.tensorflow.gpus_initialized : null
  };
}

/**
 * Why a snippet needs a kernel restart to take effect, and the sentence that
 * says so.
 */
export interface RestartDecision {
  /** The framework the kernel initialised too early for the snippet. */
  reason: 'cuda' | 'tensorflow';
  /** The sentence shown in the notification and the sidebar. */
  message: string;
}

/** Returns the sentence that asks for a restart, for the framework initialised too early. */
export function restartMessage(reason: 'cuda' | 'tensorflow'): string {
  return reason === 'cuda'
    ? trans.__(
        'Restart the kernel for this to take effect: CUDA is already initialised in this kernel'
      )
    : trans.__(
        'Restart the kernel for this to take effect: TensorFlow is already initialised in this kernel'
      );
}

/**
 * Tells whether the kernel must restart for the snippet to take effect, which
 * is when its `requiresFresh` framework is already initialised. The kernel's
 * answer to `notebook_names` is the freshest word. Where that answer has no
 * flag, the latest sample decides, and where neither knows, no restart is
 * asked for.
 */
export function restartNeeded(
  snippet: Pick<Snippet, 'requiresFresh'>,
  reply: RuntimeFlags | null | undefined,
  sample?: RuntimeFlags | null
): RestartDecision | null {
  const fresh = snippet.requiresFresh;
  if (fresh !== 'cuda' && fresh !== 'tensorflow') {
    return null;
  }
  const key = fresh === 'cuda' ? 'cudaInitialized' : 'tensorflowInitialized';
  const initialised = reply?.[key] ?? sample?.[key] ?? false;
  return initialised === true
    ? { reason: fresh, message: restartMessage(fresh) }
    : null;
}
