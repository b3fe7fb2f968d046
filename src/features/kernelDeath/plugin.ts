/**
 * The kernel death feature's plugin. It shows a notification when a kernel
 * dies without the user asking for it, with the likely cause (the
 * out-of-memory killer, a container's limit, a crash), and the same
 * explanation on the Memory tab.
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
 * first monitored notebook, because a page without a kernel has nothing
 * that can die; a death that is already known by then is reported once the
 * code has loaded.
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
          // The messages are plain text, so figures from the kernel are
          // never interpreted as markup.
          notifications: {
            emit: (message, type, options) =>
              Notification.emit(message, type, options),
            update: args => Notification.update(args),
            dismiss: id => Notification.dismiss(id)
          }
        });
      },
      reason => {
        // The fetch failed, for example because the server is restarting,
        // so the next change of sessions tries again.
        loading = false;
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
