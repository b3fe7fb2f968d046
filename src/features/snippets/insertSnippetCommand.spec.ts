/**
 * Tests the insert-snippet command end to end in the frontend. The command asks
 * a fake kernel for `notebook_names` over the comm, renders the code, and puts
 * it as a code cell into a real shared notebook model (YNotebook), where the
 * cell is active and one undo removes it. A restart warning then shows as a
 * notification and in the sidebar.
 */
import { CommandIDs } from '../../ui/commandIds';
import { SnippetInsertion } from './snippetCommands';
import { restartMessage } from './snippet';
import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { makeSample, wire } from '../../testing/fixtures';
import { settle } from '../../testing/fakeKernel';
import {
  quietYjsCellWarnings,
  setup,
  sources
} from '../../testing/snippetCommandsFixtures';

const RUNTIME_FRESH = {
  torch_imported: true,
  cuda_initialized: false,
  tensorflow_imported: false,
  tensorflow_initialized: false
};

quietYjsCellWarnings();

describe('insert-snippet', () => {
  it('asks the kernel for names and inserts the cell below the active one', async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.insertSnippet, {
      id: 'no-grad-eval'
    });
    await settle();
    expect(t.namesRequests()).toEqual([
      { type: 'notebook_names', request_id: expect.any(String) }
    ]);
    t.reply({
      model: ['net'],
      optimizer: [],
      dataloader: ['val_loader'],
      loss: [],
      scaler: [],
      runtime: RUNTIME_FRESH
    });
    const result = (await running) as SnippetInsertion;
    expect(result).toMatchObject({
      id: 'no-grad-eval',
      index: 2,
      restartNeeded: false,
      namesFound: true
    });
    const cells = sources(t.notebook);
    expect(cells).toHaveLength(4);
    expect(cells[2]).toBe(result.code);
    expect(cells[2]).toContain('net.to(device).eval()');
    expect(cells[2]).toContain('for inputs, targets in val_loader:');
    expect(cells[2]).not.toContain('{{');
    const cell = t.notebook.model.sharedModel.cells[2];
    expect(cell.cell_type).toBe('code');
    expect((cell as any).execution_count).toBe(null);
    expect(t.notebook.activeCellIndex).toBe(2);
    expect(t.notebook.deselectAll).toHaveBeenCalled();
    expect(t.app.shell.activateById).toHaveBeenCalledWith('notebook-1');
    // The cell is inserted but not run, so only the helper's bootstrap was
    // executed.
    expect(t.kernel.executed.map(e => e.code)).toEqual(['BOOTSTRAP']);
    expect(t.notes).toEqual([]);
    t.dispose();
  });

  it('one undo removes exactly the inserted cell', async () => {
    const t = await setup();
    const shared = t.notebook.model.sharedModel;
    // The user has just added a cell, within the undo manager's merge window,
    // so one undo could take both cells if the insertion did not stop capturing.
    shared.insertCell(3, { cell_type: 'code', source: 'user = 1' });
    t.kernel.status = 'busy';
    // A busy kernel is not asked for names, so the command does not wait.
    t.sessionContext.setStatus('busy');
    await t.commands.execute(CommandIDs.insertSnippet, { id: 'loss-item' });
    expect(sources(t.notebook)).toHaveLength(5);
    shared.undo();
    expect(sources(t.notebook)).toEqual([
      'a = 1',
      'b = 2',
      'c = 3',
      'user = 1'
    ]);
    shared.redo();
    expect(sources(t.notebook)[2]).toContain(
      'running_loss += batch_loss.item()'
    );
    t.dispose();
  });

  it('uses the placeholders at once while the kernel is busy', async () => {
    const t = await setup();
    t.sessionContext.setStatus('busy');
    const result = (await t.commands.execute(CommandIDs.insertSnippet, {
      id: 'amp'
    })) as SnippetInsertion;
    expect(t.namesRequests()).toEqual([]);
    expect(result.namesFound).toBe(false);
    expect(result.code).toContain('scaler = torch.amp.GradScaler(device');
    expect(result.code).toContain(
      'batch_loss = criterion(model(inputs), targets)'
    );
    expect(result.code.split('\n')[0]).toBe(
      '# TODO: the kernel did not say which names it has (busy or not connected): ' +
        '`model`, `train_loader`, `optimizer`, `criterion` stand in for your own below'
    );
    expect(result.code).toContain('for inputs, targets in train_loader:');
    t.dispose();
  });

  it('uses the placeholders when the helper answers with an error or junk', async () => {
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    const t = await setup();
    let running = t.commands.execute(CommandIDs.insertSnippet, { id: 'amp' });
    await settle();
    t.comm.replyError('unknown_request', 'no such request');
    let result = (await running) as SnippetInsertion;
    expect(result.namesFound).toBe(false);
    expect(result.code).toContain('model(inputs)');
    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining('no notebook names, using placeholders'),
      expect.anything()
    );
    warn.mockRestore();

    running = t.commands.execute(CommandIDs.insertSnippet, { id: 'amp' });
    await settle();
    t.reply({ model: 'net', runtime: 'yes' });
    result = (await running) as SnippetInsertion;
    expect(result.namesFound).toBe(true);
    expect(result.code).toContain('model(inputs)');
    t.dispose();
  });

  it('does not ask when the snippet has no placeholders and no requirement', async () => {
    const t = await setup();
    await t.commands.execute(CommandIDs.insertSnippet, {
      id: 'memory-summary'
    });
    expect(t.namesRequests()).toEqual([]);
    expect(sources(t.notebook)[2]).toContain('torch.cuda.memory_summary');
    t.dispose();
  });

  it('puts a "top" snippet first and warns when CUDA is initialised', async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.insertSnippet, {
      id: 'allocator-config'
    });
    await settle();
    t.reply({ runtime: { ...RUNTIME_FRESH, cuda_initialized: true } });
    const result = (await running) as SnippetInsertion;
    expect(result.index).toBe(0);
    expect(result.restartNeeded).toBe(true);
    expect(sources(t.notebook)[0]).toContain('PYTORCH_CUDA_ALLOC_CONF');
    expect(t.notebook.activeCellIndex).toBe(0);
    expect(t.notes).toEqual([['warning', restartMessage('cuda')]]);

    t.render();
    const warning = t.q('[data-vram-role="restart-warning"]')!;
    expect(warning.hidden).toBe(false);
    expect(warning.textContent).toContain(
      'Restart the kernel for this to take effect: CUDA is already initialised in this kernel'
    );
    expect(warning.dataset.vramSnippet).toBe('allocator-config');
    expect(warning.dataset.vramReason).toBe('cuda');

    // A warning dismissed by hand goes away.
    t.q('[data-vram-role="dismiss-restart-warning"]')!.click();
    t.render();
    expect(t.q('[data-vram-role="restart-warning"]')!.hidden).toBe(true);
    t.dispose();
  });

  it("says so when the notebook's kernel does not run Python, and still inserts the cell", async () => {
    const t = await setup();
    (t.monitor.current as KernelMemoryModel).setState(
      'non-python',
      'This notebook runs R.'
    );
    const result = (await t.commands.execute(CommandIDs.insertSnippet, {
      id: 'no-grad-eval'
    })) as SnippetInsertion;
    expect(sources(t.notebook)[result.index]).toContain('torch.no_grad()');
    expect(t.notes).toEqual([
      [
        'warning',
        "This notebook's kernel does not run Python: the inserted cell is Python code."
      ]
    ]);
    t.dispose();
  });

  it("keeps another kernel's restart warning when the snippet goes into a fresh one", async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.insertSnippet, {
      id: 'allocator-config'
    });
    await settle();
    t.reply({ runtime: { ...RUNTIME_FRESH, cuda_initialized: true } });
    await running;
    const warned = t.library.warning;
    expect(warned?.snippetId).toBe('allocator-config');
    // The warning now belongs to another kernel. Inserting the same snippet
    // into this kernel, which needs no restart, must not clear it.
    t.library.setWarning({
      ...warned!,
      model: new KernelMemoryModel({ historyCapacity: 10 })
    });
    const again = t.commands.execute(CommandIDs.insertSnippet, {
      id: 'allocator-config'
    });
    await settle();
    t.reply({ runtime: RUNTIME_FRESH });
    await again;
    expect(t.library.warning).not.toBeNull();
    t.dispose();
  });

  it('does not warn when the kernel has not initialised CUDA', async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.insertSnippet, {
      id: 'allocator-config'
    });
    await settle();
    t.reply({ runtime: RUNTIME_FRESH });
    expect(((await running) as SnippetInsertion).restartNeeded).toBe(false);
    expect(t.notes).toEqual([]);
    t.render();
    expect(t.q('[data-vram-role="restart-warning"]')!.hidden).toBe(true);
    t.dispose();
  });

  it('warns from the latest sample when the kernel cannot answer', async () => {
    const t = await setup();
    t.comm.receive(
      wire(
        makeSample({
          tensorflow: { imported: true, gpus_initialized: true }
        })
      )
    );
    t.sessionContext.setStatus('busy');
    const result = (await t.commands.execute(
      CommandIDs.insertTfMemoryGrowth
    )) as SnippetInsertion;
    expect(result).toMatchObject({
      id: 'tf-memory-growth',
      index: 0,
      restartNeeded: true
    });
    expect(t.notes).toEqual([['warning', restartMessage('tensorflow')]]);
    t.render();
    const warning = t.q('[data-vram-role="restart-warning"]')!;
    expect(warning.hidden).toBe(false);
    expect(warning.dataset.vramReason).toBe('tensorflow');

    // Restarting the kernel is what the warning asked for, so it goes away.
    t.sessionContext.setStatus('restarting');
    t.render();
    expect(t.library.warning).toBe(null);
    expect(t.q('[data-vram-role="restart-warning"]')!.hidden).toBe(true);
    t.dispose();
  });

  it('refuses an unknown id with a notification', async () => {
    const t = await setup();
    expect(
      await t.commands.execute(CommandIDs.insertSnippet, { id: 'nope' })
    ).toBe(null);
    expect(t.notes[0][0]).toBe('warning');
    expect(t.notes[0][1]).toContain('"nope"');
    expect(sources(t.notebook)).toHaveLength(3);
    t.dispose();
  });

  it('labels the command with the snippet title', async () => {
    const t = await setup();
    const title = t.library.get('amp')!.title;
    expect(t.commands.label(CommandIDs.insertSnippet, { id: 'amp' })).toBe(
      `Insert Cell: ${title}`
    );
    expect(
      t.commands.label(CommandIDs.insertSnippet, { id: 'amp', menu: true })
    ).toBe(title);
    expect(t.commands.isEnabled(CommandIDs.insertSnippet, { id: 'amp' })).toBe(
      true
    );
    t.dispose();
  });
});
