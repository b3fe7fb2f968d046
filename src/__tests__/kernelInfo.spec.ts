/**
 * The kernel info, asked again when the first request is lost (behind a
 * kernel gateway, a kernel_info_request can vanish while the websocket to
 * the kernel reconnects, and `kernel.info` never settles).
 */
import { kernelInfo } from '../kernel/helperBootstrap';

const REPLY = { status: 'ok', language_info: { name: 'python' } } as any;

describe('kernelInfo', () => {
  it('takes the first reply when it comes', async () => {
    const kernel = { info: Promise.resolve(REPLY), requestKernelInfo: jest.fn() };
    await expect(kernelInfo(kernel as any, () => false, 5, 100)).resolves.toBe(REPLY);
    expect(kernel.requestKernelInfo).not.toHaveBeenCalled();
  });

  it('asks again when the first request never settles', async () => {
    const kernel = {
      info: new Promise(() => undefined),
      requestKernelInfo: jest.fn(() => Promise.resolve({ content: REPLY }))
    };
    await expect(kernelInfo(kernel as any, () => false, 5, 1000)).resolves.toBe(REPLY);
    expect(kernel.requestKernelInfo).toHaveBeenCalledTimes(1);
  });

  it('gives up with a reason after the limit, or when the kernel changed', async () => {
    const silent = { info: new Promise(() => undefined), requestKernelInfo: () => new Promise(() => undefined) };
    await expect(kernelInfo(silent as any, () => false, 5, 20)).rejects.toThrow(/no kernel info reply/);
    await expect(kernelInfo(silent as any, () => true, 5, 1000)).rejects.toThrow(/kernel changed/);
  });
});
