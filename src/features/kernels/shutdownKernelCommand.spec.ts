/**
 * Tests for the shutdown-kernel command, which asks the user first and then
 * shuts the kernel down through the notebook's session context.
 */
import { CommandRegistry } from '@lumino/commands';

import { CommandIDs } from '../../ui/commandIds';
import { loadFullSidebar } from '../../testing/sidebarFixtures';
import {
  ShutdownKernelRequest,
  shutdownKernelText
} from './ShutdownKernelDialog';
import {
  FakeKernel,
  liveMonitorOnFakeKernel,
  registerTestCommands,
  settle
} from '../../testing/fakeKernel';

describe('shutdown-kernel command', () => {
  /**
   * Sets up a live notebook whose dialog answers `answer`; `whileAsked` runs
   * while the dialog is open, to change things under the question.
   */
  async function setup(
    answer: boolean,
    whileAsked: (live: { sessionContext: any }) => void = () => undefined
  ) {
    const live = await liveMonitorOnFakeKernel({});
    const { kernel, sessionContext, monitor } = live;
    (kernel as any).id = 'kernel-a';
    (kernel as any).name = 'python3';
    const context = sessionContext as any;
    context.path = 'a.ipynb';
    context.kernelDisplayName = 'Python 3 (ipykernel)';
    context.shutdown = jest.fn(async () => context.changeKernel(null));
    const commands = new CommandRegistry();
    const sidebar = await loadFullSidebar({ monitor, kernelSessions: monitor });
    const asked: ShutdownKernelRequest[] = [];
    const { app, notes } = registerTestCommands(commands, {
      monitor,
      sidebar,
      confirmShutdown: async r => {
        asked.push(r);
        whileAsked(live);
        return answer;
      }
    });
    return { ...live, app, commands, context, asked, notes, sidebar };
  }

  it('asks, and shuts down through the session context when accepted', async () => {
    const t = await setup(true);
    const result = await t.commands.execute(CommandIDs.shutdownKernel, {
      kernelId: 'kernel-a'
    });
    expect(t.asked).toEqual([
      {
        kernelId: 'kernel-a',
        kernelName: 'Python 3 (ipykernel)',
        paths: ['a.ipynb']
      }
    ]);
    expect(t.context.shutdown).toHaveBeenCalledTimes(1);
    expect(result).toBe(true);
    await settle();
    // The notebook has no kernel any more, which the monitor calls
    // disconnected.
    expect(t.monitor.current?.state).toBe('disconnected');
    t.sidebar.dispose();
    t.monitor.dispose();
  });

  it("opens on the Kernels tab when asked (the out-of-memory assistant's other processes)", async () => {
    const t = await setup(true);
    expect(t.sidebar.tab).toBe('memory');
    await t.commands.execute(CommandIDs.openSidebar, { tab: 'kernels' });
    expect(t.sidebar.tab).toBe('kernels');
    await t.commands.execute(CommandIDs.openSidebar, { tab: 'no-such-tab' });
    // An unknown tab changes nothing.
    expect(t.sidebar.tab).toBe('kernels');
    await t.commands.execute(CommandIDs.openSidebar);
    expect(t.sidebar.tab).toBe('kernels');
    t.sidebar.dispose();
    t.monitor.dispose();
  });

  it('does nothing when cancelled', async () => {
    const t = await setup(false);
    const result = await t.commands.execute(CommandIDs.shutdownKernel, {
      kernelId: 'kernel-a'
    });
    expect(t.asked).toHaveLength(1);
    expect(t.context.shutdown).not.toHaveBeenCalled();
    expect(result).toBe(false);
    t.sidebar.dispose();
    t.monitor.dispose();
  });

  it('does not ask about a kernel that is not open', async () => {
    const t = await setup(true);
    const result = await t.commands.execute(CommandIDs.shutdownKernel, {
      kernelId: 'kernel-gone'
    });
    expect(t.asked).toHaveLength(0);
    expect(t.context.shutdown).not.toHaveBeenCalled();
    expect(result).toBe(false);
    expect(t.notes).toHaveLength(1);
    t.sidebar.dispose();
    t.monitor.dispose();
  });

  it('says so, and shuts nothing down, when the notebook left that kernel while it asked', async () => {
    // The user picks another kernel while the question is open, so the kernel
    // asked about is no longer the notebook's.
    const t = await setup(true, ({ sessionContext }) =>
      sessionContext.changeKernel(new FakeKernel())
    );
    const result = await t.commands.execute(CommandIDs.shutdownKernel, {
      kernelId: 'kernel-a'
    });
    expect(result).toBe(false);
    expect(t.context.shutdown).not.toHaveBeenCalled();
    expect(t.notes.pop()).toEqual([
      'info',
      'That kernel is not running in an open notebook any more: nothing was shut down.'
    ]);
    t.sidebar.dispose();
    t.monitor.dispose();
  });

  it("names the server's other sessions on that kernel, a console for the notebook among them", async () => {
    const t = await setup(false);
    const session = (path: string, type: string, name: string, id: string) => ({
      path,
      type,
      name,
      kernel: { id }
    });
    t.app.serviceManager = {
      sessions: {
        running: () =>
          [
            // This is the notebook that the question is about.
            session('a.ipynb', 'notebook', 'a.ipynb', 'kernel-a'),
            session('console-1-5f2e', 'console', 'Console 1', 'kernel-a'),
            session(
              'elsewhere.ipynb',
              'notebook',
              'elsewhere.ipynb',
              'kernel-a'
            ),
            session('other.ipynb', 'notebook', 'other.ipynb', 'kernel-b')
          ][Symbol.iterator]()
      }
    };
    await t.commands.execute(CommandIDs.shutdownKernel, {
      kernelId: 'kernel-a'
    });
    expect(t.asked[0].paths).toEqual(['a.ipynb']);
    expect(t.asked[0].others).toEqual([
      'the console \u201cConsole 1\u201d',
      '\u201celsewhere.ipynb\u201d'
    ]);
    expect(shutdownKernelText(t.asked[0])[1]).toBe(
      'It is also the kernel of the console \u201cConsole 1\u201d, \u201celsewhere.ipynb\u201d, which lose it too.'
    );
    t.sidebar.dispose();
    t.monitor.dispose();
  });

  it('reports a failed shutdown', async () => {
    const t = await setup(true);
    t.context.shutdown.mockImplementation(async () => {
      throw new Error('server said no');
    });
    const result = await t.commands.execute(CommandIDs.shutdownKernel, {
      kernelId: 'kernel-a'
    });
    expect(result).toBe(false);
    expect(t.notes).toEqual([
      ['error', 'Could not shut down the kernel: server said no']
    ]);
    t.sidebar.dispose();
    t.monitor.dispose();
  });
});
