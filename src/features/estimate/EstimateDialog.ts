/**
 * The question before an estimate: which model, optimizer, loss and sample
 * batch of the notebook to use (offered as the snippets find them, and
 * changeable), the batch sizes, the margin, and whether real steps may be
 * run where fake tensors cannot run the model. The names come from the
 * kernel: they go in as values and options, never as HTML.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import type { EstimateRequestFields } from '../../kernel/connectionRequests';
import { element } from '../../ui/dom';
import { trans } from '../../text/translation';

/** The names offered in the dialog, best first, per field. */
export interface EstimateCandidates {
  model: readonly string[];
  optimizer: readonly string[];
  loss: readonly string[];
  batch: readonly string[];
}

/** The most batch sizes one estimate takes, as the protocol allows. */
const MAX_BATCH_SIZES = 16;

/**
 * Reads a list of batch sizes such as "16, 32 64": the sizes, sorted and
 * without repeats; null when the text holds anything else; [] when empty.
 */
export function parseBatchSizes(text: string): number[] | null {
  const words = text.split(/[\s,;]+/).filter(Boolean);
  const sizes = new Set<number>();
  for (const word of words) {
    if (!/^\d+$/.test(word)) {
      return null;
    }
    const size = Number(word);
    if (size < 1 || size > 1048576) {
      return null;
    }
    sizes.add(size);
  }
  return sizes.size > MAX_BATCH_SIZES
    ? null
    : Array.from(sizes).sort((a, b) => a - b);
}

/** What the form holds, as typed. */
export interface EstimateFormValues {
  model: string;
  optimizer: string;
  loss: string;
  batch: string;
  batchSizes: string;
  marginPercent: string;
  /** The memory of a card to plan for, in GiB; empty for the kernel's own card. */
  cardGiB: string;
  realStep: boolean;
}

/** The most a planned card may have, in GiB (16 TiB), as the protocol allows. */
const MAX_CARD_GIB = 16384;

/** The form's first values: the request asked before, else the best candidates. */
export function initialFormValues(
  candidates: EstimateCandidates,
  initial: Partial<EstimateRequestFields>
): EstimateFormValues {
  const pick = (
    key: keyof EstimateCandidates,
    given: string | null | undefined
  ) => given ?? candidates[key][0] ?? '';
  return {
    model: pick('model', initial.model),
    optimizer: pick('optimizer', initial.optimizer),
    loss: pick('loss', initial.loss),
    batch: pick('batch', initial.batch),
    batchSizes: (initial.batch_sizes ?? []).join(', '),
    marginPercent: String(Math.round((initial.margin ?? 0.1) * 100)),
    cardGiB: initial.card_bytes ? String(initial.card_bytes / 2 ** 30) : '',
    realStep: initial.real_step ?? false
  };
}

/**
 * The request the form's values make, or an error sentence naming the
 * first field that cannot be sent.
 */
export function requestOfForm(
  values: EstimateFormValues
): EstimateRequestFields | { error: string } {
  const model = values.model.trim();
  const batch = values.batch.trim();
  if (!model) {
    return { error: trans.__('Name the model to estimate.') };
  }
  if (!batch) {
    return {
      error: trans.__(
        'Name a sample batch (a tensor, or a tuple or dict of tensors).'
      )
    };
  }
  const sizes = parseBatchSizes(values.batchSizes);
  if (sizes === null) {
    return {
      error: trans.__(
        'Batch sizes must be whole numbers from 1 to 1048576, at most %1 of them.',
        MAX_BATCH_SIZES
      )
    };
  }
  const margin = Number(values.marginPercent);
  if (
    values.marginPercent.trim() === '' ||
    !Number.isFinite(margin) ||
    margin < 0 ||
    margin > 50
  ) {
    return { error: trans.__('The margin is a percentage from 0 to 50.') };
  }
  const cardGiB = Number(values.cardGiB);
  if (
    values.cardGiB.trim() !== '' &&
    (!Number.isFinite(cardGiB) || cardGiB < 1 || cardGiB > MAX_CARD_GIB)
  ) {
    return {
      error: trans.__(
        'A card to plan for has from 1 to %1 GiB; leave it empty for the kernel’s own card.',
        MAX_CARD_GIB
      )
    };
  }
  return {
    model,
    batch,
    optimizer: values.optimizer.trim() || null,
    loss: values.loss.trim() || null,
    ...(sizes.length ? { batch_sizes: sizes as [number, ...number[]] } : {}),
    margin: margin / 100,
    ...(values.cardGiB.trim() !== ''
      ? { card_bytes: Math.round(cardGiB * 2 ** 30) }
      : {}),
    real_step: values.realStep
  };
}

