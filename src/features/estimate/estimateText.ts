/**
 * The words of "Will it fit?": what each remedy is called, the sentences
 * about the card, the verdict, a refusal and the progress. Names and
 * messages in them come from the kernel: the views set them as text.
 */
import type {
  EstimateBreakdown,
  EstimateCard,
  EstimateFailure,
  EstimateMemoryResult,
  EstimateVariant
} from '../../protocol/estimate';
import { ByteUnits, formatBytes, formatCount } from '../../text/format';
import { trans } from '../../text/translation';
import type { EstimateProgress } from './MemoryEstimate';

/**
 * The largest batch size the kernel names (the protocol's bound on a batch
 * size): one that large fits, and larger ones may too.
 */
export const MAX_NAMED_BATCH_SIZE = 1048576;

/** A batch size that fits, in words: "1,024", or "1,048,576 or more" at the bound. */
export function batchSizeText(size: number): string {
  return size >= MAX_NAMED_BATCH_SIZE
    ? trans.__('%1 or more', formatCount(size))
    : formatCount(size);
}

/** The name of a remedy the estimate tried; an unknown one keeps its id. */
export function variantLabel(variant: string): string {
  switch (variant) {
    case 'plain':
      return trans.__('The step as it is');
    case 'amp_bf16':
      return trans.__('bfloat16 autocast (AMP)');
    case 'checkpointing':
      return trans.__('Activation checkpointing');
    case 'grad_accumulation':
      return trans.__('Gradient accumulation');
    default:
      return variant;
  }
}

/** The name of a role in a peak's breakdown. */
export function roleLabel(role: keyof EstimateBreakdown): string {
  switch (role) {
    case 'parameters':
      return trans.__('Parameters and buffers');
    case 'gradients':
      return trans.__('Gradients');
    case 'optimizer_state':
      return trans.__('Optimizer state');
    case 'activations':
      return trans.__('Activations kept for backward');
    case 'temporaries':
      return trans.__('Temporaries');
    case 'inputs':
      return trans.__('The batch');
  }
}

/** What the card leaves for the step, in one sentence. */
export function cardSentence(card: EstimateCard, units: ByteUnits): string {
  const b = (v: number | null) => formatBytes(v, units);
  if (card.planned || card.index === null) {
    return trans.__(
      'A planned card of %1: %2 for an estimated CUDA context, a margin of %3, so %4 for the step.',
      b(card.total_bytes),
      b(card.overhead_bytes),
      b(card.margin_bytes),
      b(card.free_for_step_bytes)
    );
  }
  const name = card.name ?? trans.__('GPU %1', card.index);
  return trans.__(
    '%1 (cuda:%2) has %3: %4 allocated besides the model, %5 for the CUDA context, caches and other processes (%6), a margin of %7, so %8 for the step.',
    name,
    card.index,
    b(card.total_bytes),
    b(card.other_allocated_bytes),
    b(card.overhead_bytes),
    card.overhead_measured
      ? trans.__('measured')
      : trans.__('estimated: CUDA is not initialised in this kernel'),
    b(card.margin_bytes),
    b(card.free_for_step_bytes)
  );
}

/** The answer to "will it fit?", in one sentence. */
export function verdictSentence(
  result: EstimateMemoryResult,
  units: ByteUnits
): string {
  if (result.status === 'refused') {
    return result.failure
      ? trans.__('Nothing was predicted: fake tensors could not run the step.')
      : trans.__('Nothing was predicted: %1', result.notes[0] ?? '');
  }
  if (!result.card) {
    return trans.__(
      'No CUDA device is visible to this kernel: these are the step’s own figures, with no card to fit them to.'
    );
  }
  const plain = result.variants.find(v => v.variant === 'plain');
  if (result.largest_batch_size === null) {
    return trans.__(
      'Not even a batch of 1 fits the %1 this card leaves for the step.',
      formatBytes(result.card.free_for_step_bytes, units)
    );
  }
  return trans.__(
    'The largest batch size that fits: %1 (predicted peak %2 of the %3 left for the step).',
    batchSizeText(result.largest_batch_size),
    formatBytes(plain?.peak_at_largest_bytes ?? null, units),
    formatBytes(result.card.free_for_step_bytes, units)
  );
}

/** What a remedy lets fit, in one sentence. */
export function variantSentence(
  v: EstimateVariant,
  sampleBatchSize: number | null,
  units: ByteUnits
): string {
  if (!v.applicable) {
    return v.reason ?? trans.__('Not applicable to this model.');
  }
  if (v.largest_batch_size === null) {
    return trans.__(
      '%1 per sample, %2 fixed; no card to fit it to, or not even 1 fits.',
      formatBytes(v.per_sample_bytes, units),
      formatBytes(v.fixed_bytes, units)
    );
  }
  const fits = trans.__(
    'Fits a batch of %1 (peak %2).',
    batchSizeText(v.largest_batch_size),
    formatBytes(v.peak_at_largest_bytes, units)
  );
  if (v.variant === 'grad_accumulation' && v.accumulation_steps !== null) {
    return (
      fits +
      ' ' +
      trans.__(
        '%1 micro-batches of %2 make the batch of %3.',
        formatCount(v.accumulation_steps),
        formatCount(v.largest_batch_size),
        formatCount(
          sampleBatchSize ?? v.largest_batch_size * v.accumulation_steps
        )
      )
    );
  }
  return v.reason ? `${fits} ${asSentence(v.reason)}` : fits;
}

/** Kernel text as a sentence of its own: a capital first letter and a full stop. */
function asSentence(text: string): string {
  const trimmed = text.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** Why fake tensors stopped, as sentences: the phase and operation, then the user's line. */
export function failureSentences(failure: EstimateFailure): string[] {
  const lines = [
    failure.op
      ? trans.__(
          'The %1 stopped at %2, which has no fake implementation or depends on the data.',
          failure.phase,
          failure.op
        )
      : trans.__('The %1 could not run on fake tensors.', failure.phase)
  ];
  if (failure.filename !== null && failure.lineno !== null) {
    lines.push(
      failure.line
        ? trans.__(
            'At %1, line %2: %3',
            failure.filename,
            failure.lineno,
            failure.line
          )
        : trans.__('At %1, line %2.', failure.filename, failure.lineno)
    );
  }
  lines.push(failure.message);
  return lines;
}

/** A running estimate's progress, in words. */
export function progressText(progress: EstimateProgress | null): string {
  if (!progress) {
    return trans.__(
      'Waiting for the kernel (it answers once the running cell ends)…'
    );
  }
  return trans.__(
    '%1 (%2 of %3)',
    progress.stage,
    Math.min(progress.done, progress.total),
    progress.total
  );
}
