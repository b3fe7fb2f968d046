/**
 * "Will it fit?" fixtures shaped like docs/protocol.md's example of an
 * `estimate_memory` result: a Linear stack with Adam on an H200, three
 * batch sizes (one interpolated), the four remedies, and a refusal.
 */
import type {
  EstimateMemoryResult,
  EstimateRow,
  EstimateVariant
} from '../protocol/estimate';
import { GiB, MiB } from './fixtures';

export function makeEstimateRow(
  overrides: Partial<EstimateRow> = {}
): EstimateRow {
  return {
    batch_size: 64,
    train_peak_bytes: 3 * GiB,
    eval_peak_bytes: 1 * GiB,
    breakdown: {
      parameters: 512 * MiB,
      gradients: 512 * MiB,
      optimizer_state: 1024 * MiB,
      activations: 900 * MiB,
      temporaries: 100 * MiB,
      inputs: 24 * MiB
    },
    traced: true,
    fits: true,
    ...overrides
  };
}

export function makeVariant(
  overrides: Partial<EstimateVariant> = {}
): EstimateVariant {
  return {
    variant: 'plain',
    applicable: true,
    reason: null,
    fixed_bytes: 2 * GiB,
    per_sample_bytes: 16 * MiB,
    largest_batch_size: 7000,
    peak_at_largest_bytes: 111 * GiB,
    accumulation_steps: null,
    ...overrides
  };
}

export function makeEstimateResult(
  overrides: Partial<EstimateMemoryResult> = {}
): EstimateMemoryResult {
  return {
    status: 'estimated',
    method: 'fake_tensors',
    traced_on: 'cuda',
    names: {
      model: 'net',
      optimizer: 'opt',
      loss: 'criterion',
      batch: 'batch'
    },
    sample_batch_size: 64,
    rows: [
      makeEstimateRow({ batch_size: 32, train_peak_bytes: 2.5 * GiB }),
      makeEstimateRow(),
      makeEstimateRow({
        batch_size: 128,
        train_peak_bytes: 4 * GiB,
        traced: false
      })
    ],
    variants: [
      makeVariant(),
      makeVariant({
        variant: 'amp_bf16',
        largest_batch_size: 12000,
        peak_at_largest_bytes: 112 * GiB
      }),
      makeVariant({
        variant: 'checkpointing',
        applicable: false,
        reason: 'no nn.ModuleList or nn.Sequential of blocks to checkpoint',
        fixed_bytes: null,
        per_sample_bytes: null,
        largest_batch_size: null,
        peak_at_largest_bytes: null
      }),
      makeVariant({
        variant: 'grad_accumulation',
        largest_batch_size: 16,
        accumulation_steps: 4
      })
    ],
    card: {
      index: 0,
      planned: false,
      name: 'NVIDIA H200',
      total_bytes: 140 * GiB,
      other_allocated_bytes: 1 * GiB,
      overhead_bytes: 600 * MiB,
      overhead_measured: true,
      margin_bytes: 14 * GiB,
      free_for_step_bytes: 124 * GiB
    },
    largest_batch_size: 7000,
    failure: null,
    notes: ['The loss was taken as criterion(output, target).'],
    state_unchanged: true,
    elapsed_ms: 1200,
    ...overrides
  };
}

/** A refusal: fake tensors stopped at torch.nonzero in the user's forward. */
export function makeRefusal(
  overrides: Partial<EstimateMemoryResult> = {}
): EstimateMemoryResult {
  return makeEstimateResult({
    status: 'refused',
    method: 'none',
    traced_on: null,
    rows: [],
    variants: [],
    largest_batch_size: null,
    failure: {
      phase: 'forward',
      op: 'aten.nonzero.default',
      filename: '<ipython-input-3>',
      lineno: 7,
      line: 'idx = x.nonzero()',
      message: 'DynamicOutputShapeException: aten.nonzero.default'
    },
    notes: [],
    ...overrides
  });
}
