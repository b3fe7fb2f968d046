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
 * `below`: under the active cell. `top`: first cell of the notebook, for
 * settings that must be made before the framework initialises.
 */
export type SnippetPlacement = 'below' | 'top';

/** What must not be initialised yet for the snippet to take effect. */
export type SnippetRequiresFresh = 'cuda' | 'tensorflow' | null;

/**
 * One code snippet of the out-of-memory playbook, as the `snippets` setting
 * lists it.
 */
export interface Snippet {
  /** kebab-case, unique. */
  id: string;
  title: string;
  description: string;
  framework: SnippetFramework;
  placement: SnippetPlacement;
  requiresFresh: SnippetRequiresFresh;
  /** Hidden snippets stay out of the palette, the menu and the sidebar. */
  hidden: boolean;
  /**
   * The extension's own snippet (snippetSettings.ts): read from the
   * installed version, whatever copy of it the user's settings hold.
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
 * `{{eval_dataloader}}`: the loader an evaluation loop reads. The kernel
 * reports data loaders of every kind together; the one whose name has the
 * word val, valid, validation, test, eval, dev or holdout is taken, else
 * `val_loader` (an evaluation snippet
 * that looped over the training data would evaluate on what it learnt).
 */
const DEFAULT_EVAL_DATALOADER = 'val_loader';
// Whole words of the name ("val_loader", "test_dl", "loader_eval2"), not
// letters inside another word ("latest_loader", "device_loader", "interval_loader").
const EVAL_NAME = /(^|_)(val|valid|validation|test|eval|dev|holdout)(_|\d|$)/i;

/** The data loaders found whose names say they hold evaluation data. */
function evalLoadersFound(names: SnippetNames | null | undefined): string[] {
  const found = names?.dataloader;
  return Array.isArray(found)
    ? found.filter(name => isUsableName(name) && EVAL_NAME.test(name))
    : [];
}

/** The name `{{eval_dataloader}}` is replaced by. */
export function chooseEvalLoader(
  names: SnippetNames | null | undefined
): string {
  return evalLoadersFound(names)[0] ?? DEFAULT_EVAL_DATALOADER;
}

/** Names found in the kernel per placeholder, best first (may be partial). */
export type SnippetNames = Partial<Record<PlaceholderKey, readonly string[]>>;

/** `{{word}}` tokens; the word is what we look up. */

/** A public Python identifier (what the kernel may bind a model to). */
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
 * The first usable name found for a placeholder, if any. `{{dataloader}}` is
 * the loader a snippet trains on or takes a batch from: an evaluation loader
 * (`val_loader`, `test_dl`) is never taken for it, since training on held-out
 * data would go unnoticed; without another one it gets the default name (and
 * the cell a TODO line).
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

/** The name a placeholder is replaced by: the first usable one found, else the default. */
export function chooseName(
  key: PlaceholderKey,
  names: SnippetNames | null | undefined
): string {
  return nameFound(key, names) ?? DEFAULT_PLACEHOLDER_NAMES[key];
}

type NamedKey = PlaceholderKey | typeof EVAL_DATALOADER;

/** What the kernel looks for, per placeholder, in the words of a TODO line. */
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
 * Whether the code binds the placeholder before reading it (`{{scaler}} =
 * GradScaler(...)` creates the scaler): its first use is the target of a plain
 * assignment that does not also read it.
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
 * Comment lines for the placeholders that got a default name because the
 * kernel has nothing of their kind (or was not asked): the cell still runs the
 * default name, so the user must learn that it is a stand-in, not theirs.
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
 * The snippet's code, ready for a cell: every known `{{key}}` replaced by the
 * first name the kernel found for it (else the default placeholder name),
 * lines joined with newlines. Unknown placeholders are left as they are (a
 * user's own template text is not ours to remove); settings parsing warns
 * about them.
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
 * Index of the new cell: `top` is 0; `below` is just under the active cell
 * (0 when there is none), within [0, cellCount].
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

/** The flags of a sample (`torch.cuda_initialized`, `tensorflow.gpus_initialized`). */
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

/** The sentence that asks for a restart, for the framework initialised too early. */
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
 * Whether the kernel must restart for the snippet to take effect: its
 * `requiresFresh` framework is already initialised. The kernel's answer to
 * `notebook_names` is the freshest word; where it has no flag, the latest
 * sample decides; where neither knows, no warning.
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
