/**
 * The cells that "Will it fit?" inserts: for each remedy it estimated, the
 * training loop with that remedy and the figures filled in (the batch size
 * that fits, the accumulation steps, what the prediction was). They use the
 * names the estimate ran with, so that the cell runs on the user's own
 * model, optimizer and loss.
 *
 * The checkpointed blocks are found in the cell by the rule the kernel's
 * estimate uses (the nn.ModuleList or nn.Sequential with the most
 * children), so the cell checkpoints what was estimated.
 */
import type {
  EstimateMemoryResult,
  EstimateVariant
} from '../../protocol/estimate';
import { ByteUnits, formatBytes } from '../../text/format';

/** The names a cell is written with; a missing one gets a plain placeholder. */
export interface SnippetNames {
  model: string;
  optimizer: string;
  loss: string;
  loader: string;
}

/** The names of an estimate's result, with placeholders where none was given. */
export function snippetNames(
  result: EstimateMemoryResult,
  loader: string | null
): SnippetNames {
  const name = (key: string, fallback: string) => result.names[key] ?? fallback;
  return {
    model: name('model', 'model'),
    optimizer: name('optimizer', 'optimizer'),
    loss: name('loss', 'criterion'),
    loader: loader ?? 'train_loader'
  };
}

/** The first lines of every cell: what was predicted, as comments. */
function header(
  result: EstimateMemoryResult,
  v: EstimateVariant,
  what: string,
  units: ByteUnits
): string[] {
  const card = result.card;
  const where = !card
    ? 'the card'
    : card.planned || card.index === null
      ? `a card of ${formatBytes(card.total_bytes, units)}`
      : `${card.name ?? `GPU ${card.index}`} (cuda:${card.index})`;
  return [
    `# Will it fit? ${what} fits a batch of ${v.largest_batch_size} on ${where}:`,
    `# predicted training-step peak ${formatBytes(v.peak_at_largest_bytes, units)}` +
      (card
        ? ` of the ${formatBytes(card.free_for_step_bytes, units)} left for the step` +
          ` (${formatBytes(card.margin_bytes, units)} kept free).`
        : '.')
  ];
}

function loop(
  n: SnippetNames,
  body: string[],
  before: string[] = []
): string[] {
  return [
    'device = "cuda" if torch.cuda.is_available() else "cpu"',
    `${n.model}.to(device).train()`,
    ...before,
    `# ${n.loader} must yield batches of BATCH_SIZE, e.g.`,
    `# ${n.loader} = torch.utils.data.DataLoader(dataset, batch_size=BATCH_SIZE, shuffle=True)`,
    `for inputs, targets in ${n.loader}:`,
    '    inputs, targets = inputs.to(device), targets.to(device)',
    ...body.map(line => `    ${line}`)
  ];
}

const STEP = (n: SnippetNames) => [
  `batch_loss.backward()`,
  `${n.optimizer}.step()`
];

function plainCell(n: SnippetNames): string[] {
  return loop(n, [
    `${n.optimizer}.zero_grad(set_to_none=True)`,
    `batch_loss = ${n.loss}(${n.model}(inputs), targets)`,
    ...STEP(n)
  ]);
}

function ampCell(n: SnippetNames): string[] {
  return loop(n, [
    `${n.optimizer}.zero_grad(set_to_none=True)`,
    "# bfloat16 keeps float32's range: no gradient scaler is needed.",
    'with torch.autocast(device_type=device, dtype=torch.bfloat16):',
    `    batch_loss = ${n.loss}(${n.model}(inputs), targets)`,
    ...STEP(n)
  ]);
}

function checkpointCell(n: SnippetNames): string[] {
  return [
    'import functools',
    '',
    'from torch.utils.checkpoint import checkpoint',
    '',
    ...loop(
      n,
      [
        `${n.optimizer}.zero_grad(set_to_none=True)`,
        `batch_loss = ${n.loss}(${n.model}(inputs), targets)`,
        ...STEP(n)
      ],
      [
        '# Checkpoint each block of the longest nn.ModuleList or nn.Sequential, as estimated:',
        "# only the blocks' inputs are kept, and backward recomputes one block at a time.",
        'containers = [m for m in ' +
          n.model +
          '.modules() if isinstance(m, (torch.nn.ModuleList, torch.nn.Sequential))]',
        'blocks = max(containers, key=len)',
        'for block in blocks:',
        '    block.forward = functools.partial(checkpoint, block.forward, use_reentrant=False)'
      ]
    )
  ];
}

function accumulationCell(n: SnippetNames, steps: number): string[] {
  return [
    `accumulation_steps = ${steps}`,
    ...loop(
      n,
      [
        '# Divide so that the summed gradients average over the whole batch.',
        `batch_loss = ${n.loss}(${n.model}(inputs), targets) / accumulation_steps`,
        'batch_loss.backward()',
        'pending += 1',
        'if pending == accumulation_steps:',
        `    ${n.optimizer}.step()`,
        `    ${n.optimizer}.zero_grad(set_to_none=True)`,
        '    pending = 0'
      ],
      [`${n.optimizer}.zero_grad(set_to_none=True)`, 'pending = 0']
    )
  ];
}

/**
 * The cell for one remedy of an estimate, or null where it has no batch
 * size that fits (nothing to fill in).
 */
export function estimateCell(
  result: EstimateMemoryResult,
  v: EstimateVariant,
  names: SnippetNames,
  units: ByteUnits
): string | null {
  if (!v.applicable || v.largest_batch_size === null) {
    return null;
  }
  let what: string;
  let body: string[];
  switch (v.variant) {
    case 'amp_bf16':
      [what, body] = ['bfloat16 autocast', ampCell(names)];
      break;
    case 'checkpointing':
      [what, body] = ['Activation checkpointing', checkpointCell(names)];
      break;
    case 'grad_accumulation':
      if (v.accumulation_steps === null) {
        return null;
      }
      [what, body] = [
        'Gradient accumulation',
        accumulationCell(names, v.accumulation_steps)
      ];
      break;
    default:
      [what, body] = ['The step as it is', plainCell(names)];
  }
  return [
    ...header(result, v, what, units),
    'import torch',
    '',
    `BATCH_SIZE = ${v.largest_batch_size}`,
    ...body
  ].join('\n');
}
