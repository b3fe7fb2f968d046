import { Widget } from '@lumino/widgets';

import { parseInspectResult } from '../../protocol/cleanup';
import { graphFixCode, graphHoldingText } from './graphFix';
import { MemoryActions } from './MemoryActions';
import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { HoldersView } from './HoldersView';
import { makeEntry, makeListing } from '../../testing/cleanupFixtures';
import { settle } from '../../testing/fakeKernel';

const LOSSES = makeEntry({
  name: 'losses',
  kind: 'container',
  type_name: 'list',
  summary: 'list of 5 tensors',
  total_bytes: 3155988,
  graph_holding: {
    tensors: 5,
    graph_nodes: 61,
    truncated: false,
    bytes: 3155968,
    packed_by_hooks: 0
  }
});

describe('graph-holding entries', () => {
  it('are read from an inspect reply; an older helper sends none', () => {
    const entry = (graph: unknown) => ({
      name: 'x',
      kind: 'tensor',
      type_name: 'torch.Tensor',
      summary: 's',
      bytes_by_device: { cpu: 4 },
      total_bytes: 4,
      shared_with: [],
      output_cache_refs: [],
      deletable: true,
      refusal: null,
      ...(graph === undefined ? {} : { graph_holding: graph })
    });
    const result = (graph: unknown) =>
      parseInspectResult({
        listing_id: 'l',
        elapsed_ms: 1,
        truncated: false,
        entries: [entry(graph)],
        hidden: []
      });
    const read = (graph: unknown) => {
      const parsed = result(graph);
      return 'value' in parsed
        ? parsed.value.entries[0].graph_holding
        : parsed.error;
    };
    const full = {
      tensors: 1,
      graph_nodes: 3,
      truncated: false,
      bytes: 2048,
      packed_by_hooks: 1
    };
    expect(read(full)).toEqual(full);
    expect(read({ ...full, bytes: null })).toEqual({ ...full, bytes: null });
    expect(read({ ...full, bytes: -1 })).toContain(
      'inspect.entries[0].graph_holding.bytes'
    );
    expect(read({ tensors: 1, graph_nodes: 3, truncated: false })).toContain(
      'inspect.entries[0].graph_holding'
    );
    expect(read(undefined)).toBeNull();
    expect(read(null)).toBeNull();
    expect(read({ tensors: 'many' })).toContain(
      'inspect.entries[0].graph_holding.tensors'
    );
  });

  it('say what they mean, and how much the graph holds', () => {
    expect(graphHoldingText(LOSSES, 'binary')).toBe(
      '5 tensors keep an autograd graph alive (61 autograd nodes): the tensors it saved for backward hold ' +
        '3.01 MiB that no variable holds. Keep .item() or .detach() instead.'
    );
    const graph = LOSSES.graph_holding!;
    const textOf = (g: Partial<typeof graph>) =>
      graphHoldingText(
        { ...LOSSES, graph_holding: { ...graph, ...g } },
        'binary'
      );
    expect(textOf({ truncated: true })).toContain(
      '(61+ autograd nodes): the tensors it saved for backward hold at least 3.01 MiB'
    );
    expect(textOf({ bytes: 0 })).toContain(
      'it holds no saved tensors now (backward() freed them), only its nodes.'
    );
    expect(textOf({ bytes: null })).toContain(
      "stays in memory, whatever the tensor's own size (this torch does not show how much)."
    );
    expect(textOf({ packed_by_hooks: 2 })).toContain(
      '2 saved tensors were packed by a hook (checkpointing, offloading): counted as packed.'
    );
    expect(graphHoldingText(makeEntry(), 'binary')).toBeNull();
  });

  it('get a fix cell that keeps the values', () => {
    expect(graphFixCode(LOSSES)).toBe(
      [
        'import torch',
        '',
        '# Keep the values, drop the autograd graphs they hold (and the activations saved for backward).',
        '_keep = lambda t: (t.item() if t.numel() == 1 else t.detach()) if isinstance(t, torch.Tensor) else t',
        'losses = [_keep(t) for t in losses]',
        'del _keep'
      ].join('\n')
    );
    expect(
      graphFixCode({ name: 'loss', kind: 'tensor', type_name: 'torch.Tensor' })
    ).toContain('loss = loss.detach()');
    expect(
      graphFixCode({ name: 'hist', kind: 'container', type_name: 'dict' })
    ).toContain('hist.update({k: _keep(v) for k, v in hist.items()})');
    // Dict subclasses are updated in place and never made into a list, so
    // that they keep their type, with its order or factory.
    for (const type_name of [
      'collections.OrderedDict',
      'collections.defaultdict'
    ]) {
      const code = graphFixCode({ name: 'h', kind: 'container', type_name })!;
      expect(code).toContain('h.update({k: _keep(v) for k, v in h.items()})');
      expect(code).not.toContain('[_keep(t) for t in h]');
    }
    const deque = graphFixCode({
      name: 'h',
      kind: 'container',
      type_name: 'collections.deque'
    })!;
    expect(deque).toContain('import collections');
    expect(deque).toContain(
      'h = collections.deque(map(_keep, h), maxlen=h.maxlen)'
    );
    // No code is guessed for an object of the user's own class or for a set,
    // so no button is shown for them.
    expect(
      graphFixCode({ name: 'trainer', kind: 'other', type_name: 'Trainer' })
    ).toBeNull();
    expect(
      graphFixCode({ name: 's', kind: 'container', type_name: 'set' })
    ).toBeNull();
    // A name that is not an identifier never becomes code.
    expect(
      graphFixCode({
        name: 'x; import os',
        kind: 'tensor',
        type_name: 'torch.Tensor'
      })
    ).toBeNull();
  });

  it('are flagged in the Holders tab with the fix and the pattern', async () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.setState('live');
    const listing = makeListing({
      entries: [LOSSES, makeEntry({ name: 'plain' })],
      hidden: []
    });
    const actions = new MemoryActions({
      connection: {
        freeMemory: jest.fn(),
        inspect: jest.fn(async () => listing),
        deleteHolders: jest.fn()
      } as any,
      model
    });
    const onFixGraph = jest.fn();
    const onShowGraphPattern = jest.fn();
    const view = new HoldersView({
      settings: DEFAULT_SETTINGS,
      onDelete: jest.fn(),
      onFixGraph,
      onShowGraphPattern
    });
    Widget.attach(view, document.body);
    view.actions = actions;
    await actions.inspect();
    view.renderNow();
    const flagged = view.node.querySelector<HTMLElement>(
      '[data-vram-name="losses"]'
    )!;
    expect(flagged.dataset.vramGraphHolding).toBe('true');
    const warning = flagged.querySelector(
      '[data-vram-role="holder-graph"]'
    )!.textContent!;
    expect(warning).toMatch(/^⚠ \d+ tensors? keeps? an autograd graph alive/);
    // The warning says it only once.
    expect(warning.match(/autograd graph alive/g)).toHaveLength(1);
    flagged
      .querySelector<HTMLButtonElement>('[data-vram-role="graph-fix"]')!
      .click();
    expect(onFixGraph).toHaveBeenCalledWith(LOSSES);
    flagged
      .querySelector<HTMLButtonElement>('[data-vram-role="graph-pattern"]')!
      .click();
    expect(onShowGraphPattern).toHaveBeenCalled();
    expect(
      view.node.querySelector(
        '[data-vram-name="plain"] [data-vram-role="holder-graph"]'
      )
    ).toBeNull();
    view.dispose();
    actions.dispose();
    await settle();
  });
});
