/** Tests that RunningCellTracker works out which cell the kernel runs from the messages the page sees. */
import { RunningCellTracker } from './RunningCellTracker';
import { FakeKernel } from '../testing/fakeKernel';
import { msg, run } from '../testing/kernelDeathWatchFixtures';

function finish(kernel: FakeKernel, id: string) {
  kernel.anyMessage.emit({
    msg: msg('status', { parent: id, content: { execution_state: 'idle' } }),
    direction: 'recv'
  });
}

describe('RunningCellTracker', () => {
  it('knows the running cell from execute_input, not the queued ones', () => {
    const kernel = new FakeKernel();
    let now = 100;
    const tracker = new RunningCellTracker(() => now);
    tracker.attach(kernel as any);
    const queued = msg('execute_request', { metadata: { cellId: 'later' } });
    const first = run(kernel, 'cell-a', 4);
    kernel.anyMessage.emit({ msg: queued, direction: 'send' });
    expect(tracker.running).toEqual({
      cellId: 'cell-a',
      executionCount: 4,
      confirmed: true,
      startedAt: 100
    });
    now = 105;
    finish(kernel, first);
    // The queued request is next. It is not confirmed until its
    // execute_input comes, and until then its start is the time it was sent.
    expect(tracker.running).toEqual({
      cellId: 'later',
      executionCount: null,
      confirmed: false,
      startedAt: 100
    });
    now = 107;
    kernel.anyMessage.emit({
      msg: msg('execute_input', {
        parent: queued.header.msg_id,
        content: { execution_count: 5 }
      }),
      direction: 'recv'
    });
    expect(tracker.running).toEqual({
      cellId: 'later',
      executionCount: 5,
      confirmed: true,
      startedAt: 107
    });
    tracker.attach(null);
    expect(tracker.running).toBeNull();
    run(kernel, 'x', 6); // The tracker is detached, so this is not heard.
    expect(tracker.running).toBeNull();
  });

  it('names the oldest unanswered request, unconfirmed, when no execute_input came (a kernel that dies at once)', () => {
    const kernel = new FakeKernel();
    const tracker = new RunningCellTracker(() => 100);
    tracker.attach(kernel as any);
    expect(tracker.running).toBeNull();
    const exits = msg('execute_request', { metadata: { cellId: 'os-exit' } });
    const after = msg('execute_request', { metadata: { cellId: 'after' } });
    kernel.anyMessage.emit({ msg: exits, direction: 'send' });
    kernel.anyMessage.emit({ msg: after, direction: 'send' });
    expect(tracker.running).toEqual({
      cellId: 'os-exit',
      executionCount: null,
      confirmed: false,
      startedAt: 100
    });
    // A silent request without a cell (the helper's bootstrap) names nothing.
    tracker.reset();
    kernel.anyMessage.emit({
      msg: msg('execute_request', { metadata: {} }),
      direction: 'send'
    });
    kernel.anyMessage.emit({ msg: after, direction: 'send' });
    expect(tracker.running).toBeNull();
  });

  it('survives odd messages (no metadata, a bad count)', () => {
    const tracker = new RunningCellTracker(() => 100);
    const request = msg('execute_request', { metadata: { cellId: 42 } });
    tracker.handle(request, 'send');
    tracker.handle(
      msg('execute_input', {
        parent: request.header.msg_id,
        content: { execution_count: 'x' }
      }),
      'recv'
    );
    expect(tracker.running).toEqual({
      cellId: null,
      executionCount: null,
      confirmed: true,
      startedAt: 100
    });
    tracker.handle(
      { header: { msg_type: 'status' }, content: {} } as any,
      'recv'
    );
    expect(tracker.running).not.toBeNull();
  });
});

describe('RunningCellTracker and a kernel process it did not see start', () => {
  it('forgets the cell the old process ran once a message comes from another process (a restart made in another tab)', () => {
    const tracker = new RunningCellTracker(() => 100);
    const request = msg('execute_request', {
      metadata: { cellId: 'interrupted' }
    });
    tracker.handle(request, 'send');
    const input = msg('execute_input', {
      parent: request.header.msg_id,
      content: { execution_count: 3 }
    });
    input.header.session = 'process-1';
    tracker.handle(input, 'recv');
    expect(tracker.running?.cellId).toBe('interrupted');
    // The same process goes on, so nothing is forgotten.
    const output = msg('stream', { parent: request.header.msg_id });
    output.header.session = 'process-1';
    tracker.handle(output, 'recv');
    expect(tracker.running?.cellId).toBe('interrupted');
    // The server announces an automatic restart under its own session. The
    // dead process's cell must still be named, because status messages do
    // not count as a new process.
    const restarting = msg('status', {
      content: { execution_state: 'restarting' }
    });
    restarting.header.session = 'server';
    tracker.handle(restarting, 'recv');
    expect(tracker.running?.cellId).toBe('interrupted');
    // The new process speaks (a comm message to another tab's helper), so
    // the old process's cell will never end and is forgotten.
    const hello = msg('comm_msg', {
      content: { comm_id: 'other-tab', data: { type: 'hello' } }
    });
    hello.header.session = 'process-2';
    tracker.handle(hello, 'recv');
    expect(tracker.running).toBeNull();
  });
});
