/**
 * The two core plugins. `jupyterlab-vram:plugin` makes the memory monitor,
 * which follows every notebook's kernel, and reads the settings; the schema
 * in schema/plugin.json belongs to this plugin, so its id must not change.
 * It provides IVramCore to the feature plugins. `jupyterlab-vram:monitor`
 * gives other extensions the monitor's public face, IVramMonitor.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { IConsoleTracker } from '@jupyterlab/console';
import { INotebookTracker, NotebookActions } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator } from '@jupyterlab/translation';

import { CommsLeftOpen, tabStorage } from '../kernel/CommsLeftOpen';
import { DEFAULT_SETTINGS } from '../settings/settings';
import { SettingsSource } from '../settings/SettingsSource';
import { setTranslator } from '../text/translation';
import {
  lazyIndexedDbStore,
  lazyIndexedDbTimelineStore
} from '../storage/lazyIndexedDbStore';
import { followNotebookFiles } from '../storage/followNotebookFiles';
import { IVramCore } from './IVramCore';
import { IVramMonitor } from './IVramMonitor';
import { MemoryMonitor } from './MemoryMonitor';

/** The id of the core plugin, which owns the settings. */
export const CORE_PLUGIN_ID = 'jupyterlab-vram:plugin';

/** The settings' title in the Settings Editor, from schema/plugin.json. */
const SETTINGS_TITLE = 'GPU Memory';

/** The core plugin: the memory monitor and the settings. */
export const corePlugin: JupyterFrontEndPlugin<IVramCore> = {
  id: CORE_PLUGIN_ID,
  description:
    'Follows the memory of every notebook kernel, and reads the settings.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ISettingRegistry, ITranslator, IConsoleTracker],
  provides: IVramCore,
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker,
    registry: ISettingRegistry | null,
    translator: ITranslator | null,
    consoles: IConsoleTracker | null
  ): IVramCore => {
    // The translator is set before any feature words anything, because
    // every text is translated through it.
    setTranslator(translator);
    const monitor = createMonitor(app, notebooks, consoles, registry !== null);
    watchPage(monitor, notebooks);
    const settings = new SettingsSource({
      registry,
      pluginId: CORE_PLUGIN_ID,
      title: SETTINGS_TITLE,
      current: () => monitor.settings,
      apply: read => monitor.updateSettings(read)
    });
    settings.start();
    return {
      monitor,
      settings,
      execute: (command, args) => app.commands.execute(command, args)
    };
  }
};

/**
 * The public plugin, which offers the monitor to other extensions and the
 * browser tests.
 */
export const monitorPlugin: JupyterFrontEndPlugin<IVramMonitor> = {
  id: 'jupyterlab-vram:monitor',
  description:
    'Shows other extensions the GPU memory and host RAM of the active notebook kernel.',
  autoStart: true,
  requires: [IVramCore],
  provides: IVramMonitor,
  activate: (_: JupyterFrontEnd, core: IVramCore): IVramMonitor => core.monitor
};

/**
 * Makes the monitor, with the browser's stores where the page has IndexedDB.
 */
function createMonitor(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker,
  consoles: IConsoleTracker | null,
  hasSettingRegistry: boolean
): MemoryMonitor {
  const hasIndexedDb = typeof indexedDB !== 'undefined';
  const recordStore = hasIndexedDb ? lazyIndexedDbStore() : null;
  const timelineStore = hasIndexedDb ? lazyIndexedDbTimelineStore() : null;
  if (recordStore && timelineStore) {
    // What is kept by notebook path must follow the files as they are
    // renamed, deleted and made.
    followNotebookFiles(app.serviceManager.contents.fileChanged, [
      recordStore,
      timelineStore
    ]);
  }
  return new MemoryMonitor({
    notebooks,
    settings: { ...DEFAULT_SETTINGS },
    recordStore,
    timelineStore,
    // Nothing is kept in the browser before the user's settings say so.
    settingsLoading: hasSettingRegistry,
    commsLeftOpen: new CommsLeftOpen(tabStorage()),
    isPageClient: client =>
      [notebooks, consoles].some(
        widgets =>
          !!widgets?.find(
            widget => widget.sessionContext.session?.kernel?.clientId === client
          )
      )
  });
}

/**
 * Connects the monitor to what the page does: cells sent to run, and the
 * page going away.
 */
function watchPage(monitor: MemoryMonitor, notebooks: INotebookTracker): void {
  // A cell about to be sent to a kernel that has no helper yet, as with Run
  // All as a notebook opens or Restart and Run All, gets the helper ahead of
  // it.
  NotebookActions.executionScheduled.connect((_, { notebook }) => {
    const panel = notebooks.find(candidate => candidate.content === notebook);
    if (panel) {
      monitor.beforeExecution(panel);
    }
  });
  // A page that goes away sends no comm_close, so the next page in this tab
  // names the comms that this one leaves open, and the kernel stops sending
  // to them.
  window.addEventListener('pagehide', event => {
    if (!event.persisted) {
      monitor.pageExit();
    }
  });
}
