/** The stop-process command: it asks first, always, then stops and tells how it went. */
import { CommandRegistry } from '@lumino/commands';
import { nullTranslator } from '@jupyterlab/translation';

import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { makeHello, makeSample, wire } from '../../testing/fixtures';
import {
  makeProcessTree,
  makeReleasable,
  makeReleaseResult,
  makeStopResult,
  makeTreeProcess
} from '../../testing/processFixtures';
import type { Releasable } from '../../protocol/release';
import { releaseSentences } from './releaseText';
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
  const pool = makeReleasable();
  const connection = {
    stopProcess: jest.fn(async () => makeStopResult(process)),
    releaseEngine: jest.fn(async (request: { mode: string }) =>
      request.mode === 'list'
        ? { mode: 'list', releasables: [pool], released: null, elapsed_ms: 1 }
        : makeReleaseResult(pool)
    )
  };
  const tracker = new ProcessTracker({
    connection,
    engines: connection,
    model
  });
  const askedRelease: Releasable[] = [];
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
    },
    confirmRelease: async releasable => {
      askedRelease.push(releasable);
      return answer;
    }
  });
  return {
    commands,
    connection,
    asked,
    askedRelease,
    notes,
    pool,
    process,
    showTab,
    tracker
  };
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

describe('release-engine command', () => {
  it('lists first when this page has no list yet, asks, and sends nothing on no', async () => {
    const t = setup(false);
    const result = await t.commands.execute(CommandIDs.releaseEngine, {
      kind: 'mp_pool',
      name: 'pool'
    });
    expect(result).toBeNull();
    expect(t.connection.releaseEngine.mock.calls).toEqual([[{ mode: 'list' }]]);
    expect(t.askedRelease).toEqual([t.pool]);
  });

  it('releases after the user confirms, and says how it went', async () => {
    const t = setup(true);
    const state: any = await t.commands.execute(CommandIDs.releaseEngine, {
      kind: 'mp_pool',
      name: 'pool',
      timeoutS: 20
    });
    expect(t.connection.releaseEngine).toHaveBeenLastCalledWith({
      mode: 'release',
      kind: 'mp_pool',
      name: 'pool',
      timeout_s: 20
    });
    expect(state.status).toBe('done');
    expect(t.showTab).toHaveBeenCalledWith('processes');
    expect(t.notes).toEqual([
      [
        'success',
        'Released multiprocessing pool \u201cpool\u201d: 2 processes ended (0.1 s).'
      ]
    ]);
  });

  it('asks nothing for what the kernel does not list', async () => {
    const t = setup(true);
    const result = await t.commands.execute(CommandIDs.releaseEngine, {
      kind: 'ray',
      name: 'ray'
    });
    expect(result).toBeNull();
    expect(t.askedRelease).toHaveLength(0);
    expect(t.notes).toEqual([
      [
        'info',
        "Nothing was released: Ray runtime \u201cray\u201d is not in the kernel's list of what it can release now."
      ]
    ]);
  });

  it('says what it is, what it holds and what Release does in the question', () => {
    const t = setup(true);
    expect(releaseSentences(t.pool, 'binary')).toEqual([
      'multiprocessing pool \u201cpool\u201d: multiprocessing Pool (2 workers, fork).',
      'It holds 2 processes, 100 MiB of RAM. Its processes: multiprocessing pool worker.',
      expect.stringContaining('pool.terminate() and pool.join()'),
      expect.stringContaining('between cells')
    ]);
  });
});
