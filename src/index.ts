/**
 * jupyterlab-vram: live GPU memory (PyTorch, NVML, TensorFlow) and host RAM
 * of the active notebook's kernel, in a right-sidebar panel and the status bar.
 *
 * Wiring only; see model/MemoryMonitor.ts (which kernel is watched),
 * kernel/KernelHelperConnection.ts (how the helper gets into the kernel) and
 * model/KernelMemoryModel.ts (where samples come in).
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';

import { CommandIDs, registerCommands } from './commands';
import { MemoryMonitor } from './model/MemoryMonitor';
import { DEFAULT_SETTINGS, readSettings } from './settings';
import { IVramMonitor } from './tokens';
import { MemorySidebar } from './views/MemorySidebar';
import { VramStatusItem } from './views/VramStatusItem';

export { IVramMonitor } from './tokens';
export type { IKernelMemoryModel, ModelChange } from './tokens';
export { CommandIDs } from './commands';

const PLUGIN_ID = 'jupyterlab-vram:plugin';

/** Rank in the right sidebar (after the property inspector and debugger). */
const SIDEBAR_RANK = 900;

const plugin: JupyterFrontEndPlugin<IVramMonitor> = {
  id: PLUGIN_ID,
  description:
    'Shows the GPU memory and host RAM held by the active notebook kernel.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [
    ISettingRegistry,
    ILayoutRestorer,
    IStatusBar,
    ICommandPalette,
    ITranslator
  ],
  provides: IVramMonitor,
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null,
    translator: ITranslator | null
  ): IVramMonitor => {
    const trans = (translator ?? nullTranslator).load('jupyterlab_vram');
    const monitor = new MemoryMonitor({
      notebooks: tracker,
      settings: { ...DEFAULT_SETTINGS }
    });

    if (settingRegistry) {
      settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          const apply = () =>
            monitor.updateSettings(readSettings(settings.composite));
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason => {
          console.warn(
            'jupyterlab-vram: could not load settings, using defaults.',
            reason
          );
        });
    }

    const sidebar = new MemorySidebar({ monitor, trans });
    app.shell.add(sidebar, 'right', { rank: SIDEBAR_RANK });
    if (restorer) {
      restorer.add(sidebar, 'jupyterlab-vram-sidebar');
    }

    registerCommands({ app, monitor, trans, palette });

    if (statusBar) {
      // The status bar re-asks isActive() when this fires.
      const activeStateChanged = new Signal<IVramMonitor, void>(monitor);
      monitor.currentChanged.connect(() => activeStateChanged.emit());
      const item = new VramStatusItem({
        monitor,
        onClick: () => void app.commands.execute(CommandIDs.openSidebar)
      });
      statusBar.registerStatusItem('jupyterlab-vram:status', {
        item,
        align: 'left',
        rank: 100,
        isActive: () => monitor.current !== null,
        activeStateChanged
      });
    }

    return monitor;
  }
};

export default plugin;
