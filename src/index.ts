/**
 * jupyterlab-vram: live GPU memory (PyTorch, NVML, TensorFlow) and host RAM
 * of the notebooks' kernels, in a right-sidebar panel, on the cells and in
 * the status bar.
 *
 * One plugin per feature, each in its folder under features/, beside two
 * core plugins: the monitor (monitor/monitorPlugin.ts: which kernels are
 * followed, and the settings) and the sidebar (sidebar/sidebarPlugin.ts:
 * the panel whose tabs the features add). Any feature can be switched off
 * in JupyterLab's plugin manager; the rest keeps working. CONTRIBUTING.md
 * draws the layers and the path of a sample from the kernel to the screen.
 */
import type { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { allocationsPlugin } from './features/allocations/plugin';
import { cellsPlugin } from './features/cells/plugin';
import { cleanupPlugin } from './features/cleanup/plugin';
import { clusterPlugin } from './features/cluster/plugin';
import { estimatePlugin } from './features/estimate/plugin';
import { kernelDeathPlugin } from './features/kernelDeath/plugin';
import { kernelsPlugin } from './features/kernels/plugin';
import { oomPlugin } from './features/oom/plugin';
import { overviewPlugin } from './features/overview/plugin';
import { processesPlugin } from './features/processes/plugin';
import { snippetsPlugin } from './features/snippets/plugin';
import { corePlugin, monitorPlugin } from './monitor/monitorPlugin';
import { sidebarPlugin } from './sidebar/sidebarPlugin';

export { IVramMonitor, IVramSidebar } from './tokens';
export type { IKernelMemoryModel, ModelChange } from './tokens';
export { CommandIDs } from './ui/commandIds';

/** Every plugin of jupyterlab-vram: the core two, the sidebar, then the features. */
const plugins: JupyterFrontEndPlugin<any>[] = [
  corePlugin,
  monitorPlugin,
  sidebarPlugin,
  overviewPlugin,
  cellsPlugin,
  cleanupPlugin,
  allocationsPlugin,
  oomPlugin,
  kernelDeathPlugin,
  processesPlugin,
  kernelsPlugin,
  snippetsPlugin,
  estimatePlugin,
  clusterPlugin
];

/** The plugins JupyterLab loads from this extension. */
export default plugins;
