/**
 * The out-of-memory feature's plugin: after a cell dies of running out of
 * GPU memory, the diagnosis on the Memory tab says why and offers the
 * remedies (the cell's and the kernel's figures, what holds memory, code
 * to insert).
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';

import { IVramCore } from '../../monitor/IVramCore';
import { IVramSidebar } from '../../sidebar/IVramSidebar';
import { allocationsFor } from '../allocations/allocationRecordingPart';
import { actionsFor } from '../cleanup/cleanupActionsPart';
import { addOomToSidebar } from './oomSidebar';

/** The out-of-memory plugin. */
export const oomPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-vram:oom',
  description:
    'Explains a CUDA out-of-memory error in the sidebar and offers the remedies.',
  autoStart: true,
  requires: [IVramCore, IVramSidebar],
  activate: (
    _: JupyterFrontEnd,
    core: IVramCore,
    sidebar: IVramSidebar
  ): void => {
    const { monitor } = core;
    addOomToSidebar(sidebar, {
      monitor,
      execute: core.execute,
      // These return null where the cleanup or allocations plugin is
      // switched off.
      actionsFor: model => actionsFor(monitor, model),
      recorderFor: model => allocationsFor(monitor, model),
      partsChanged: monitor.partsChanged
    });
  }
};
