/**
 * The fixes that an out-of-memory diagnosis calls for, ranked. Each is one
 * click, which runs a command or several commands in order, and each says
 * what it is expected to gain. The ranking follows the kernel's ranking of
 * causes, and the rest of the out-of-memory playbook comes after them, so
 * that something is always offered.
 */
import { CommandIDs } from '../../ui/commandIds';
import { ByteUnits, formatBytes } from '../../text/format';
import { OomDiagnosis } from '../../protocol/oom';
import type { OomAction } from './oomAction';
import { clusterOomActions } from './oomCluster';
import {
  childProcessActions,
  dataLoaderWorkersAction
} from './oomChildActions';
import { fragmentedBytes, holderName } from './oomExplanation';
import { known } from './oomFigure';
import { trans } from '../../text/translation';

/**
 * JupyterLab's own command that restarts the notebook's kernel. It asks the
 * user first.
 */
export const RESTART_KERNEL_COMMAND = 'notebook:restart-kernel';

export type { OomAction, OomActionStep } from './oomAction';

/**
 * What the user has done since the failure that an action would do again:
 * the names deleted and hidden holders cleared (from delete results), and
 * whether allocation recording is on now. The actions leave those out, so
 * that the card does not offer to free memory that is already back.
 */
export interface OomProgress {
  deletedNames: ReadonlySet<string>;
  clearedHidden: ReadonlySet<string>;
  recording: boolean;
}

/** The progress of a diagnosis before the user has done anything about it. */
export const NO_OOM_PROGRESS: OomProgress = {
  deletedNames: new Set(),
  clearedHidden: new Set(),
  recording: false
};

/**
 * The hidden holders that the delete command knows by these ids (see the
 * inspect request in docs/protocol.md).
 */
const HIDDEN_HOLDERS = new Set([
  'output_cache',
  'last_traceback',
  'last_execution_result'
]);

/**
 * Ranks the fixes that an out-of-memory diagnosis calls for, leaving out those
 * the user has already done.
 */
