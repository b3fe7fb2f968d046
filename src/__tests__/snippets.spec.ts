/**
 * Snippets, the pure parts: rendering, placement, the restart
 * rule, the `notebook_names` reply, the `snippets` setting and the default
 * list (generated from schema/plugin.json, the list the Python tests run).
 */
import { DEFAULT_SNIPPETS } from '../snippets/defaultSnippets';
import {
  fetchNotebookNames,
  parseNotebookNames
} from '../snippets/notebookNames';
import {
  DEFAULT_PLACEHOLDER_NAMES,
  placementIndex,
  renderSnippet,
  RESTART_MESSAGES,
  restartNeeded,
  runtimeFlagsOfSample
} from '../snippets/snippet';
import { unknownPlaceholders } from '../snippets/placeholders';
import {
  parseSnippet,
  readSnippetSettings
} from '../snippets/snippetSettings';
import { makeSample } from './fixtures';
import schemaJson from '../../schema/plugin.json';

const CONTRACT_IDS = [
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
  'loss-item',
  'tf-memory-growth',
  'tf-clear-session',
  'tf-memory-limit'
];

function snippet(overrides: { [key: string]: unknown } = {}) {
  return {
    id: 'my-snippet',
    title: 'Mine',
    description: 'Something',
    framework: 'torch',
    placement: 'below',
    requiresFresh: null,
    code: ['{{model}}.eval()'],
    ...overrides
  };
}

const schema: any = schemaJson;

