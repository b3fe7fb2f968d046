/**
 * The steps of the estimate commands: ask which objects to estimate with
 * (offering the names the kernel finds), ask before real steps, run the
 * estimate in the active kernel while the Memory tab shows its progress,
 * say how it went; and insert the cell of one remedy of the last estimate.
 * estimateCommands.ts registers the commands and loads this module with
 * the first use rather than with the page.
 */
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import type { EstimateRequestFields } from '../../kernel/connectionRequests';
import { confirmSentences } from '../../ui/confirmDialog';
import { trans } from '../../text/translation';
import { insertCodeCell } from '../snippets/insertSnippet';
import type { EstimateCandidates } from './EstimateDialog';
import type { IEstimateCommandOptions } from './estimateHost';
import type { EstimateState } from './MemoryEstimate';
import { estimateCell, snippetNames } from './estimateSnippets';
import { verdictSentence } from './estimateText';

/** What the command flow needs besides the plugin's options. */
export interface IEstimateHost extends IEstimateCommandOptions {
  /** Shows the Memory tab, where the estimate shows. */
  showMemory: () => void;
  /** Defaults to the estimate dialog; tests answer directly. */
  ask?: (
    candidates: EstimateCandidates,
    initial: Partial<EstimateRequestFields>
  ) => Promise<EstimateRequestFields | null>;
  /** Defaults to a confirmation dialog; tests answer directly. */
  confirmRealSteps?: (request: EstimateRequestFields) => Promise<boolean>;
}

function strings(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((v): v is string => typeof v === 'string').slice(0, 20)
    : [];
}

/** The names a `notebook_names` answer offers for each field of the dialog. */
export function candidatesOf(answer: unknown): EstimateCandidates {
  const data =
    typeof answer === 'object' && answer !== null && !Array.isArray(answer)
      ? (answer as { [key: string]: unknown })
      : {};
  return {
    model: strings(data.model),
    optimizer: strings(data.optimizer),
    loss: strings(data.loss),
    batch: strings(data.batch)
  };
}

/** The request the command's arguments make on their own, if they name a model and a batch. */
export function requestOfArgs(
  args: ReadonlyPartialJSONObject
): Partial<EstimateRequestFields> {
  const text = (key: string) =>
    typeof args[key] === 'string' ? (args[key] as string) : undefined;
  const request: Partial<EstimateRequestFields> = {};
  for (const key of ['model', 'batch', 'optimizer', 'loss'] as const) {
    const value = text(key);
    if (value !== undefined) {
      request[key] = value;
    }
  }
  const sizes = args.batchSizes;
  if (
    Array.isArray(sizes) &&
    sizes.length &&
    sizes.every(s => Number.isInteger(s))
  ) {
    request.batch_sizes = sizes as [number, ...number[]];
  }
  if (typeof args.margin === 'number') {
    request.margin = args.margin;
  }
  if (typeof args.cardBytes === 'number') {
    request.card_bytes = args.cardBytes;
  }
  if (typeof args.realStep === 'boolean') {
    request.real_step = args.realStep;
  }
  return request;
}

async function askDefault(
  candidates: EstimateCandidates,
  initial: Partial<EstimateRequestFields>
): Promise<EstimateRequestFields | null> {
  return (await import('./EstimateDialog')).askEstimate(candidates, initial);
}

function confirmRealDefault(request: EstimateRequestFields): Promise<boolean> {
  return confirmSentences({
    title: trans.__('Run real training steps?'),
    role: 'estimate-real-step-dialog',
    sentences: [
      trans.__(
        'Fake tensors could not run %1. A real training step can be measured instead, at two small batch sizes, on the model’s own device, and extrapolated.',
        request.model
      ),
      trans.__(
        'The parameters, gradients, buffers, optimizer state, random number generators and training mode are copied first and put back afterwards. It allocates real memory while it runs, and resets PyTorch’s peak-memory counter.'
      )
    ],
    accept: trans.__('Run real steps'),
    acceptAriaLabel: trans.__('Run real training steps of %1', request.model)
  });
}

/**
 * Runs the estimate command: resolves with the estimate's final state, or
 * null when nothing was asked of the kernel (no kernel, the user cancelled).
 * With `{model, batch, ask: false}` it runs without the dialog.
 */
export async function estimateMemory(
  args: ReadonlyPartialJSONObject,
  host: IEstimateHost
): Promise<EstimateState | null> {
  const estimate = host.current();
  if (!estimate?.canEstimate) {
    host.notify(
      'info',
      trans.__(
        'Open a notebook with a Python kernel to estimate a training step.'
      )
    );
    return null;
  }
  const given = requestOfArgs(args);
  let request: EstimateRequestFields | null;
  if (args.ask === false && given.model && given.batch) {
    request = { ...given, model: given.model, batch: given.batch };
  } else {
    const candidates = candidatesOf(
      await host.notebookNames().catch(() => null)
    );
    request = await (host.ask ?? askDefault)(candidates, given);
  }
  if (!request) {
    return null;
  }
  if (request.real_step && args.confirmed !== true) {
    if (!(await (host.confirmRealSteps ?? confirmRealDefault)(request))) {
      return null;
    }
  }
  host.showMemory();
  const state = await estimate.run(request);
  if (state.status === 'failed') {
    host.notify('error', trans.__('The estimate failed: %1', state.error));
  } else if (state.status === 'done') {
    host.notify(
      state.result.status === 'refused' ? 'warning' : 'success',
      verdictSentence(state.result, host.units())
    );
  }
  return state;
}

/**
 * Inserts the cell of the remedy `args.variant` of the active kernel's last
 * estimate into the active notebook; resolves with its index and code, or
 * null when there is nothing to insert.
 */
export async function insertEstimateCell(
  args: ReadonlyPartialJSONObject,
  host: IEstimateHost
): Promise<{ index: number; code: string } | null> {
  const state = host.current()?.state;
  const panel = host.notebook();
  const variantId = typeof args.variant === 'string' ? args.variant : 'plain';
  if (!panel || state?.status !== 'done') {
    host.notify(
      'info',
      trans.__(
        'Estimate a training step first, in the notebook to insert into.'
      )
    );
    return null;
  }
  const variant = state.result.variants.find(v => v.variant === variantId);
  const loaders = strings(
    (
      (await host.notebookNames().catch(() => null)) as {
        dataloader?: unknown;
      } | null
    )?.dataloader
  );
  const code =
    variant &&
    estimateCell(
      state.result,
      variant,
      snippetNames(state.result, loaders[0] ?? null),
      host.units()
    );
  if (!code) {
    host.notify(
      'info',
      trans.__('That estimate has no batch size that fits to fill in.')
    );
    return null;
  }
  const index = insertCodeCell(panel.content, code, 'below');
  if (index === null) {
    return null;
  }
  host.app.shell.activateById(panel.id);
  return { index, code };
}
