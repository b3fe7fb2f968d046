import { ActionCancelledError, ActionQueue } from './ActionQueue';
import { settle } from '../../testing/fakeKernel';

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('ActionQueue', () => {
  it('sends at once when the kernel is idle', async () => {
    const queue = new ActionQueue();
    const send = jest.fn(async () => 42);
    const { result } = queue.enqueue('gc', send);
    expect(send).toHaveBeenCalledTimes(1);
    await expect(result).resolves.toBe(42);
    expect(queue.pending).toEqual([]);
  });

  it('holds requests while busy and sends them in order when idle', async () => {
    const queue = new ActionQueue({ busy: true });
    const order: string[] = [];
    let changes = 0;
    queue.changed.connect(() => changes++);
    const a = queue.enqueue('first', async () => {
      order.push('first');
      return 1;
    });
    const b = queue.enqueue('second', async () => {
      order.push('second');
      return 2;
    });
    expect(order).toEqual([]);
    expect(queue.pending.map(p => [p.label, p.state])).toEqual([
      ['first', 'queued'],
      ['second', 'queued']
    ]);
    expect(queue.queuedCount).toBe(2);
    expect(changes).toBe(2);

    queue.setBusy(false);
    expect(order).toEqual(['first', 'second']);
    expect(queue.pending.map(p => p.state)).toEqual(['sent', 'sent']);
    await expect(a.result).resolves.toBe(1);
    await expect(b.result).resolves.toBe(2);
    expect(queue.pending).toEqual([]);
  });

  it('cancels a queued request, not a sent one', async () => {
    const queue = new ActionQueue({ busy: true });
    const send = jest.fn(async () => 1);
    const { id, result } = queue.enqueue('gc', send);
    expect(queue.cancel(id)).toBe(true);
    await expect(result).rejects.toBeInstanceOf(ActionCancelledError);
    queue.setBusy(false);
    expect(send).not.toHaveBeenCalled();

    const running = deferred<number>();
    const sent = queue.enqueue('gc', () => running.promise);
    expect(queue.cancel(sent.id)).toBe(false);
    expect(queue.cancel(999)).toBe(false);
    running.resolve(3);
    await expect(sent.result).resolves.toBe(3);
  });

  it('passes a sent request failure through (e.g. the kernel died)', async () => {
    const queue = new ActionQueue();
    const running = deferred<number>();
    const { result } = queue.enqueue('gc', () => running.promise);
    running.reject(new Error('The kernel died.'));
    await expect(result).rejects.toThrow('The kernel died.');
    expect(queue.pending).toEqual([]);
  });

  it('turns a synchronous throw of send into a rejection', async () => {
    const queue = new ActionQueue();
    const { result } = queue.enqueue('gc', () => {
      throw new Error('not connected');
    });
    await expect(result).rejects.toThrow('not connected');
  });

  it('fails queued requests, leaving sent ones alone', async () => {
    const queue = new ActionQueue();
    const running = deferred<number>();
    const sent = queue.enqueue('a', () => running.promise);
    queue.setBusy(true);
    const queued = queue.enqueue('b', async () => 2);
    queue.failQueued('The kernel restarted.');
    await expect(queued.result).rejects.toThrow('The kernel restarted.');
    expect(queue.pending.map(p => p.label)).toEqual(['a']);
    running.resolve(1);
    await expect(sent.result).resolves.toBe(1);
  });

  it('rejects everything queued on dispose, and new requests after', async () => {
    const queue = new ActionQueue({ busy: true });
    const queued = queue.enqueue('a', async () => 1);
    queue.dispose();
    await expect(queued.result).rejects.toBeInstanceOf(ActionCancelledError);
    await expect(
      queue.enqueue('b', async () => 2).result
    ).rejects.toBeInstanceOf(ActionCancelledError);
    await settle();
  });
});
