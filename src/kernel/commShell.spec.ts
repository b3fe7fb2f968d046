/**
 * The helper's comm stays on the kernel's main shell. JupyterLab 4.4 and
 * later give every comm a subshell per comm target by default where the
 * kernel supports subshells (ipykernel 7): the helper's requests would then
 * run on another thread beside a running cell. These use the real
 * CommHandler of @jupyterlab/services over a stand-in kernel connection.
 */
import { Signal } from '@lumino/signaling';
import { CommHandler } from '@jupyterlab/services/lib/kernel/comm';
import { KernelConnection } from '@jupyterlab/services/lib/kernel/default';

import { keepOnMainShell } from './helperBootstrapLazy';

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
    const comm = new CommHandler(
      'a-target',
      'comm-1',
      kernel as any,
      () => undefined
    );
    await settle();
    expect(kernel.requestCreateSubshell).toHaveBeenCalledTimes(1);
    expect(comm.subshellId).toBe('subshell-1');
    comm.dispose();
  });

  it('keeps a comm set in the tick it was made on the main shell', async () => {
    const kernel = subshellKernel();
    const comm = new CommHandler(
      'jupyterlab-vram',
      'comm-2',
      kernel as any,
      () => undefined
    );
    keepOnMainShell(comm);
    await settle();
    expect(kernel.requestCreateSubshell).not.toHaveBeenCalled();
    expect(kernel.requestDeleteSubshell).not.toHaveBeenCalled();
    expect(comm.commsOverSubshells).toBe('disabled');
    expect(comm.subshellId).toBeNull();
    comm.dispose();
  });

  it('keeps it there when the setting changes at run time (the kernel connection sets every open comm)', async () => {
    const kernel = subshellKernel();
    const ours = new CommHandler(
      'jupyterlab-vram',
      'comm-4',
      kernel as any,
      () => undefined
    );
    keepOnMainShell(ours);
    const widgets = new CommHandler(
      'jupyter.widget',
      'comm-5',
      kernel as any,
      () => undefined,
      'disabled' as any
    );
    await settle();
    // KernelConnection's own setter, over the comms it keeps.
    const setter = Object.getOwnPropertyDescriptor(
      KernelConnection.prototype,
      'commsOverSubshells'
    )!.set!;
    setter.call(
      {
        _comms: new Map([
          [ours.commId, ours],
          [widgets.commId, widgets]
        ])
      },
      'perComm'
    );
    await settle();
    expect(widgets.commsOverSubshells).toBe('perComm');
    expect(kernel.requestCreateSubshell).toHaveBeenCalledTimes(1); // the other comm's, not ours
    expect(widgets.subshellId).toBe('subshell-1');
    expect(ours.commsOverSubshells).toBe('disabled');
    expect(ours.subshellId).toBeNull();
    ours.dispose();
    widgets.dispose();
  });

  it('leaves a comm of a JupyterLab without subshells as it is', () => {
    const comm = { commId: 'comm-3', targetName: 'jupyterlab-vram' };
    keepOnMainShell(comm as any);
    expect(comm).toEqual({ commId: 'comm-3', targetName: 'jupyterlab-vram' });
  });
});