// `if hasattr(torch.amp, "GradScaler"): ... else: x = torch.cuda.amp.GradScaler(...)`: the
// else branch, which runs only where torch.amp has no GradScaler.
const GRADSCALER_FALLBACK =
  /(?<=^if hasattr\(torch\.amp, "GradScaler"\):\n(?: {4}.*\n)+)else:.*\n {4}\S+ = torch\.cuda\.amp\.GradScaler\(enabled=[^\n]*/gm;

describe('renderSnippet', () => {
  const code = [
    'out = {{model}}(x)',
    '{{optimizer}}.step()',
    'for batch in {{dataloader}}:',
    '    loss = {{loss}}(out, y)',
    '{{scaler}}.update()'
  ];

  it('uses the default names when the kernel found nothing', () => {
    const nothing = { model: [], optimizer: [], dataloader: [], loss: [], scaler: [] };
    expect(renderSnippet({ code }, nothing).split('\n').filter(line => !line.startsWith('#')).join('\n')).toBe(
      [
        'out = model(x)',
        'optimizer.step()',
        'for batch in train_loader:',
        '    loss = criterion(out, y)',
        'scaler.update()'
      ].join('\n')
    );
    expect(DEFAULT_PLACEHOLDER_NAMES).toEqual({
      model: 'model',
      optimizer: 'optimizer',
      dataloader: 'train_loader',
      loss: 'criterion',
      scaler: 'scaler'
    });
  });

  it('gives an evaluation loop a validation loader: one named so, else val_loader, never the training one', () => {
    const loop = { code: ['for inputs, targets in {{eval_dataloader}}:', '    pass'] };
    expect(renderSnippet(loop)).toContain('for inputs, targets in val_loader:\n    pass');
    expect(renderSnippet(loop, { dataloader: ['train_loader', 'valid_dl'] })).toBe(
      'for inputs, targets in valid_dl:\n    pass'
    );
    expect(renderSnippet(loop, { dataloader: ['loader', 'test loader', 'test_loader'] })).toContain('in test_loader:');
    expect(renderSnippet(loop, { dataloader: ['train_loader'] })).toContain('in val_loader:');
    // Whole words only: these are not validation loaders.
    expect(renderSnippet(loop, { dataloader: ['latest_loader', 'device_loader', 'interval_loader'] })).toContain(
      'in val_loader:'
    );
    expect(renderSnippet(loop, { dataloader: ['latest_loader', 'Valid_DL', 'eval2'] })).toContain('in Valid_DL:');
    expect(unknownPlaceholders(loop.code)).toEqual([]);
  });

  it('uses the first name found, per placeholder, every occurrence', () => {
    const rendered = renderSnippet(
      { code: ['{{model}}.to(d); {{model}}.eval()', '{{loss}}'] },
      { model: ['net', 'backbone'], loss: ['crit'] }
    );
    expect(rendered).toBe('net.to(d); net.eval()\ncrit');
  });

  it('skips names that are not usable identifiers', () => {
    const rendered = renderSnippet(
      { code: ['{{model}}'] },
      { model: ['_private', 'not a name', 'class', '1x', 'good_name'] }
    );
    expect(rendered).toBe('good_name');
  });

  it('leaves unknown placeholders as they are', () => {
    expect(renderSnippet({ code: ['{{device}} = {{model}}'] }, { model: ['net'] })).toBe(
      '{{device}} = net'
    );
    expect(unknownPlaceholders(['{{device}} {{model}} {{x}}'])).toEqual([
      'device',
      'x'
    ]);
  });

  it('gives {{dataloader}} a training loader, never an evaluation one', () => {
    const batch = { code: ['for inputs, targets in {{dataloader}}:', '    pass'] };
    // The kernel lists loaders in the namespace's order: the test loader may come first.
    expect(renderSnippet(batch, { dataloader: ['test_loader', 'val_dl', 'train_dl', 'other_dl'] })).toBe(
      'for inputs, targets in train_dl:\n    pass'
    );
    expect(renderSnippet(batch, { dataloader: ['latest_loader'] })).toBe('for inputs, targets in latest_loader:\n    pass');
    // Only evaluation loaders: the default name, and a TODO line that says why.
    expect(renderSnippet(batch, { dataloader: ['test_loader'] })).toBe(
      [
        '# TODO: no training DataLoader found in the kernel (test_loader is for evaluation): ' +
          'define `train_loader` or change the name below',
        'for inputs, targets in train_loader:',
        '    pass'
      ].join('\n')
    );
  });

  it('says in a TODO line which placeholder got a default name because the kernel had none', () => {
    const rendered = renderSnippet(
      { code: ['{{model}}.train()', '{{optimizer}}.step()', '{{loss}}({{model}}(x), y)', '{{optimizer}}.zero_grad()'] },
      { model: ['net'], optimizer: [], dataloader: ['train_dl'], loss: ['not a name'] }
    );
    expect(rendered).toBe(
      [
        '# TODO: no optimizer found in the kernel: define `optimizer` or change the name below',
        '# TODO: no loss function (nn loss module) found in the kernel: define `criterion` or change the name below',
        'net.train()',
        'optimizer.step()',
        'criterion(net(x), y)',
        'optimizer.zero_grad()'
      ].join('\n')
    );
    // Every name found: no TODO.
    expect(renderSnippet({ code: ['{{model}}.train()'] }, { model: ['net'] })).toBe('net.train()');
    // The kernel was not asked (busy, not connected): one line for every placeholder.
    expect(renderSnippet({ code: ['{{model}}.train()', '{{optimizer}}.step()'] }).split('\n')).toEqual([
      '# TODO: the kernel did not say which names it has (busy or not connected): ' +
        '`model`, `optimizer` stand in for your own below',
      'model.train()',
      'optimizer.step()'
    ]);
    expect(renderSnippet({ code: ['{{eval_dataloader}}'] }, { dataloader: ['train_dl'] }).split('\n')[0]).toBe(
      '# TODO: no evaluation DataLoader (a name with val, test or eval) found in the kernel: ' +
        'define `val_loader` or change the name below'
    );
  });

  it('writes no TODO for a placeholder the code itself creates, and keeps a cell magic first', () => {
    const amp = DEFAULT_SNIPPETS.find(s => s.id === 'amp')!;
    const rendered = renderSnippet(amp, { model: ['net'], optimizer: ['opt'], dataloader: ['dl'], loss: ['crit'] });
    expect(rendered).not.toContain('TODO');
    expect(rendered).toContain('scaler = torch.amp.GradScaler(');
    // ... but one for a placeholder read on the right-hand side of its own assignment.
    expect(renderSnippet({ code: ['{{dataloader}} = rebuild({{dataloader}})'] }, {})).toContain('# TODO: no training DataLoader');
    expect(renderSnippet({ code: ['%%time', '{{model}}.train()'] }, {}).split('\n')).toEqual([
      '%%time',
      '# TODO: no model (nn.Module) found in the kernel: define `model` or change the name below',
      'model.train()'
    ]);
  });

  it('adds only comment lines: every default snippet renders to its code plus "# TODO" lines', () => {
    for (const s of DEFAULT_SNIPPETS) {
      const rendered = renderSnippet(s, {}).split('\n');
      const added = rendered.filter(line => line.startsWith('# TODO: '));
      expect(rendered.filter(line => !line.startsWith('# TODO: ')).join('\n')).toBe(
        renderSnippet(s, { model: ['model'], optimizer: ['optimizer'], dataloader: ['train_loader', 'val_loader'],
                           loss: ['criterion'], scaler: ['scaler'] })
      );
      expect(added.length).toBe(rendered.length - s.code.length);
    }
  });

  it('joins the lines with newlines and keeps the rest intact', () => {
    expect(renderSnippet({ code: ['a = {1: 2}', '', 'b = "{}"'] })).toBe(
      'a = {1: 2}\n\nb = "{}"'
    );
  });
});

describe('placementIndex', () => {
  it('puts "top" first', () => {
    expect(placementIndex('top', 5, 10)).toBe(0);
    expect(placementIndex('top', -1, 0)).toBe(0);
  });

  it('puts "below" under the active cell', () => {
    expect(placementIndex('below', 0, 3)).toBe(1);
    expect(placementIndex('below', 2, 3)).toBe(3);
  });

  it('puts "below" first without an active cell, and stays in range', () => {
    expect(placementIndex('below', -1, 0)).toBe(0);
    expect(placementIndex('below', -1, 4)).toBe(0);
    expect(placementIndex('below', 9, 3)).toBe(3);
    expect(placementIndex('below', NaN, 3)).toBe(0);
  });
});

describe('restartNeeded', () => {
  const cuda = { requiresFresh: 'cuda' as const };
  const tf = { requiresFresh: 'tensorflow' as const };
  const none = { requiresFresh: null };
  const flags = (c: boolean | null, t: boolean | null) => ({
    cudaInitialized: c,
    tensorflowInitialized: t
  });

  it('never warns for snippets without requiresFresh', () => {
    expect(restartNeeded(none, flags(true, true), flags(true, true))).toBe(
      null
    );
  });

  it('warns when the framework is initialised (reply)', () => {
    expect(restartNeeded(cuda, flags(true, false))).toEqual({
      reason: 'cuda',
      message: RESTART_MESSAGES.cuda
    });
    expect(restartNeeded(tf, flags(false, true))).toEqual({
      reason: 'tensorflow',
      message: RESTART_MESSAGES.tensorflow
    });
    expect(restartNeeded(cuda, flags(false, true))).toBe(null);
    expect(restartNeeded(tf, flags(true, false))).toBe(null);
  });

  it('prefers the reply and falls back to the sample', () => {
    expect(restartNeeded(cuda, flags(false, null), flags(true, null))).toBe(
      null
    );
    expect(
      restartNeeded(cuda, flags(null, null), flags(true, null))?.reason
    ).toBe('cuda');
    expect(restartNeeded(cuda, null, flags(true, null))?.reason).toBe('cuda');
    expect(restartNeeded(tf, null, null)).toBe(null);
  });

  it('reads the flags of a sample', () => {
    const sample = makeSample({
      torch: { imported: true, cuda_initialized: true },
      tensorflow: { imported: true, gpus_initialized: false }
    });
    expect(runtimeFlagsOfSample(sample)).toEqual(flags(true, false));
    expect(runtimeFlagsOfSample(null)).toEqual(flags(null, null));
  });

  it('says what to do in the message', () => {
    expect(RESTART_MESSAGES.cuda).toBe(
      'Restart the kernel for this to take effect: CUDA is already initialised in this kernel'
    );
  });
});

describe('parseNotebookNames', () => {
  const full = {
    model: ['net', 'teacher'],
    optimizer: ['opt'],
    dataloader: ['loader'],
    loss: ['criterion'],
    scaler: [],
    runtime: {
      torch_imported: true,
      cuda_initialized: true,
      tensorflow_imported: false,
      tensorflow_initialized: false
    }
  };

  it('reads a well-formed result', () => {
    const parsed = parseNotebookNames(full);
    expect(parsed.names).toEqual({
      model: ['net', 'teacher'],
      optimizer: ['opt'],
      dataloader: ['loader'],
      loss: ['criterion'],
      scaler: []
    });
    expect(parsed.runtime).toEqual({
      cudaInitialized: true,
      tensorflowInitialized: false
    });
    expect(parsed.torchImported).toBe(true);
    expect(parsed.tensorflowImported).toBe(false);
  });

  it.each([
    ['null', null],
    ['a string', 'model'],
    ['an array', [1, 2]],
    ['a number', 42],
    ['an empty object', {}]
  ])('reads %s as nothing found, without throwing', (_, value) => {
    const parsed = parseNotebookNames(value);
    expect(parsed.names.model).toEqual([]);
    expect(parsed.runtime).toEqual({
      cudaInitialized: null,
      tensorflowInitialized: null
    });
  });

  it('drops malformed lists, names and flags field by field', () => {
    const parsed = parseNotebookNames({
      model: 'net',
      optimizer: ['opt', 3, null, '__class__', 'x y'],
      dataloader: null,
      runtime: { cuda_initialized: 'yes', tensorflow_initialized: true }
    });
    expect(parsed.names.model).toEqual([]);
    expect(parsed.names.optimizer).toEqual(['opt']);
    expect(parsed.names.dataloader).toEqual([]);
    expect(parsed.runtime).toEqual({
      cudaInitialized: null,
      tensorflowInitialized: true
    });
  });

  it('keeps at most 20 names per kind', () => {
    const many = Array.from({ length: 50 }, (_, i) => `m${i}`);
    expect(parseNotebookNames({ model: many }).names.model).toHaveLength(20);
  });
});

describe('fetchNotebookNames', () => {
  const live = { state: 'live', kernelBusy: false };

  it('asks a live, idle helper', async () => {
    const request = jest.fn(async () => ({ model: ['net'] }));
    const found = await fetchNotebookNames(live, request);
    expect(request).toHaveBeenCalledTimes(1);
    expect(found?.names.model).toEqual(['net']);
  });

  it('does not wait for a busy kernel or a helper that is not live', async () => {
    const request = jest.fn(async () => ({}));
    expect(
      await fetchNotebookNames({ state: 'live', kernelBusy: true }, request)
    ).toBe(null);
    expect(
      await fetchNotebookNames({ state: 'bootstrapping', kernelBusy: false }, request)
    ).toBe(null);
    expect(await fetchNotebookNames(null, request)).toBe(null);
    expect(await fetchNotebookNames(live, null)).toBe(null);
    expect(request).not.toHaveBeenCalled();
  });

  it('reads a failed or timed-out request as nothing found', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const found = await fetchNotebookNames(live, async () => {
      throw new Error('timed out');
    });
    expect(found).toBe(null);
    warn.mockRestore();
  });
});

