/**
 * The fix for a holder that keeps an autograd graph alive (the `inspect`
 * entry's `graph_holding`): the code of a cell that keeps the values and
 * drops the graphs. A one-element tensor becomes a Python number
 * (`.item()`), any other a detached tensor (`.detach()`), inside lists,
 * tuples, dicts and deques one level deep, as a loss history is. No code is
 * guessed for other containers and objects. This module has no DOM.
 */
import { HolderEntry } from '../../protocol/cleanup';
import { ByteUnits, formatBytes } from '../../text/format';

/** The snippet that shows the pattern for training loops. */
export const GRAPH_FIX_SNIPPET_ID = 'loss-item';

/** Dict types (the kernel's qualified type names) whose values the fix replaces in place. */
const DICT_TYPES: ReadonlySet<string> = new Set([
  'collections.OrderedDict',
  'collections.defaultdict'
]);

/** A Python identifier: a name from the kernel is only used in code if it is one. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What a graph-holding entry means, in words. */
export function graphHoldingText(
  entry: HolderEntry,
  units: ByteUnits
): string | null {
  const graph = entry.graph_holding;
  if (!graph) {
    return null;
  }
  const tensors =
    graph.tensors === 1 ? '1 tensor keeps' : `${graph.tensors} tensors keep`;
  const more = graph.truncated ? '+' : '';
  const nodes = `${graph.graph_nodes}${more} autograd node${graph.graph_nodes === 1 ? '' : 's'}`;
  let held: string;
  if (graph.bytes === null) {
    held =
      "every tensor saved for backward stays in memory, whatever the tensor's own size (this torch does not show how much)";
  } else if (graph.bytes > 0) {
    held = `the tensors it saved for backward hold ${graph.truncated ? 'at least ' : ''}${formatBytes(graph.bytes, units)} that no variable holds`;
  } else {
    held =
      'it holds no saved tensors now (backward() freed them), only its nodes';
  }
  const packed = graph.packed_by_hooks
    ? ` ${graph.packed_by_hooks} saved tensor${graph.packed_by_hooks === 1 ? ' was' : 's were'} packed by a hook (checkpointing, offloading): counted as packed.`
    : '';
  return `${tensors} an autograd graph alive (${nodes}): ${held}.${packed} Keep .item() or .detach() instead.`;
}

/** The code of the fix cell for `entry`, or null when its name is not a plain identifier. */
export function graphFixCode(
  entry: Pick<HolderEntry, 'name' | 'kind' | 'type_name'>
): string | null {
  const name = entry.name;
  if (!IDENTIFIER.test(name)) {
    return null;
  }
  const keep = `lambda t: (t.item() if t.numel() == 1 else t.detach()) if isinstance(t, torch.Tensor) else t`;
  const lines = [
    'import torch',
    '',
    '# Keep the values, drop the autograd graphs they hold (and the activations saved for backward).',
    `_keep = ${keep}`
  ];
  const type = entry.type_name;
  if (entry.kind === 'tensor') {
    lines.push(`${name} = ${name}.detach()`);
  } else if (type === 'list') {
    lines.push(`${name} = [_keep(t) for t in ${name}]`);
  } else if (type === 'dict' || DICT_TYPES.has(type)) {
    // In place: an OrderedDict keeps its order, a defaultdict its factory.
    lines.push(`${name}.update({k: _keep(v) for k, v in ${name}.items()})`);
  } else if (type === 'tuple') {
    lines.push(`${name} = tuple(_keep(t) for t in ${name})`);
  } else if (type === 'collections.deque') {
    // A history kept with maxlen: the new deque keeps it.
    lines.splice(1, 0, 'import collections');
    lines.push(
      `${name} = collections.deque(map(_keep, ${name}), maxlen=${name}.maxlen)`
    );
  } else {
    return null; // a set (no order to keep), a user's object: no code guessed for it
  }
  lines.push('del _keep');
  return lines.join('\n');
}
