/**
 * The answer to the `notebook_names` request (docs/protocol.md), which says
 * which names of the user's namespace hold a model, an optimizer, a data
 * loader, a loss and a grad scaler, and what the kernel has initialised.
 *
 * The answer is untrusted JSON, like every kernel message, so
 * `parseNotebookNames` never throws. Whatever is malformed reads as "nothing
 * found", and the snippet then gets its default placeholder names, or as
 * "unknown".
 */
import { PLACEHOLDER_KEYS, PlaceholderKey } from './placeholders';
import { isUsableName, RuntimeFlags } from './snippet';

/** At most this many names per kind are kept; the protocol sends at most 20. */
const MAX_NAMES = 20;

/** The kernel's answer to the `notebook_names` request, checked and typed. */
export interface NotebookNames {
  names: Record<PlaceholderKey, string[]>;
  runtime: RuntimeFlags;
  /** Whether torch and TensorFlow are imported, or null when unknown. */
  torchImported: boolean | null;
  tensorflowImported: boolean | null;
}

/** Returns the answer that knows nothing, which a malformed reply reads as. */
export function emptyNotebookNames(): NotebookNames {
  return {
    names: { model: [], optimizer: [], dataloader: [], loss: [], scaler: [] },
    runtime: { cudaInitialized: null, tensorflowInitialized: null },
    torchImported: null,
    tensorflowImported: null
  };
}

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function flag(value: unknown): boolean | null {
  return typeof value === 'boolean' ? value : null;
}

/** Reads a `notebook_names` result. It never throws. */
export function parseNotebookNames(result: unknown): NotebookNames {
  const parsed = emptyNotebookNames();
  if (!isObject(result)) {
    return parsed;
  }
  for (const key of PLACEHOLDER_KEYS) {
    const list = result[key];
    if (Array.isArray(list)) {
      parsed.names[key] = list.filter(isUsableName).slice(0, MAX_NAMES);
    }
  }
  const runtime = result.runtime;
  if (isObject(runtime)) {
    parsed.runtime = {
      cudaInitialized: flag(runtime.cuda_initialized),
      tensorflowInitialized: flag(runtime.tensorflow_initialized)
    };
    parsed.torchImported = flag(runtime.torch_imported);
    parsed.tensorflowImported = flag(runtime.tensorflow_imported);
  }
  return parsed;
}

/** What `fetchNotebookNames` needs to know of the kernel's model. */
export interface INamesSource {
  readonly state: string;
  readonly kernelBusy: boolean;
}

/**
 * Asks the helper for the notebook's names, or gives up at once, because a
 * busy kernel queues comm requests behind the running cell, and a helper
 * that is not live cannot answer. It resolves with null, meaning that the
 * placeholders are used, rather than rejecting.
 */
export async function fetchNotebookNames(
  source: INamesSource | null,
  request: (() => Promise<unknown>) | null
): Promise<NotebookNames | null> {
  if (!source || !request || source.state !== 'live' || source.kernelBusy) {
    return null;
  }
  try {
    return parseNotebookNames(await request());
  } catch (reason) {
    console.warn(
      'jupyterlab-vram: no notebook names, using placeholders.',
      reason
    );
    return null;
  }
}
