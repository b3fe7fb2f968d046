/**
 * The kernels feature's plugin. It adds the Kernels tab, which shows every
 * monitored kernel's memory and the other processes on the GPUs, and the
 * command that shuts a kernel down.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';

import { IVramCore } from '../../monitor/IVramCore';
import { trans } from '../../text/translation';
import { IVramSidebar } from '../../sidebar/IVramSidebar';
import { notifyInJupyterLab } from '../../ui/notify';
import { registerKernelCommands } from './kernelCommands';
import { addKernelsToSidebar } from './kernelsSidebar';

/** The kernels plugin. */
export const kernelsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-vram:kernels',
  description:
    "Every notebook kernel's memory in one list, to shut down the ones not needed.",
  autoStart: true,
  requires: [IVramCore],
  optional: [IVramSidebar],
  activate: (
    app: JupyterFrontEnd,
    core: IVramCore,
    sidebar: IVramSidebar | null
  ): void => {
    const { monitor } = core;
    if (sidebar) {
      addKernelsToSidebar(sidebar, {
        monitor,
        sessions: monitor,
        execute: core.execute
      });
    }
    registerKernelCommands({ app, monitor, trans, notify: notifyInJupyterLab });
  }
};
