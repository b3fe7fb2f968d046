/**
 * The helper's comm stays on the kernel's main shell. JupyterLab 4.4 and
 * later give every comm a subshell per comm target by default where the
 * kernel supports subshells (ipykernel 7): the helper's requests would then
 * run on another thread beside a running cell. These use the real
 * CommHandler of @jupyterlab/services over a stand-in kernel connection.
 */
import { Signal } from '@lumino/signaling';
import { CommHandler } from '@jupyterlab/services/lib/kernel/comm';

import { keepOnMainShell } from '../kernel/helperBootstrap';

function subshellKernel() {
  const kernel = {
    id: 'kernel-1',
    status: 'idle',
    statusChanged: new Signal<unknown, string>({}),
    info: Promise.resolve({}),
    supportsSubshells: true,
    subshellId: null,
    requestCreateSubshell: jest.fn(() => ({
      done: Promise.resolve({ content: { subshell_id: 'subshell-1' } })
    })),
    requestDeleteSubshell: jest.fn()
  };
  return kernel;
}

const settle = async () => {
  for (let i = 0; i < 10; i++) {
    await Promise.resolve();
  }
};

describe('keepOnMainShell', () => {
  it('a comm left as made asks the kernel for a subshell', async () => {
    const kernel = subshellKernel();
    const comm = new CommHandler('a-target', 'comm-1', kernel as any, () => undefined);
    await settle();
    expect(kernel.requestCreateSubshell).toHaveBeenCalledTimes(1);
    expect(comm.subshellId).toBe('subshell-1');
    comm.dispose();
  });

  it('keeps a comm set in the tick it was made on the main shell', async () => {
    const kernel = subshellKernel();
    const comm = new CommHandler('jupyterlab-vram', 'comm-2', kernel as any, () => undefined);
    keepOnMainShell(comm);
    await settle();
    expect(kernel.requestCreateSubshell).not.toHaveBeenCalled();
    expect(kernel.requestDeleteSubshell).not.toHaveBeenCalled();
    expect(comm.commsOverSubshells).toBe('disabled');
    expect(comm.subshellId).toBeNull();
    comm.dispose();
  });

  it('leaves a comm of a JupyterLab without subshells as it is', () => {
    const comm = { commId: 'comm-3', targetName: 'jupyterlab-vram' };
    keepOnMainShell(comm as any);
    expect(comm).toEqual({ commId: 'comm-3', targetName: 'jupyterlab-vram' });
  });
});
