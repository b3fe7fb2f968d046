/**
 * Tests that a cell another page sent is named by the code that the kernel
 * echoed.
 */
import { Signal } from '@lumino/signaling';

import { RunningCellTracker } from '../kernel/RunningCellTracker';
import { cellIdOfCode, cellIdOfOtherPagesCode } from './cellOfCode';
import { MemoryMonitor } from './MemoryMonitor';
import { FakeKernel, FakeSessionContext, settle } from '../testing/fakeKernel';
import { msg } from '../testing/kernelDeathWatchFixtures';

describe('a cell another page sent', () => {
  function panelWith(sources: [string, string, string?][]) {
    return {
      sessionContext: null as any,
      disposed: null as any,
      isDisposed: false,
      content: {
        model: {
          cells: sources.map(([id, source, type]) => ({
            id,
            type: type ?? 'code',
            sharedModel: { getSource: () => source }
          }))
        }
      }
    };
  }

  it('is the one code cell with exactly the code the kernel echoed; none when several or none have it', () => {
    const panel = panelWith([
      ['a', 'x = 1'],
      ['b', 'train()'],
      ['c', 'train()\n'],
      ['d', 'train()', 'markdown'],
      ['e', 'y = 2'],
      ['f', 'y = 2']
    ]);
    expect(cellIdOfCode(panel, 'train()')).toBe('b');
    expect(cellIdOfCode(panel, 'y = 2')).toBeNull();
    expect(cellIdOfCode(panel, 'z = 3')).toBeNull();
    expect(
      cellIdOfCode({ ...panel, content: undefined } as any, 'x = 1')
    ).toBeNull();
  });

  it('is none when this page sent the code from a console or another notebook on the kernel', () => {
    const panel = panelWith([['b', 'train()']]);
    const pageClients = new Set(['console-client', 'other-notebook-client']);
    const ofCode = (code: string, client: string | null) =>
      cellIdOfOtherPagesCode(panel, code, client, c => pageClients.has(c));
    const tracker = new RunningCellTracker(() => 100, ofCode);
    const fromConsole = msg('execute_input', {
      content: { execution_count: 6, code: 'train()' }
    });
    fromConsole.parent_header = {
      msg_id: 'console-request',
      session: 'console-client'
    };
    tracker.handle(fromConsole, 'recv');
    expect(tracker.running?.cellId).toBeNull();
    const fromAnotherTab = msg('execute_input', {
      content: { execution_count: 7, code: 'train()' }
    });
    fromAnotherTab.parent_header = {
      msg_id: 'tab-request',
      session: 'another-tab-client'
    };
    tracker.handle(fromAnotherTab, 'recv');
    expect(tracker.running?.cellId).toBe('b');
  });

  it('is named by the tracker from its execute_input, which has no request of this page behind it', () => {
    const tracker = new RunningCellTracker(
      () => 100,
      code => (code === 'train()' ? 'cell-b' : null)
    );
    const elsewhere = msg('execute_request', {
      metadata: { cellId: 'cell-b' }
    }); // sent by another page
    tracker.handle(
      msg('execute_input', {
        parent: elsewhere.header.msg_id,
        content: { execution_count: 6, code: 'train()' }
      }),
      'recv'
    );
    expect(tracker.running).toEqual({
      cellId: 'cell-b',
      executionCount: 6,
      confirmed: true,
      startedAt: 100
    });
    // This page's own request names its cell by id, whatever the code.
    const own = msg('execute_request', { metadata: { cellId: 'mine' } });
    tracker.handle(own, 'send');
    tracker.handle(
      msg('execute_input', {
        parent: own.header.msg_id,
        content: { execution_count: 7, code: 'train()' }
      }),
      'recv'
    );
    expect(tracker.running?.cellId).toBe('mine');
  });

  it("is named by the notebook's other view once the view it was first watched in closed", async () => {
    const kernel = new FakeKernel();
    const sessionContext = new FakeSessionContext(kernel);
    // Two views of one notebook, made with File > New View, share its
    // session context.
    const view = () => {
      const panel = {
        ...panelWith([['b', 'train()']]),
        sessionContext: sessionContext as any
      };
      return Object.assign(panel, { disposed: new Signal<any, void>(panel) });
    };
    const first = view();
    const second = view();
    const tracker = {
      currentWidget: first,
      currentChanged: new Signal<any, any>({})
    };
    const monitor = new MemoryMonitor({ notebooks: tracker });
    tracker.currentWidget = second;
    tracker.currentChanged.emit(second);
    await settle();
    // The first view closes; JupyterLab's Notebook lets go of its model as it goes.
    first.isDisposed = true;
    (first.content as { model: unknown }).model = null;
    first.disposed.emit();
    expect(monitor.sessionCount).toBe(1);
    // Another tab runs the cell, and the kernel dies in it.
    const input = msg('execute_input', {
      content: { execution_count: 6, code: 'train()' }
    });
    input.parent_header = {
      msg_id: 'tab-request',
      session: 'another-tab-client'
    };
    kernel.anyMessage.emit({ msg: input, direction: 'recv' });
    sessionContext.setStatus('dead');
    expect(monitor.current?.death?.runningCell).toMatchObject({
      cellId: 'b',
      executionCount: 6
    });
    monitor.dispose();
  });
});