describe('snippets setting', () => {
  it('reads a valid entry, hidden defaulting to false', () => {
    expect(parseSnippet(snippet())).toEqual({
      snippet: { ...snippet(), hidden: false }
    });
  });

  it.each([
    ['not an object', 'x', 'not an object'],
    ['missing code', { ...snippet(), code: undefined }, 'code'],
    ['a missing field', (() => { const s: any = snippet(); delete s.requiresFresh; return s; })(), 'missing field(s) "requiresFresh"'],
    ['an unknown field', snippet({ colour: 'red' }), 'unknown field(s) "colour"'],
    ['a bad id', snippet({ id: 'My Snippet' }), 'kebab-case'],
    ['an empty title', snippet({ title: ' ' }), 'title'],
    ['a bad framework', snippet({ framework: 'jax' }), 'framework'],
    ['a bad placement', snippet({ placement: 'bottom' }), 'placement'],
    ['a bad requiresFresh', snippet({ requiresFresh: 'gpu' }), 'requiresFresh'],
    ['a non-boolean hidden', snippet({ hidden: 'yes' }), 'hidden'],
    ['code as a string', snippet({ code: 'x = 1' }), 'code'],
    ['empty code', snippet({ code: [] }), 'code'],
    ['code with a non-string', snippet({ code: ['x', 1] }), 'code']
  ])('skips %s with a reason', (_, value, reason) => {
    const parsed = parseSnippet(value);
    expect('error' in parsed && parsed.error).toContain(reason);
  }); // prettier-ignore

  it('skips invalid entries and duplicate ids, keeping the first', () => {
    const read = readSnippetSettings({
      snippets: [
        snippet({ id: 'a', title: 'first a' }),
        snippet({ id: 'bad', placement: 'middle' }),
        snippet({ id: 'a', title: 'second a' }),
        snippet({ id: 'b', hidden: true })
      ]
    }, DEFAULT_SNIPPETS);
    expect(read.all.map(s => [s.id, s.title])).toEqual([
      ['a', 'first a'],
      ['b', 'Mine']
    ]);
    expect(read.visible.map(s => s.id)).toEqual(['a']);
    expect(read.problems).toHaveLength(2);
    expect(read.problems[0]).toContain('"bad"');
    expect(read.problems[1]).toContain('another snippet before it has the id "a"');
  });

  it('keeps a snippet with unknown placeholders, with a note', () => {
    const read = readSnippetSettings({
      snippets: [snippet({ code: ['{{devise}}'] })]
    }, DEFAULT_SNIPPETS);
    expect(read.all).toHaveLength(1);
    expect(read.problems[0]).toContain('{{devise}}');
  });

  it('uses the default list without a snippets array', () => {
    expect(readSnippetSettings({}, DEFAULT_SNIPPETS).all.map(s => s.id)).toEqual(CONTRACT_IDS);
    const read = readSnippetSettings({ snippets: 'nope' }, DEFAULT_SNIPPETS);
    expect(read.all).toHaveLength(DEFAULT_SNIPPETS.length);
    expect(read.problems[0]).toContain('not an array');
  });

  it('respects an empty list (the user removed every snippet)', () => {
    expect(readSnippetSettings({ snippets: [] }, DEFAULT_SNIPPETS).all).toEqual([]);
  });
});

