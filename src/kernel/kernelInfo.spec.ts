/**
 * The kernel info, asked again when the first request is lost (behind a
 * kernel gateway, a kernel_info_request can vanish while the websocket to
 * the kernel reconnects, and `kernel.info` never settles), but not while the
 * kernel is busy with a cell (the request is queued behind it), and never
 * given up while its run is current: a page opened during a long cell gets
 * its answer when the cell ends.
 */
import { kernelInfo } from './helperBootstrapLazy';

const REPLY = { status: 'ok', language_info: { name: 'python' } } as any;
const never = () => new Promise<never>(() => undefined);

describe('kernelInfo', () => {
  it('takes the first reply when it comes', async () => {
    const kernel = {
      info: Promise.resolve(REPLY),
      requestKernelInfo: jest.fn()
    };
    await expect(
      kernelInfo(kernel as any, { stale: () => false, retryMs: 5 })
    ).resolves.toBe(REPLY);
    expect(kernel.requestKernelInfo).not.toHaveBeenCalled();
  });

  it('asks again when the first request never settles', async () => {
    const kernel = {
      info: never(),
      requestKernelInfo: jest.fn(() => Promise.resolve({ content: REPLY }))
    };
    await expect(
      kernelInfo(kernel as any, { stale: () => false, retryMs: 5 })
    ).resolves.toBe(REPLY);
    expect(kernel.requestKernelInfo).toHaveBeenCalledTimes(1);
  });

  it('waits longer before each new request, up to the longest wait', async () => {
    const asked: number[] = [];
    const start = Date.now();
    let stale = false;
    const kernel = {
      info: never(),
      requestKernelInfo: jest.fn(() => {
        asked.push(Date.now() - start);
        return never();
      })
    };
    const reply = kernelInfo(kernel as any, {
      stale: () => stale,
      retryMs: 10,
      maxRetryMs: 40
    });
    await new Promise(resolve => setTimeout(resolve, 200));
    stale = true;
    await expect(reply).rejects.toThrow(/kernel changed/);
    // Asked at about 10, 30, 70, 110, 150, 190 ms: the gaps grow to 40 ms
    // and stay there (every 10 ms would have asked about 20 times; a slow
    // machine only asks less).
    expect(asked.length).toBeGreaterThanOrEqual(3);
    expect(asked.length).toBeLessThanOrEqual(7);
    const gaps = asked.slice(1).map((t, i) => t - asked[i]);
    expect(gaps[gaps.length - 1]).toBeGreaterThanOrEqual(35);
  });

  it('a slow first answer wins over the later requests', async () => {
    let answer: (reply: any) => void = () => undefined;
    const kernel = {
      info: new Promise(resolve => (answer = resolve)),
      requestKernelInfo: jest.fn(never)
    };
    const reply = kernelInfo(kernel as any, { stale: () => false, retryMs: 5 });
    await new Promise(resolve => setTimeout(resolve, 30));
    expect(kernel.requestKernelInfo).toHaveBeenCalled();
    answer(REPLY);
    await expect(reply).resolves.toBe(REPLY);
  });

  it('asks nothing more while the kernel is busy, and says once that it is late', async () => {
    let answer: (reply: any) => void = () => undefined;
    const late = jest.fn();
    const kernel = {
      info: new Promise(resolve => (answer = resolve)),
      requestKernelInfo: jest.fn(never)
    };
    const reply = kernelInfo(kernel as any, {
      stale: () => false,
      busy: () => true,
      late,
      retryMs: 5,
      lateMs: 20
    });
    await new Promise(resolve => setTimeout(resolve, 80));
    expect(kernel.requestKernelInfo).not.toHaveBeenCalled();
    expect(late).toHaveBeenCalledTimes(1);
    answer(REPLY); // the cell ended
    await expect(reply).resolves.toBe(REPLY);
  });

  it('a failing request is left to the next round; it stops only when the kernel changed', async () => {
    const kernel = {
      info: never(),
      requestKernelInfo: jest.fn(() =>
        Promise.reject(new Error('Kernel is dead'))
      )
    };
    let stale = false;
    const reply = kernelInfo(kernel as any, {
      stale: () => stale,
      retryMs: 5,
      maxRetryMs: 5
    });
    await new Promise(resolve => setTimeout(resolve, 40));
    expect(kernel.requestKernelInfo.mock.calls.length).toBeGreaterThan(1);
    stale = true;
    await expect(reply).rejects.toThrow(/kernel changed/);
  });
});
