/**
 * The Kernels tab's view, loaded the first time the tab is shown.
 */
import { followMonitor } from '../../ui/followMonitor';
import { KernelsView } from './KernelsView';
import type { IVramMonitor } from '../../monitor/IVramMonitor';
import type { ExecuteCommand } from '../../ui/commandIds';
import type { IKernelSessionSource } from './KernelsOverview';

/** What the Kernels view needs. */
export interface IKernelsSidebarOptions {
  /** The monitor, whose settings, such as the units, the list follows. */
  monitor: IVramMonitor;
  /** The sessions listed, which are all of them, not just the current one. */
  sessions: IKernelSessionSource | null;
  /** Runs a command, such as shutting down a kernel. */
  execute: ExecuteCommand;
}

/**
 * The list of every monitored kernel, which follows the settings, such as the
 * units.
 */
export function createKernelsView({
  monitor,
  sessions,
  execute
}: IKernelsSidebarOptions): KernelsView {
  const view = new KernelsView({
    source: sessions,
    settings: monitor.settings,
    execute
  });
  // It lists every session, whichever is current.
  return followMonitor(monitor, view, () => undefined);
}
