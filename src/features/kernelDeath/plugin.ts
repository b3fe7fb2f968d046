/**
 * The kernel death feature's plugin: a notification when a kernel dies
 * without the user asking, with the likely cause (the out-of-memory killer,
 * a container's limit, a crash), and the same explanation on the Memory tab.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';

import { IVramCore } from '../../monitor/IVramCore';
import type { MemoryMonitor } from '../../monitor/MemoryMonitor';
import { IVramSidebar } from '../../sidebar/IVramSidebar';
import { CommandIDs } from '../../ui/commandIds';
import { addKernelDeathToSidebar } from './kernelDeathSidebar';

/** The kernel death plugin. */
export const kernelDeathPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab-vram:kernel-death',
  description:
    'Says why a kernel died: the OOM killer, a memory limit, a crash.',
  autoStart: true,
  requires: [IVramCore],
  optional: [IVramSidebar],
  activate: (
    app: JupyterFrontEnd,
    core: IVramCore,
    sidebar: IVramSidebar | null
  ): void => {
    if (sidebar) {
      addKernelDeathToSidebar(sidebar, core.monitor);
    }
    notifyDeaths(app, core.monitor);
  }
};

/**
 * Notifies the user when a kernel dies. The notifier's code loads with the
 * first monitored notebook (a page without a kernel has nothing to die); a
 * death known by then is told when it has loaded.
 */
function notifyDeaths(app: JupyterFrontEnd, monitor: MemoryMonitor): void {
  let loading = false;
  const watch = () => {
    if (loading || monitor.sessions().length === 0) {
      return;
    }
    loading = true;
    import('./deathNotifier').then(
      ({ DeathNotifier }) => {
        monitor.sessionsChanged.disconnect(watch);
        new DeathNotifier({
          monitor,
          showDetails: () => void app.commands.execute(CommandIDs.openSidebar),
          // Plain text messages: kernel figures stay text.
          notifications: {
            emit: (message, type, options) =>
              Notification.emit(message, type, options),
            update: args => Notification.update(args),
            dismiss: id => Notification.dismiss(id)
          }
        });
      },
      reason => {
        loading = false; // a failed fetch (the server restarting): the next change tries again
        console.warn(
          'jupyterlab-vram: could not load the kernel death notification',
          reason
        );
      }
    );
  };
  monitor.sessionsChanged.connect(watch);
  watch();
}
