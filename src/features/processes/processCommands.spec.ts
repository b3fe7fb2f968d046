/** The stop-process command: it asks first, always, then stops and tells how it went. */
import { CommandRegistry } from '@lumino/commands';
import { nullTranslator } from '@jupyterlab/translation';

import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { makeHello, makeSample, wire } from '../../testing/fixtures';
import {
  makeProcessTree,
  makeStopResult,
  makeTreeProcess
} from '../../testing/processFixtures';
import { CommandIDs } from '../../ui/commandIds';
import { registerProcessCommands } from './processCommands';
import { ProcessTracker } from './ProcessTracker';
import { stopProcessSentences, StopProcessRequest } from './StopProcessDialog';

function setup(answer: boolean) {
  const model = new KernelMemoryModel({ historyCapacity: 10 });
  model.setState('live');
  model.ingest(wire(makeHello()));
  const process = makeTreeProcess({ pid: 10, command: 'python -c "sleep"' });
  model.ingest(wire(makeSample({ processes: makeProcessTree([process]) })));
  const connection = {
    stopProcess: jest.fn(async () => makeStopResult(process))
  };
  const tracker = new ProcessTracker({ connection, model });
  const commands = new CommandRegistry();
  const asked: StopProcessRequest[] = [];
  const notes: [string, string][] = [];
  const showTab = jest.fn();
  registerProcessCommands({
    app: { commands, shell: { activateById: jest.fn() } } as any,
    trans: nullTranslator.load('jupyterlab_vram'),
    sidebar: { showTab },
    current: () => tracker,
    units: () => 'binary',
    notify: (type, message) => notes.push([type, message]),
    confirm: async request => {
      asked.push(request);
      return answer;
    }
  });
  return { commands, connection, asked, notes, process, showTab, tracker };
}

describe('stop-process command', () => {
  it('sends nothing when the user says no', async () => {
    const t = setup(false);
    const result = await t.commands.execute(CommandIDs.stopProcess, {
      pid: 10,
      startTime: t.process.start_time
    });
    expect(result).toBeNull();
    expect(t.asked).toHaveLength(1);
    expect(t.asked[0]).toMatchObject({ process: t.process, timeoutS: 5 });
    expect(t.connection.stopProcess).not.toHaveBeenCalled();
  });

  it('stops after the user confirms, and says how it went', async () => {
    const t = setup(true);
    const state: any = await t.commands.execute(CommandIDs.stopProcess, {
      pid: 10,
      startTime: t.process.start_time,
      timeoutS: 2
    });
    expect(t.connection.stopProcess).toHaveBeenCalledWith({
      pid: 10,
      start_time: t.process.start_time,
      timeout_s: 2
    });
    expect(state.status).toBe('done');
    expect(t.showTab).toHaveBeenCalledWith('processes');
    expect(t.notes).toEqual([
      ['success', 'Stopped DataLoader worker pid 10: it ended on SIGTERM.']
    ]);
  });

  it('asks nothing and stops nothing for a process not listed (a reused pid)', async () => {
    const t = setup(true);
    const result = await t.commands.execute(CommandIDs.stopProcess, {
      pid: 10,
      startTime: t.process.start_time + 1
    });
    expect(result).toBeNull();
    expect(t.asked).toHaveLength(0);
    expect(t.connection.stopProcess).not.toHaveBeenCalled();
    expect(t.notes[0][0]).toBe('info');
  });

  it('names role, pid, command, memory and the signals in the question', () => {
    const t = setup(true);
    const sentences = stopProcessSentences({
      process: t.process,
      origin: null,
      timeoutS: 5,
      units: 'binary'
    });
    expect(sentences).toEqual([
      'DataLoader worker, pid 10, started by unknown.',
      'Command: python -c "sleep"',
      'It holds 100 MiB USS of RAM and GPU 0: 500 MiB.',
      expect.stringContaining(
        'SIGTERM, then SIGKILL if it has not ended after 5 s'
      )
    ]);
  });
});
