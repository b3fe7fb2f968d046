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
import { trans } from '../../text/translation';

/** The snippet that shows the pattern for training loops. */
export const GRAPH_FIX_SNIPPET_ID = 'loss-item';

/**
 * The dict types, by the kernel's qualified type names, whose values the fix
 * replaces in place.
 */
const DICT_TYPES: ReadonlySet<string> = new Set([
  'collections.OrderedDict',
  'collections.defaultdict'
]);

/**
 * Matches a Python identifier. A name from the kernel is used in code only if
 * it is one, so that no other text can end up in the inserted cell.
 */
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
  const more = graph.truncated ? '+' : '';
  const nodes = trans._n(
    '%2 autograd node',
    '%2 autograd nodes',
    graph.graph_nodes,
    `${graph.graph_nodes}${more}`
  );
  let held: string;
  if (graph.bytes === null) {
    held = trans.__(
      "every tensor saved for backward stays in memory, whatever the tensor's own size (this torch does not show how much)"
    );
  } else if (graph.bytes > 0) {
    held = graph.truncated
      ? trans.__(
          'the tensors it saved for backward hold at least %1 that no variable holds',
          formatBytes(graph.bytes, units)
        )
      : trans.__(
          'the tensors it saved for backward hold %1 that no variable holds',
          formatBytes(graph.bytes, units)
        );
  } else {
    held = trans.__(
      'it holds no saved tensors now (backward() freed them), only its nodes'
    );
  }
  const packed = graph.packed_by_hooks
    ? ' ' +
      trans._n(
        '%1 saved tensor was packed by a hook (checkpointing, offloading): counted as packed.',
        '%1 saved tensors were packed by a hook (checkpointing, offloading): counted as packed.',
        graph.packed_by_hooks
      )
    : '';
  return (
    trans._n(
      '%1 tensor keeps an autograd graph alive (%2): %3.',
      '%1 tensors keep an autograd graph alive (%2): %3.',
      graph.tensors,
      nodes,
      held
    ) +
    packed +
    ' ' +
    trans.__('Keep .item() or .detach() instead.')
  );
}

/**
 * The code of the fix cell for `entry`, or null when its name is not a plain
 * identifier or its type has no fix.
 */
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
    // The values are replaced in place, so that an OrderedDict keeps its
    // order and a defaultdict its factory.
    lines.push(`${name}.update({k: _keep(v) for k, v in ${name}.items()})`);
  } else if (type === 'tuple') {
    lines.push(`${name} = tuple(_keep(t) for t in ${name})`);
  } else if (type === 'collections.deque') {
    // A history may be kept with a maxlen, which the new deque keeps too.
    lines.splice(1, 0, 'import collections');
    lines.push(
      `${name} = collections.deque(map(_keep, ${name}), maxlen=${name}.maxlen)`
    );
  } else {
    // No code is guessed for a set, which has no order to keep, or for an
    // object of the user's own class.
    return null;
  }
  lines.push('del _keep');
  return lines.join('\n');
}