describe('built-in snippets follow the installed version', () => {
  // What the Settings Editor leaves in the user's settings: the whole default
  // list as it was then, here with the evaluation snippet's older code.
  const frozen = () =>
    DEFAULT_SNIPPETS.map(s =>
      s.id === 'no-grad-eval' ? { ...s, code: ['for inputs, targets in {{dataloader}}:', '    pass'] } : { ...s }
    );
  const code = (read: ReturnType<typeof readSnippetSettings>, id: string) =>
    read.all.find(s => s.id === id)!.code.join('\n');

  it('reads a frozen copy of a built-in as today\'s, keeping only its hidden flag', () => {
    const copy = frozen();
    copy.find(s => s.id === 'amp')!.hidden = true;
    const read = readSnippetSettings({ snippets: copy }, DEFAULT_SNIPPETS);
    expect(code(read, 'no-grad-eval')).toContain('{{eval_dataloader}}');
    expect(read.all.map(s => s.id)).toEqual(DEFAULT_SNIPPETS.map(s => s.id));
    expect(read.visible.map(s => s.id)).not.toContain('amp');
    expect(read.problems).toEqual([]);
  });

  it('reads a copy from before the mark (same id and title) the same way', () => {
    const legacy = frozen().map(({ builtin: _builtin, ...rest }) => rest);
    expect(code(readSnippetSettings({ snippets: legacy }, DEFAULT_SNIPPETS), 'no-grad-eval')).toContain('{{eval_dataloader}}');
  });

  it("keeps the user's own version of a built-in under another title, and their own snippets", () => {
    const mine = { ...DEFAULT_SNIPPETS[0], title: 'My evaluation', code: ['print("mine")'] };
    delete (mine as any).builtin;
    const own = { id: 'my-cell', title: 'Mine', description: '', framework: 'torch', placement: 'below', requiresFresh: null, code: ['x = 1'] };
    const read = readSnippetSettings({ snippets: [mine, own] }, DEFAULT_SNIPPETS);
    expect(read.all.map(s => [s.id, s.code.join('')])).toEqual([
      [DEFAULT_SNIPPETS[0].id, 'print("mine")'],
      ['my-cell', 'x = 1']
    ]); // no built-in entry: the user's own list replaces the defaults
  });

  it('adds the built-ins a copy from an older version lacks, and drops those this version no longer has', () => {
    const older = frozen().filter(s => s.id !== 'loss-item');
    older.push({ ...DEFAULT_SNIPPETS[0], id: 'retired-snippet', builtin: true });
    const read = readSnippetSettings({ snippets: older }, DEFAULT_SNIPPETS);
    expect(read.all.map(s => s.id)).toContain('loss-item');
    expect(read.all.map(s => s.id)).not.toContain('retired-snippet');
    expect(read.problems).toEqual([expect.stringContaining('a built-in snippet this version no longer has')]);
  });

  it('refuses a builtin flag that is not a boolean', () => {
    const parsed = parseSnippet({ ...DEFAULT_SNIPPETS[0], builtin: 'yes' });
    expect('error' in parsed && parsed.error).toContain('builtin');
  });
});