/** The form of the dialog, whose value is what it holds. */
class EstimateForm
  extends Widget
  implements Dialog.IBodyWidget<EstimateFormValues>
{
  constructor(candidates: EstimateCandidates, values: EstimateFormValues) {
    super({
      node: element('div', 'jp-vram-EstimateForm', { role: 'estimate-dialog' })
    });
    const field = (
      key: keyof EstimateCandidates,
      label: string,
      hint: string
    ) => this._nameField(key, label, hint, candidates[key], values[key]);
    this._model = field('model', trans.__('Model'), trans.__('an nn.Module'));
    this._optimizer = field(
      'optimizer',
      trans.__('Optimizer'),
      trans.__('empty: no optimizer step')
    );
    this._loss = field(
      'loss',
      trans.__('Loss'),
      trans.__('empty: the sum of the output')
    );
    this._batch = field(
      'batch',
      trans.__('Sample batch'),
      trans.__('a tensor, or a tuple or dict of tensors')
    );
    this._sizes = this._input(
      'sizes',
      trans.__('Batch sizes'),
      trans.__('empty: around the sample\u2019s')
    );
    this._sizes.value = values.batchSizes;
    this._margin = this._input('margin', trans.__('Margin (%)'), '10');
    this._margin.type = 'number';
    this._margin.value = values.marginPercent;
    this._card = this._input(
      'card',
      trans.__('Plan for a card of (GiB)'),
      trans.__('empty: the kernel’s own card')
    );
    this._card.value = values.cardGiB;
    this._realStep = this._checkbox(
      trans.__(
        'Where fake tensors cannot run the model, measure one real training step at two small batch sizes (its state is put back).'
      ),
      values.realStep
    );
  }

  getValue(): EstimateFormValues {
    return {
      model: this._model.value,
      optimizer: this._optimizer.value,
      loss: this._loss.value,
      batch: this._batch.value,
      batchSizes: this._sizes.value,
      marginPercent: this._margin.value,
      cardGiB: this._card.value,
      realStep: this._realStep.checked
    };
  }

  private _nameField(
    key: string,
    label: string,
    hint: string,
    options: readonly string[],
    value: string
  ): HTMLInputElement {
    const input = this._input(key, label, hint);
    const list = element('datalist', '');
    list.id = `jp-vram-estimate-${key}-${++EstimateForm._ids}`;
    for (const name of options) {
      const option = document.createElement('option');
      option.value = name;
      list.appendChild(option);
    }
    input.setAttribute('list', list.id);
    input.value = value;
    this.node.appendChild(list);
    return input;
  }

  private _input(key: string, label: string, hint: string): HTMLInputElement {
    const row = element('label', 'jp-vram-EstimateForm-row');
    row.appendChild(
      element('span', 'jp-vram-EstimateForm-label', { text: label })
    );
    const input = element('input', 'jp-mod-styled jp-vram-EstimateForm-input', {
      role: `estimate-${key}`
    });
    input.placeholder = hint;
    input.spellcheck = false;
    row.appendChild(input);
    this.node.appendChild(row);
    return input;
  }

  private _checkbox(label: string, checked: boolean): HTMLInputElement {
    const row = element('label', 'jp-vram-EstimateForm-check');
    const box = element('input', '', { role: 'estimate-real-step' });
    box.type = 'checkbox';
    box.checked = checked;
    row.append(box, element('span', '', { text: label }));
    this.node.appendChild(row);
    return box;
  }

  private static _ids = 0;
  private _model: HTMLInputElement;
  private _optimizer: HTMLInputElement;
  private _loss: HTMLInputElement;
  private _batch: HTMLInputElement;
  private _sizes: HTMLInputElement;
  private _margin: HTMLInputElement;
  private _card: HTMLInputElement;
  private _realStep: HTMLInputElement;
}

/**
 * Asks which objects to estimate with; resolves with the request, or null
 * when the user cancelled. A form that cannot be sent is asked again, with
 * its error above it.
 */
export async function askEstimate(
  candidates: EstimateCandidates,
  initial: Partial<EstimateRequestFields> = {}
): Promise<EstimateRequestFields | null> {
  let error: string | null = null;
  let values = initialFormValues(candidates, initial);
  for (;;) {
    const form = new EstimateForm(candidates, values);
    if (error) {
      form.node.prepend(
        element('p', 'jp-vram-EstimateForm-error', {
          role: 'estimate-form-error',
          text: error
        })
      );
    }
    const result = await showDialog({
      title: trans.__('Will it fit? Estimate a training step'),
      body: form,
      buttons: [
        Dialog.cancelButton({ label: trans.__('Cancel') }),
        Dialog.okButton({ label: trans.__('Estimate') })
      ],
      focusNodeSelector: 'input'
    });
    if (!result.button.accept || !result.value) {
      return null;
    }
    values = result.value;
    const request = requestOfForm(values);
    if (!('error' in request)) {
      return request;
    }
    error = request.error;
  }
}