export function oomActions(
  d: OomDiagnosis,
  units: ByteUnits,
  progress: OomProgress = NO_OOM_PROGRESS
): OomAction[] {
  if (d.cluster_worker) {
    // The kernel's fixes free the kernel's memory, not the worker's.
    return clusterOomActions(d.cluster_worker);
  }
  const b = (v: number | null) => formatBytes(v, units);
  // A figure is given only where it is known (see `known` in
  // oomExplanation.ts); without one, the sentence says what the action does.
  // `stale` holds the holders at the failure that are still there, as far as
  // this page knows.
  const stale = d.stale_holders.filter(h =>
    h.holder === 'name'
      ? !progress.deletedNames.has(h.label)
      : !progress.clearedHidden.has(h.holder)
  );
  const host = d.kind === 'host';
  // The framework whose allocation failed decides the snippets, because
  // TensorFlow's are no use to a PyTorch kernel and the other way round, and
  // neither shrinks a NumPy array.
  const tensorflow = d.kind === 'tensorflow' || d.framework === 'tensorflow';
  // The torch snippets are written for CUDA or the CPU, not for Apple's MPS or
  // JAX's devices.
  const otherDevice = d.kind === 'mps' || d.kind === 'xla';
  const torch =
    !tensorflow &&
    !otherDevice &&
    (d.framework === 'torch' || (!host && (d.framework ?? null) === null));
  // expandable_segments needs torch 2.1 or later; an older torch, restarted
  // with it set, fails every CUDA allocation ("Unrecognized CachingAllocator
  // option"). Where the allocator has them on already, a restart to turn them
  // on would lose the kernel's state for nothing.
  const canExpandSegments =
    torch &&
    !host &&
    d.expandable_segments !== false &&
    d.expandable_segments_on !== true;
  // When the request is larger than this kernel can ever get, freeing memory
  // helps the next cells but not this one, and the gains say so and why.
  const wholeCard =
    d.requested_bytes !== null &&
    d.total_bytes !== null &&
    d.requested_bytes > d.total_bytes;
  const notForThis = !d.causes.some(c => c.cause === 'too_big')
    ? ''
    : wholeCard
      ? ' ' +
        (host
          ? trans.__(
              'Not enough for this request: it is larger than the whole machine.'
            )
          : trans.__(
              'Not enough for this request: it is larger than the whole card.'
            ))
      : ' ' +
        trans.__(
          'Not enough for this request: it needs more than this kernel can get.'
        );
  const actions: OomAction[] = [];
  const add = (action: OomAction | null) => {
    if (action && !actions.some(a => a.id === action.id)) {
      actions.push(action);
    }
  };
  // Freeing this kernel's memory does not change what other processes hold,
  // so finding out who they are comes first.
  const showProcesses: OomAction = {
    id: 'show-processes',
    label: trans.__('See the processes on this card'),
    gain:
      (known(d.other_processes_bytes)
        ? trans.__('They hold %1.', b(d.other_processes_bytes)) + ' '
        : '') +
      trans.__(
        "The Kernels tab lists them; this server's kernels can be shut down there."
      ),
    steps: [{ command: CommandIDs.openSidebar, args: { tab: 'kernels' } }]
  };
  const snippet = (id: string, label: string, gain: string): OomAction => ({
    id: `insert-${id}`,
    label,
    gain,
    steps: [{ command: CommandIDs.insertSnippet, args: { id } }]
  });

  const fragmented = fragmentedBytes(d);
  const freeMemory: OomAction = {
    id: 'free-memory',
    label: trans.__('Free memory'),
    gain:
      (tensorflow
        ? trans.__(
            'Runs gc.collect(): frees what only reference cycles held (TensorFlow keeps freed memory in its own pool, for this kernel to reuse).'
          )
        : host || !known(fragmented)
          ? trans.__(
              'Runs gc.collect(), and torch.cuda.empty_cache() where CUDA is initialised: frees what only reference cycles held.'
            )
          : trans.__(
              'Runs gc.collect() and torch.cuda.empty_cache(): gives back up to %1 cached by PyTorch (more if cycles held tensors).',
              b(fragmented)
            )) + notForThis,
    steps: [{ command: CommandIDs.freeMemory }]
  };
  const names = stale.filter(h => h.holder === 'name').map(h => h.label);
  // A holder's bytes are all that it holds, shared or not (x and Out[3] may
  // hold one tensor), so the sum is capped at what the diagnosis counted
  // once.
  const staleFreeable = Math.min(
    stale.reduce((sum, h) => sum + h.bytes, 0),
    d.stale_bytes ?? Number.POSITIVE_INFINITY
  );
  const hidden = stale
    .filter(h => HIDDEN_HOLDERS.has(h.holder))
    .map(h => h.holder);
  const deleteHolders: OomAction | null =
    names.length || hidden.length
      ? {
          id: 'delete-holders',
          label: trans.__(
            'Delete the largest holders (%1)',
            stale.map(holderName).join(', ')
          ),
          gain:
            (known(staleFreeable)
              ? trans.__(
                  'Frees up to %1; asks before deleting anything.',
                  b(staleFreeable)
                )
              : trans.__(
                  'Frees what they hold; asks before deleting anything.'
                )) + notForThis,
          steps: [
            {
              command: CommandIDs.deleteVariables,
              args: { names, hidden, fresh: true }
            }
          ]
        }
      : null;
  const traceback = stale.find(h => h.holder === 'last_traceback');
  const clearTraceback: OomAction | null = traceback
    ? {
        id: 'clear-traceback',
        label: trans.__('Clear the old traceback'),
        gain: known(traceback.bytes)
          ? trans.__(
              'Frees the %1 its frames still hold (disables %%debug for that error).',
              b(traceback.bytes)
            )
          : trans.__(
              'Frees what its frames still hold (disables %%debug for that error).'
            ),
        steps: [
          {
            command: CommandIDs.deleteVariables,
            args: { names: [], hidden: ['last_traceback'], fresh: true }
          }
        ]
      }
    : null;
  const expandableSegments: OomAction = {
    id: 'expandable-segments',
    label: trans.__('Set expandable_segments (restarts the kernel)'),
    gain: known(fragmented)
      ? trans.__(
          'Inserts a first cell setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, then restarts the kernel: stops most of the %1 of fragmentation. Run that cell first.',
          b(fragmented)
        )
      : trans.__(
          "Inserts a first cell setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, then restarts the kernel: PyTorch's cache then loses far less memory to fragmentation. Run that cell first."
        ),
    steps: [
      { command: CommandIDs.insertSnippet, args: { id: 'allocator-config' } },
      { command: RESTART_KERNEL_COMMAND }
    ]
  };
  const amp = snippet(
    'amp',
    trans.__('Insert mixed precision (AMP)'),
    trans.__('Activations in float16/bfloat16: roughly halves their memory.')
  );
  const accumulation = snippet(
    'grad-accumulation',
    trans.__('Insert gradient accumulation'),
    trans.__('Same effective batch in k smaller steps: activation memory / k.')
  );
  const checkpointing = snippet(
    'grad-checkpointing',
    trans.__('Insert gradient checkpointing'),
    trans.__(
      'Recomputes activations in the backward pass: much less activation memory, ~30% more compute.'
    )
  );
  const noGrad = snippet(
    'no-grad-eval',
    trans.__('Insert evaluation without gradients (torch.no_grad)'),
    trans.__(
      'No autograd graph kept during evaluation: frees the activations it would hold.'
    )
  );
  const batchSize = snippet(
    'batch-size-search',
    trans.__('Reduce the batch size'),
    trans.__(
      'Finds the largest batch that fits: memory of activations scales with it.'
    )
  );
  const tfClearSession = snippet(
    'tf-clear-session',
    trans.__('Insert clearing the Keras session'),
    trans.__(
      'Drops the models and layers Keras keeps from earlier in this kernel (delete your own references to them first): TensorFlow can reuse their memory.'
    )
  );
  const tfMemoryGrowth: OomAction = {
    id: 'tf-memory-growth',
    label: trans.__('Set TensorFlow memory growth (restarts the kernel)'),
    gain: trans.__(
      'Inserts a first cell making TensorFlow take GPU memory as it needs it, not nearly all of the card at start, then restarts the kernel: kernels sharing this card leave each other room. It gives this kernel no more than the card has. Run that cell first.'
    ),
    steps: [
      { command: CommandIDs.insertSnippet, args: { id: 'tf-memory-growth' } },
      { command: RESTART_KERNEL_COMMAND }
    ]
  };
  // Predicting the step's peak before running it again saves the trial and
  // error of batch sizes, each try of which may end in another failure.
  const willItFit: OomAction = {
    id: 'estimate-memory',
    label: trans.__('Will it fit? Estimate the training step'),
    gain: trans.__(
      'Predicts the peak of one training step for a range of batch sizes, without allocating on the GPU, names the largest batch size that fits, and what AMP, checkpointing and gradient accumulation would let fit.'
    ),
    steps: [{ command: CommandIDs.estimateMemory }]
  };
  // The fixes that shrink the work for this framework. There are none for a
  // NumPy array or for TensorFlow, which have no snippet for it.
  const shrinkTheWork: OomAction[] = !torch
    ? []
    : host
      ? [willItFit, batchSize]
      : [willItFit, amp, batchSize, checkpointing, accumulation];

  for (const { cause } of d.causes) {
    switch (cause) {
      case 'fragmentation':
        add(freeMemory);
        add(canExpandSegments ? expandableSegments : null);
        break;
      case 'stale_references':
        add(clearTraceback);
        add(deleteHolders);
        add(tensorflow ? tfClearSession : null);
        add(freeMemory);
        break;
      case 'other_processes':
        // On the host, the other processes are the rest of the machine, not
        // processes on a card that the Kernels tab lists.
        add(host ? null : showProcesses);
        add(tensorflow && !host ? tfMemoryGrowth : null);
        add(freeMemory);
        break;
      case 'too_big':
        shrinkTheWork.forEach(add);
        break;
      case 'child_processes':
        // The kernel started them, so it can end them: nothing else gives
        // that memory back.
        childProcessActions(d, units).forEach(add);
        break;
      case 'dataloader_workers':
        add(dataLoaderWorkersAction(d));
        break;
    }
  }
  // When there is nothing to free that the failing cell does not use, what it
  // works with holds the memory, and only shrinking the work helps.
  if (d.causes.length === 0 && (d.in_use_holders ?? []).length > 0) {
    shrinkTheWork.forEach(add);
  }
  // The rest of the playbook follows, the most broadly useful fixes first.
  add(clearTraceback);
  add(deleteHolders);
  add(tensorflow ? tfClearSession : null);
  add(freeMemory);
  if (torch) {
    add(willItFit);
  }
  if (torch && !host) {
    add(amp);
    add(noGrad);
    add(checkpointing);
    add(accumulation);
    add(batchSize);
    add(canExpandSegments ? expandableSegments : null);
  } else if (torch) {
    add(batchSize);
  } else if (tensorflow && !host) {
    add(tfMemoryGrowth);
  }
  if (
    d.allocation_sites &&
    !d.allocation_sites.recording &&
    !progress.recording
  ) {
    add({
      id: 'record-allocations',
      label: trans.__('Record allocations'),
      gain: trans.__(
        'Keeps the stack of every live allocation from now on: the next diagnosis lists the notebook lines that hold the memory.'
      ),
      steps: [
        { command: CommandIDs.recordAllocations, args: { enabled: true } }
      ]
    });
  }
  return actions;
}