describe('default snippets', () => {
  it('has every id of the contract, valid and unique', () => {
    expect(DEFAULT_SNIPPETS.map(s => s.id)).toEqual(CONTRACT_IDS);
    const read = readSnippetSettings({ snippets: DEFAULT_SNIPPETS }, DEFAULT_SNIPPETS);
    expect(read.problems).toEqual([]);
    expect(read.visible).toHaveLength(CONTRACT_IDS.length);
  });

  it('uses modern APIs only (an older one only as the fallback where torch lacks the modern one)', () => {
    for (const s of DEFAULT_SNIPPETS) {
      // The one exception: torch.cuda.amp.GradScaler, in the else branch of a check
      // that torch.amp has no GradScaler (PyTorch before 2.3).
      const code = s.code.join('\n').replace(GRADSCALER_FALLBACK, '');
      expect(code).not.toContain('torch.cuda.amp');
      const autocasts = code.match(/torch\.amp\.autocast\([^)]*\)/g) ?? [];
      for (const call of autocasts) {
        expect(call).toContain('device_type=');
      }
      for (const call of code.match(/GradScaler\([^)]*\)/g) ?? []) {
        expect(call).toMatch(/GradScaler\(device/);
      }
      expect(code).not.toMatch(/use_reentrant=True/);
      expect(unknownPlaceholders(s.code)).toEqual([]);
    }
  });

  it('names its own loss tensor so that no placeholder name can be rebound (a criterion called `loss`)', () => {
    for (const s of DEFAULT_SNIPPETS) {
      for (const line of s.code) {
        expect([s.id, line]).not.toEqual([s.id, expect.stringMatching(/^\s*loss\s*=/)]);
      }
    }
  });

  it('chooses the device in code wherever torch runs', () => {
    for (const s of DEFAULT_SNIPPETS) {
      const code = s.code.join('\n');
      if (/\.to\(device/.test(code)) {
        expect(code).toContain(
          'device = "cuda" if torch.cuda.is_available() else "cpu"'
        );
      }
    }
  });

  it('says what the contract asks per snippet', () => {
    const byId = new Map(DEFAULT_SNIPPETS.map(s => [s.id, s]));
    const code = (id: string) => byId.get(id)!.code.join('\n');
    expect(code('amp')).toContain('torch.amp.autocast(device_type=device');
    expect(code('amp')).toContain(
      'torch.amp.GradScaler(device, enabled=(device == "cuda"))'
    );
    expect(code('bf16-autocast')).toContain('dtype=torch.bfloat16');
    expect(code('bf16-autocast')).not.toContain('GradScaler(');
    expect(code('grad-checkpointing')).toContain('use_reentrant=False');
    expect(code('allocator-config')).toContain('os.environ["PYTORCH_CUDA_ALLOC_CONF"] = ');
    expect(code('allocator-config')).toContain('"expandable_segments:True"');
    expect(code('allocator-config').indexOf('os.environ')).toBeLessThan(
      code('allocator-config').indexOf('import torch')
    );
    expect(code('memory-fraction')).toMatch(
      /if torch\.cuda\.is_available\(\):\n\s+torch\.cuda\.set_per_process_memory_fraction/
    );
    expect(code('memory-summary')).toContain('torch.cuda.is_initialized()');
    expect(code('profiler-memory')).toContain('profile_memory=True');
    expect(code('profiler-memory')).toContain('"self_cpu_memory_usage"');
    expect(code('batch-size-search')).toContain('OutOfMemoryError');
    expect(code('batch-size-search')).toContain('gc.collect()');
    expect(code('batch-size-search')).toContain('torch.cuda.empty_cache()');
    expect(code('batch-size-search')).toMatch(/\bdel /);
    expect(code('dataloader-pinning')).toContain(
      'pin_memory=torch.cuda.is_available()'
    );
    expect(code('dataloader-pinning')).toContain('num_workers=');
    expect(code('loss-item')).toContain('running_loss += batch_loss.item()');
    expect(code('grad-checkpointing')).toContain('checkpoint_sequential(');
    expect(code('bf16-autocast')).toContain('is_bf16_supported(including_emulation=False)');
    expect(code('batch-size-search')).toContain('named_buffers()');
    expect(code('dataloader-pinning')).toContain('batch_sampler');
    expect(code('no-grad-eval')).toContain('for inputs, targets in {{eval_dataloader}}:');
    expect(code('tf-memory-growth')).toContain(
      'tf.config.experimental.set_memory_growth(gpu, True)'
    );
    expect(code('tf-memory-growth')).toContain('except RuntimeError:');
    expect(code('tf-memory-growth')).toContain(
      'TensorFlow is already initialised: restart the kernel and run this cell first'
    );
    expect(code('tf-memory-growth')).toContain('TF_FORCE_GPU_ALLOW_GROWTH');
    expect(code('tf-clear-session')).toContain(
      'tf.keras.backend.clear_session()'
    );
    expect(code('tf-memory-limit')).toContain('memory_limit=');
  });

  describe('run on the PyTorch versions users have, not only the newest', () => {
    const byId = new Map(DEFAULT_SNIPPETS.map(s => [s.id, s]));
    const code = (id: string) => byId.get(id)!.code.join('\n');

    it('sets expandable_segments only for PyTorch 2.1 and later, read without importing torch', () => {
      // Older allocators reject the option: every CUDA allocation would fail after the restart.
      const cell = code('allocator-config');
      expect(cell).toContain('importlib.metadata.version("torch")');
      const check = cell.indexOf('>= (2, 1):');
      expect(check).toBeGreaterThan(cell.indexOf('importlib.metadata.version("torch")'));
      expect(cell.indexOf('import torch')).toBeGreaterThan(cell.indexOf('os.environ["PYTORCH_CUDA_ALLOC_CONF"] = '));
      expect(cell.indexOf('import torch')).toBe(cell.lastIndexOf('import torch')); // the last line only
      // Set once, inside the check; the else branch says why not and what to do instead.
      expect(cell.match(/expandable_segments:True/g)).toHaveLength(1);
      expect(cell.indexOf('expandable_segments:True')).toBeGreaterThan(check);
      const otherwise = cell.slice(cell.indexOf('\nelse:'));
      expect(otherwise).toMatch(/print\(f?"PyTorch \{torch_version\}/);
      expect(otherwise).toContain('max_split_size_mb');
      expect(otherwise).not.toContain('os.environ[');
    });

    it('falls back to torch.cuda.amp.GradScaler where torch.amp has none (before 2.3)', () => {
      const cell = code('amp');
      expect(cell).toContain('if hasattr(torch.amp, "GradScaler"):');
      expect(cell).toMatch(GRADSCALER_FALLBACK);
      expect(cell.match(GRADSCALER_FALLBACK)![0]).toContain('{{scaler}} = torch.cuda.amp.GradScaler(enabled=(device == "cuda"))');
      // Still no TODO for the scaler: the cell makes it, in both branches.
      expect(renderSnippet(byId.get('amp')!, { model: ['m'], optimizer: ['o'], dataloader: ['d'], loss: ['l'] }))
        .not.toContain('TODO');
    });

    it('halves the batch on a host out-of-memory too, and on torch without OutOfMemoryError; re-raises the rest', () => {
      const cell = code('batch-size-search');
      // torch.OutOfMemoryError is new in 2.5, torch.cuda.OutOfMemoryError in 1.13: caught by
      // what every version raises (RuntimeError, MemoryError), not by name.
      expect(cell).not.toMatch(/except\s+\(?\s*(torch\.(cuda\.)?)?OutOfMemoryError/);
      expect(cell).toContain('except (RuntimeError, MemoryError) as error:');
      expect(cell).toContain('isinstance(error, MemoryError)');
      expect(cell).toContain('"DefaultCPUAllocator" in message');
      expect(cell).toContain('"out of memory" in message');
      expect(cell).toMatch(/if not out_of_memory\(error\):\n\s+raise\b/);
    });

    it('sorts the profile by the memory column this torch has (self_cuda_memory_usage in older ones)', () => {
      const cell = code('profiler-memory');
      expect(cell).toContain('hasattr(events[0], "self_device_memory_usage")');
      expect(cell).toContain('sort_by = "self_cuda_memory_usage"');
      expect(cell).toContain('sort_by = "self_device_memory_usage"');
      expect(cell).toContain('events.table(sort_by=sort_by');
    });
  });

  it('places and flags the before-initialisation snippets', () => {
    const flags = Object.fromEntries(
      DEFAULT_SNIPPETS.map(s => [s.id, [s.placement, s.requiresFresh]])
    );
    expect(flags['allocator-config']).toEqual(['top', 'cuda']);
    expect(flags['tf-memory-growth']).toEqual(['top', 'tensorflow']);
    expect(flags['tf-memory-limit']).toEqual(['top', 'tensorflow']);
    for (const s of DEFAULT_SNIPPETS) {
      if (!['allocator-config', 'tf-memory-growth', 'tf-memory-limit'].includes(s.id)) {
        expect([s.id, s.placement, s.requiresFresh]).toEqual([s.id, 'below', null]);
      }
    }
  });
});

describe('schema of the snippets setting', () => {
  it('declares the item schema of the contract', () => {
    const item = schema.definitions.snippet;
    expect(schema.properties.snippets.items).toEqual({
      $ref: '#/definitions/snippet'
    });
    expect(item.additionalProperties).toBe(false);
    expect(item.required.sort()).toEqual(
      [
        'id',
        'title',
        'description',
        'framework',
        'placement',
        'requiresFresh',
        'code'
      ].sort()
    );
    expect(item.properties.framework.enum).toEqual(['torch', 'tensorflow']);
    expect(item.properties.placement.enum).toEqual(['below', 'top']);
    expect(item.properties.requiresFresh.enum).toEqual([
      'cuda',
      'tensorflow',
      null
    ]);
  });

  it('adds the Memory menu to the notebook toolbar', () => {
    expect(schema['jupyter.lab.toolbars'].Notebook).toEqual([
      { name: 'vram-memory', rank: 50 }
    ]);
  });
});
