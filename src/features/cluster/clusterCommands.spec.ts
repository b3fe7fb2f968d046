/**
 * The cluster commands: gc, empty_cache and restart ask first and send
 * nothing when the user says no; reading the allocators does not ask; an
 * action the engine does not offer, or no cluster, asks nothing of the
 * kernel; the dialog's sentences say what a restart loses.
 */
import { CommandRegistry } from '@lumino/commands';
import { nullTranslator } from '@jupyterlab/translation';

import { parseClusterMessage } from '../../protocol/cluster';
import {
  makeClusterActionResult,
  makeClusterMessage,
  makeClusterState
} from '../../testing/clusterFixtures';
import { CommandIDs } from '../../ui/commandIds';
import { clusterActionSentences } from './ClusterActionDialog';
import { registerClusterCommands } from './clusterCommands';
import { ClusterTracker } from './ClusterTracker';

function setup(answer: boolean, message = makeClusterMessage(2)) {
  const clusterAction = jest.fn(async (request: { action: string }) =>
    makeClusterActionResult(2, { action: request.action as any })
  );
  const tracker = new ClusterTracker({
    connection: { clusterAction },
    read: parseClusterMessage
  });
  tracker.ingest(message);
  const commands = new CommandRegistry();
  const asked: string[] = [];
  const notes: [string, string][] = [];
  const palette = { addItem: jest.fn() };
  registerClusterCommands({
    app: { commands, shell: { activateById: jest.fn() } } as any,
    trans: nullTranslator.load('jupyterlab_vram'),
    sidebar: { showTab: jest.fn() },
    palette,
    category: 'GPU memory (VRAM)',
    current: () => tracker,
    units: () => 'binary',
    notify: (type, text) => notes.push([type, text]),
    confirm: async (cluster, action) => {
      asked.push(`${action}:${cluster.name}`);
      return answer;
    }
  });
  return { commands, clusterAction, asked, notes, palette };
}

describe('the cluster commands', () => {
  it('are in the palette', () => {
    const { palette } = setup(true);
    expect(palette.addItem.mock.calls.map(c => c[0].command).sort()).toEqual(
      [
        CommandIDs.clusterEmptyCache,
        CommandIDs.clusterGc,
        CommandIDs.clusterReadAllocators,
        CommandIDs.clusterRestart
      ].sort()
    );
  });

  it.each([
    [CommandIDs.clusterGc, 'gc'],
    [CommandIDs.clusterEmptyCache, 'empty_cache'],
    [CommandIDs.clusterRestart, 'restart']
  ])('%s asks first and sends nothing on no', async (id, action) => {
    const { commands, clusterAction, asked } = setup(false);
    expect(await commands.execute(id)).toBeNull();
    expect(asked).toEqual([`${action}:tcp://127.0.0.1:8786`]);
    expect(clusterAction).not.toHaveBeenCalled();
  });

  it('runs the action when the user agrees, and tells how it went', async () => {
    const { commands, clusterAction, notes } = setup(true);
    const state: any = await commands.execute(CommandIDs.clusterEmptyCache, {
      cluster: 'tcp://127.0.0.1:8786',
      timeoutS: 60
    });
    expect(state.status).toBe('done');
    expect(clusterAction).toHaveBeenCalledWith({
      engine: 'dask',
      cluster: 'tcp://127.0.0.1:8786',
      action: 'empty_cache',
      timeout_s: 60
    });
    expect(notes[0][0]).toBe('success');
  });

  it('reads the allocators without asking', async () => {
    const { commands, clusterAction, asked } = setup(false);
    await commands.execute(CommandIDs.clusterReadAllocators);
    expect(asked).toEqual([]);
    expect(clusterAction).toHaveBeenCalledTimes(1);
  });

  it('asks nothing of the kernel without a cluster, or for an action not offered', async () => {
    const none = setup(true, makeClusterMessage(0, 0, { clusters: [] }));
    expect(await none.commands.execute(CommandIDs.clusterGc)).toBeNull();
    expect(none.notes[0][1]).toContain('drives no Dask or Ray cluster');
    expect(none.commands.isEnabled(CommandIDs.clusterGc)).toBe(false);
    const ray = setup(
      true,
      makeClusterMessage(1, 0, {
        clusters: [makeClusterState(1, 0, { engine: 'ray', actions: ['gc'] })]
      })
    );
    expect(await ray.commands.execute(CommandIDs.clusterRestart)).toBeNull();
    expect(ray.clusterAction).not.toHaveBeenCalled();
    expect(ray.notes[0][1]).toContain('does not offer it');
  });

  it('says in the dialog that a restart restarts every worker and loses their data', () => {
    const sentences = clusterActionSentences(makeClusterState(4), 'restart');
    expect(sentences[0]).toBe(
      'Dask 2024.8.0 cluster tcp://127.0.0.1:8786 (4 workers).'
    );
    expect(sentences[1]).toContain('Restarts every worker');
    expect(sentences[1]).toContain('is lost');
  });
});
