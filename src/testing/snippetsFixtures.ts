/**
 * The set-up that the snippet specs share: the ids of the default list, in
 * the order that the contract gives.
 */
export const CONTRACT_IDS = [
  'no-grad-eval',
  'inference-mode',
  'amp',
  'bf16-autocast',
  'grad-accumulation',
  'grad-checkpointing',
  'allocator-config',
  'memory-fraction',
  'memory-summary',
  'profiler-memory',
  'batch-size-search',
  'dataloader-pinning',
  'dataloader-worker-memory',
  'loss-item',
  'tf-memory-growth',
  'tf-clear-session',
  'tf-memory-limit'
];
