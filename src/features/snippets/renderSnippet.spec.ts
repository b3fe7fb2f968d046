/**
 * Tests for renderSnippet, which fills a snippet's code with the names the
 * kernel found and adds TODO lines for the placeholders it found nothing for.
 */
import { DEFAULT_SNIPPETS } from './defaultSnippets';
import { DEFAULT_PLACEHOLDER_NAMES, renderSnippet } from './snippet';
import { unknownPlaceholders } from './placeholders';

describe('renderSnippet', () => {
  const code = [
    'out = {{model}}(x)',
    '{{optimizer}}.step()',
    'for batch in {{dataloader}}:',
    '    loss = {{loss}}(out, y)',
    '{{scaler}}.update()'
  ];

  it('uses the default names when the kernel found nothing', () => {
    const nothing = {
      model: [],
      optimizer: [],
      dataloader: [],
      loss: [],
      scaler: []
    };
    expect(
      renderSnippet({ code }, nothing)
        .split('\n')
        .filter(line => !line.startsWith('#'))
        .join('\n')
    ).toBe(
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
    const loop = {
      code: ['for inputs, targets in {{eval_dataloader}}:', '    pass']
    };
    expect(renderSnippet(loop)).toContain(
      'for inputs, targets in val_loader:\n    pass'
    );
    expect(
      renderSnippet(loop, { dataloader: ['train_loader', 'valid_dl'] })
    ).toBe('for inputs, targets in valid_dl:\n    pass');
    expect(
      renderSnippet(loop, {
        dataloader: ['loader', 'test loader', 'test_loader']
      })
    ).toContain('in test_loader:');
    expect(renderSnippet(loop, { dataloader: ['train_loader'] })).toContain(
      'in val_loader:'
    );
    // Only whole words count, so these names are not validation loaders.
    expect(
      renderSnippet(loop, {
        dataloader: ['latest_loader', 'device_loader', 'interval_loader']
      })
    ).toContain('in val_loader:');
    expect(
      renderSnippet(loop, {
        dataloader: ['latest_loader', 'Valid_DL', 'eval2']
      })
    ).toContain('in Valid_DL:');
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
    expect(
      renderSnippet({ code: ['{{device}} = {{model}}'] }, { model: ['net'] })
    ).toBe('{{device}} = net');
    expect(unknownPlaceholders(['{{device}} {{model}} {{x}}'])).toEqual([
      'device',
      'x'
    ]);
  });

  it('gives {{dataloader}} a training loader, never an evaluation one', () => {
    const batch = {
      code: ['for inputs, targets in {{dataloader}}:', '    pass']
    };
    // The kernel lists loaders in the namespace's order, so the test loader may
    // come first and must be skipped.
    expect(
      renderSnippet(batch, {
        dataloader: ['test_loader', 'val_dl', 'train_dl', 'other_dl']
      })
    ).toBe('for inputs, targets in train_dl:\n    pass');
    expect(renderSnippet(batch, { dataloader: ['latest_loader'] })).toBe(
      'for inputs, targets in latest_loader:\n    pass'
    );
    // When there are only evaluation loaders, the default name is used, with a
    // TODO line that says why.
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
      {
        code: [
          '{{model}}.train()',
          '{{optimizer}}.step()',
          '{{loss}}({{model}}(x), y)',
          '{{optimizer}}.zero_grad()'
        ]
      },
      {
        model: ['net'],
        optimizer: [],
        dataloader: ['train_dl'],
        loss: ['not a name']
      }
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
    // When every name is found, there is no TODO line.
    expect(
      renderSnippet({ code: ['{{model}}.train()'] }, { model: ['net'] })
    ).toBe('net.train()');
    // When the kernel was not asked (because it was busy or not connected), one
    // TODO line covers every placeholder.
    expect(
      renderSnippet({
        code: ['{{model}}.train()', '{{optimizer}}.step()']
      }).split('\n')
    ).toEqual([
      '# TODO: the kernel did not say which names it has (busy or not connected): ' +
        '`model`, `optimizer` stand in for your own below',
      'model.train()',
      'optimizer.step()'
    ]);
    expect(
      renderSnippet(
        { code: ['{{eval_dataloader}}'] },
        { dataloader: ['train_dl'] }
      ).split('\n')[0]
    ).toBe(
      '# TODO: no evaluation DataLoader (a name with val, test or eval) found in the kernel: ' +
        'define `val_loader` or change the name below'
    );
  });

  it('writes no TODO for a placeholder the code itself creates, and keeps a cell magic first', () => {
    const amp = DEFAULT_SNIPPETS.find(s => s.id === 'amp')!;
    const rendered = renderSnippet(amp, {
      model: ['net'],
      optimizer: ['opt'],
      dataloader: ['dl'],
      loss: ['crit']
    });
    expect(rendered).not.toContain('TODO');
    expect(rendered).toContain('scaler = torch.amp.GradScaler(');
    // A placeholder that is read on the right-hand side of its own assignment
    // does get a TODO line, because the code reads it before creating it.
    expect(
      renderSnippet({ code: ['{{dataloader}} = rebuild({{dataloader}})'] }, {})
    ).toContain('# TODO: no training DataLoader');
    expect(
      renderSnippet({ code: ['%%time', '{{model}}.train()'] }, {}).split('\n')
    ).toEqual([
      '%%time',
      '# TODO: no model (nn.Module) found in the kernel: define `model` or change the name below',
      'model.train()'
    ]);
  });

  it('adds only comment lines: every default snippet renders to its code plus "# TODO" lines', () => {
    for (const s of DEFAULT_SNIPPETS) {
      const rendered = renderSnippet(s, {}).split('\n');
      const added = rendered.filter(line => line.startsWith('# TODO: '));
      expect(
        rendered.filter(line => !line.startsWith('# TODO: ')).join('\n')
      ).toBe(
        renderSnippet(s, {
          model: ['model'],
          optimizer: ['optimizer'],
          dataloader: ['train_loader', 'val_loader'],
          loss: ['criterion'],
          scaler: ['scaler']
        })
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
