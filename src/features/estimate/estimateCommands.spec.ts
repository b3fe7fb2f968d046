/** The estimate commands: the dialog's names, real steps asked first, the answer told, a cell inserted. */
import { YNotebook } from '@jupyter/ydoc';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';
import { nullTranslator } from '@jupyterlab/translation';

import { makeEstimateResult } from '../../testing/estimateFixtures';
import { readEstimateProgress } from '../../protocol/estimate';
import type { EstimateRequestFields } from '../../kernel/connectionRequests';
import { CommandIDs } from '../../ui/commandIds';
import {
  candidatesOf,
  estimateMemory,
  IEstimateHost
} from './estimateCommandLazy';
import { registerEstimateCommands } from './estimateCommands';
import { MemoryEstimate } from './MemoryEstimate';

function setup(
  options: {
    names?: unknown;
    answer?: EstimateRequestFields | null;
    confirm?: boolean;
  } = {}
) {
  const estimateMemoryRequest = jest.fn(async () => makeEstimateResult());
  const estimate = new MemoryEstimate({
    connection: {
      estimateMemory: estimateMemoryRequest,
      otherMessage: new Signal({})
    },
    readProgress: readEstimateProgress
  });
  const sharedModel = YNotebook.create();
  sharedModel.insertCells(0, [{ cell_type: 'code', source: 'x = 1' }]);
  const notebook = {
    model: { sharedModel },
    activeCellIndex: 0,
    deselectAll: jest.fn()
  };
  const notify = jest.fn();
  const ask = jest.fn(async () =>
    options.answer === undefined
      ? { model: 'net', batch: 'batch' }
      : options.answer
  );
  const confirmRealSteps = jest.fn(async () => options.confirm ?? false);
  const commands = new CommandRegistry();
  const host: IEstimateHost = {
    app: {
      commands,
      shell: { activateById: jest.fn() }
    } as unknown as IEstimateHost['app'],
    trans: nullTranslator.load('jupyterlab-vram'),
    sidebar: { showTab: jest.fn() },
    palette: null,
    category: 'GPU memory (VRAM)',
    current: () => estimate,
    notebookNames: async () =>
      options.names ?? {
        model: ['net'],
        optimizer: ['opt'],
        loss: ['criterion'],
        dataloader: ['loader'],
        batch: ['batch']
      },
    notebook: () => ({ id: 'nb', content: notebook }),
    units: () => 'binary',
    notify,
    showMemory: jest.fn(),
    ask,
    confirmRealSteps
  };
  return {
    host,
    estimate,
    estimateMemoryRequest,
    ask,
    confirmRealSteps,
    notify,
    sharedModel,
    commands
  };
}

describe('the estimate commands', () => {
  it('offers the kernel’s names, runs the estimate and tells the verdict', async () => {
    const { host, ask, estimateMemoryRequest, notify } = setup();
    const state = await estimateMemory({}, host);
    expect(ask).toHaveBeenCalledWith(
      {
        model: ['net'],
        optimizer: ['opt'],
        loss: ['criterion'],
        batch: ['batch']
      },
      {}
    );
    expect(estimateMemoryRequest).toHaveBeenCalledWith({
      model: 'net',
      batch: 'batch'
    });
    expect(state?.status).toBe('done');
    expect(host.showMemory).toHaveBeenCalled();
    expect(notify).toHaveBeenCalledWith(
      'success',
      expect.stringContaining('7,000')
    );
  });

  it('asks nothing of the kernel when the user cancels', async () => {
    const { host, estimateMemoryRequest } = setup({ answer: null });
    expect(await estimateMemory({}, host)).toBeNull();
    expect(estimateMemoryRequest).not.toHaveBeenCalled();
  });

  it('asks before real steps, and runs them only when the user agrees', async () => {
    const args = { model: 'net', batch: 'batch', realStep: true, ask: false };
    const refused = setup({ confirm: false });
    expect(await estimateMemory(args, refused.host)).toBeNull();
    expect(refused.confirmRealSteps).toHaveBeenCalled();
    expect(refused.estimateMemoryRequest).not.toHaveBeenCalled();
    const agreed = setup({ confirm: true });
    await estimateMemory(args, agreed.host);
    expect(agreed.ask).not.toHaveBeenCalled();
    expect(agreed.estimateMemoryRequest).toHaveBeenCalledWith({
      model: 'net',
      batch: 'batch',
      real_step: true
    });
  });

  it('reads the names of any answer, malformed ones as none', () => {
    expect(candidatesOf(null)).toEqual({
      model: [],
      optimizer: [],
      loss: [],
      batch: []
    });
    expect(candidatesOf({ model: ['a', 3], batch: 'x' })).toEqual({
      model: ['a'],
      optimizer: [],
      loss: [],
      batch: []
    });
  });

  it('inserts the cell of a remedy with its figures, once estimated', async () => {
    const { host, commands, sharedModel, notify } = setup();
    registerEstimateCommands(host);
    expect(
      await commands.execute(CommandIDs.insertEstimateCell, {
        variant: 'amp_bf16'
      })
    ).toBeNull();
    expect(notify).toHaveBeenCalledWith(
      'info',
      expect.stringContaining('Estimate a training step first')
    );
    await commands.execute(CommandIDs.estimateMemory);
    const inserted = (await commands.execute(CommandIDs.insertEstimateCell, {
      variant: 'grad_accumulation'
    })) as { index: number; code: string };
    expect(inserted.index).toBe(1);
    expect(sharedModel.cells[1].getSource()).toBe(inserted.code);
    expect(inserted.code).toContain('accumulation_steps = 4');
    expect(inserted.code).toContain('for inputs, targets in loader:');
  });
});
