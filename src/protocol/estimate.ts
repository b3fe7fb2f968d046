/**
 * The parsers of "Will it fit?" (docs/protocol.md, "Estimating a training
 * step"): the `estimate_memory` reply, which predicts a training step's peak
 * GPU memory for a range of batch sizes, and the `estimate_progress`
 * messages sent while it runs. The caller of the request reads its result
 * with `parseEstimateMemoryResult`.
 *
 * The wire types are generated from protocol/protocol.schema.json
 * (protocol.generated.ts) and re-exported here under the names the frontend
 * imports; every key is read, so a new one is never dropped unseen.
 */
import { count } from './processes';
import { FieldReader, Parsed, parseWith, ShapeError } from './reader';
import type {
  EstimateBreakdown,
  EstimateCard,
  EstimateFailure,
  EstimateMemoryResult,
  EstimateProgressMessage,
  EstimateRow,
  EstimateVariant
} from './protocol.generated';

export type {
  EstimateBreakdown,
  EstimateCard,
  EstimateFailure,
  EstimateMemoryResult,
  EstimateMemoryRequest,
  EstimateProgressMessage,
  EstimateRow,
  EstimateVariant
} from './protocol.generated';

/** The roles of a breakdown, in the order the panel lists them. */
export const BREAKDOWN_ROLES: readonly (keyof EstimateBreakdown)[] = [
  'parameters',
  'gradients',
  'optimizer_state',
  'activations',
  'temporaries',
  'inputs'
];

function readBreakdown(r: FieldReader): EstimateBreakdown {
  return {
    parameters: r.bytes('parameters'),
    gradients: r.bytes('gradients'),
    optimizer_state: r.bytes('optimizer_state'),
    activations: r.bytes('activations'),
    temporaries: r.bytes('temporaries'),
    inputs: r.bytes('inputs')
  };
}

function readRow(item: unknown, path: string): EstimateRow {
  const r = FieldReader.of(item, path);
  return {
    batch_size: count(r, 'batch_size', 1),
    train_peak_bytes: r.bytes('train_peak_bytes'),
    eval_peak_bytes: r.bytes('eval_peak_bytes'),
    breakdown: readBreakdown(r.object('breakdown')),
    traced: r.boolean('traced'),
    fits: r.nullableBoolean('fits')
  };
}

function readVariant(item: unknown, path: string): EstimateVariant {
  const r = FieldReader.of(item, path);
  return {
    variant: r.string('variant'),
    applicable: r.boolean('applicable'),
    reason: r.nullableString('reason'),
    fixed_bytes: r.bytes('fixed_bytes'),
    per_sample_bytes: r.bytes('per_sample_bytes'),
    largest_batch_size: r.nullableInteger('largest_batch_size'),
    peak_at_largest_bytes: r.bytes('peak_at_largest_bytes'),
    accumulation_steps: r.nullableInteger('accumulation_steps')
  };
}

function readCard(r: FieldReader): EstimateCard {
  return {
    index: r.nullableInteger('index'),
    planned: r.boolean('planned'),
    name: r.nullableString('name'),
    total_bytes: r.bytes('total_bytes'),
    other_allocated_bytes: r.bytes('other_allocated_bytes'),
    overhead_bytes: r.bytes('overhead_bytes'),
    overhead_measured: r.boolean('overhead_measured'),
    margin_bytes: r.bytes('margin_bytes'),
    free_for_step_bytes: r.bytes('free_for_step_bytes')
  };
}

function readFailure(r: FieldReader): EstimateFailure {
  return {
    phase: r.string('phase'),
    op: r.nullableString('op'),
    filename: r.nullableString('filename'),
    lineno: r.nullableInteger('lineno'),
    line: r.nullableString('line'),
    message: r.string('message')
  };
}

function readNames(r: FieldReader): { [k: string]: string | null } {
  const names: { [k: string]: string | null } = {};
  for (const key of Object.keys(r.data)) {
    names[key] = r.nullableString(key);
  }
  return names;
}

function readStrings(r: FieldReader, key: string): string[] {
  return r.array(key).map((item, i) => {
    if (typeof item !== 'string') {
      throw new ShapeError(`${r.path}.${key}[${i}]: expected a string`);
    }
    return item;
  });
}

/** Read the `result` of an `estimate_memory` reply. Never throws. */
export function parseEstimateMemoryResult(
  result: unknown
): Parsed<EstimateMemoryResult> {
  return parseWith(result, 'estimate_memory', r => {
    const card = r.nullableObject('card');
    const failure = r.nullableObject('failure');
    return {
      status: r.string('status'),
      method: r.string('method'),
      traced_on: r.nullableString('traced_on'),
      names: readNames(r.object('names')),
      sample_batch_size: r.nullableInteger('sample_batch_size'),
      rows: r
        .array('rows')
        .map((item, i) => readRow(item, `${r.path}.rows[${i}]`)),
      variants: r
        .array('variants')
        .map((item, i) => readVariant(item, `${r.path}.variants[${i}]`)),
      card: card && readCard(card),
      largest_batch_size: r.nullableInteger('largest_batch_size'),
      failure: failure && readFailure(failure),
      notes: readStrings(r, 'notes'),
      state_unchanged: r.boolean('state_unchanged'),
      elapsed_ms: r.number('elapsed_ms')
    };
  });
}

/**
 * The progress of an `estimate_progress` message, with the figures known
 * so far where it carries them, or null when `data` is not one or cannot be
 * read (progress is a courtesy: a bad one is dropped, and the reply still
 * comes).
 */
export function readEstimateProgress(
  data: unknown
): EstimateProgressMessage | null {
  if (
    typeof data !== 'object' ||
    data === null ||
    (data as { type?: unknown }).type !== 'estimate_progress'
  ) {
    return null;
  }
  const parsed = parseWith(data, 'estimate_progress', r => {
    const progress: EstimateProgressMessage = {
      type: 'estimate_progress' as const,
      request_id: r.string('request_id'),
      stage: r.string('stage'),
      done: count(r, 'done'),
      total: count(r, 'total', 1)
    };
    if (r.has('partial')) {
      const partial = parseEstimateMemoryResult(r.data['partial']);
      if ('error' in partial) {
        throw new ShapeError(partial.error);
      }
      progress.partial = partial.value;
    }
    return progress;
  });
  return 'value' in parsed ? parsed.value : null;
}
