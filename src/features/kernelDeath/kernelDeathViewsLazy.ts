/**
 * The kernel death notice, which is loaded with the Memory tab and follows
 * the active notebook's kernel.
 */
import type { IVramMonitor } from '../../monitor/IVramMonitor';
import { showCurrentModel } from '../../ui/followMonitor';
import { KernelDeathView } from './KernelDeathView';

/** The notice of the active kernel's death. */
export function createKernelDeathView(monitor: IVramMonitor): KernelDeathView {
  return showCurrentModel(monitor, new KernelDeathView(monitor.settings));
}
