/**
 * Every command of jupyterlab-vram: ids in one place, and their registration.
 * Features add their ids to `CommandIDs` and their handlers below.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';

import { MemoryMonitor } from './model/MemoryMonitor';
import { MemorySidebar } from './views/MemorySidebar';
import { vramIcon } from './views/icons';

export namespace CommandIDs {
  /** Show and activate the GPU memory sidebar. */
  export const openSidebar = 'jupyterlab-vram:open-sidebar';
  /** Ask the active kernel's helper for a fresh sample (reconnects if it is not live). */
  export const refresh = 'jupyterlab-vram:refresh';
}

/** Palette category of our commands. */
export const PALETTE_CATEGORY = 'GPU memory';

export function registerCommands(options: {
  app: JupyterFrontEnd;
  monitor: MemoryMonitor;
  trans: TranslationBundle;
  palette: ICommandPalette | null;
}): void {
  const { app, monitor, trans, palette } = options;

  app.commands.addCommand(CommandIDs.openSidebar, {
    label: trans.__('Show GPU Memory'),
    caption: trans.__('Show the GPU and host memory of the active kernel'),
    icon: vramIcon,
    execute: () => {
      app.shell.activateById(MemorySidebar.ID);
    }
  });

  app.commands.addCommand(CommandIDs.refresh, {
    label: trans.__('Refresh GPU Memory'),
    caption: trans.__(
      'Ask the active kernel for fresh memory figures (restarts the helper if it stopped)'
    ),
    isEnabled: () => monitor.current !== null,
    execute: async () => {
      const model = monitor.current;
      if (!model) {
        return null;
      }
      if (model.state !== 'live') {
        monitor.reconnect();
        return null;
      }
      try {
        return await monitor.refresh();
      } catch (reason) {
        // Shown in the panel when it matters (timeouts while a cell runs are normal).
        console.warn('jupyterlab-vram: refresh failed', reason);
        return null;
      }
    }
  });

  monitor.currentChanged.connect(() => {
    app.commands.notifyCommandChanged(CommandIDs.refresh);
  });

  if (palette) {
    const category = trans.__(PALETTE_CATEGORY);
    palette.addItem({ command: CommandIDs.openSidebar, category });
    palette.addItem({ command: CommandIDs.refresh, category });
  }
}
