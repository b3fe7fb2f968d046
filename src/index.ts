/**
 * jupyterlab-vram: live GPU memory (PyTorch, NVML, TensorFlow) and host RAM
 * of the active notebook's kernel, in a right-sidebar panel and the status bar.
 *
 * Wiring only; see monitor/MemoryMonitor.ts (which kernel is watched),
 * kernel/KernelHelperConnection.ts with kernel/helperBootstrap.ts (how the
 * helper gets into the kernel) and model/KernelMemoryModel.ts (where samples
 * come in).
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  IToolbarWidgetRegistry,
  Notification
} from '@jupyterlab/apputils';
import {
  INotebookTracker,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import { IConsoleTracker } from '@jupyterlab/console';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';

import { registerCommands } from './features/registerCommands';
import { CommandIDs } from './ui/commandIds';
import { CellHistoryEntry } from './model/CellHistory';
import { CommsLeftOpen, tabStorage } from './kernel/CommsLeftOpen';
import { MemoryMonitor } from './monitor/MemoryMonitor';
import { IMonitoredNotebook } from './monitor/monitoredSession';
import {
  lazyIndexedDbStore,
  lazyIndexedDbTimelineStore
} from './storage/lazyIndexedDbStore';
import { followNotebookFiles } from './storage/followNotebookFiles';
import { KernelMemoryModel } from './model/KernelMemoryModel';
import {
  DEFAULT_SETTINGS,
  readSettings,
  VramSettings
} from './settings/settings';
import { SnippetLibrary } from './features/snippets/SnippetLibrary';
import { IVramMonitor } from './tokens';
import { MemoryToolbarButton } from './features/snippets/MemoryToolbarButton';
import type { NotebookCellBadges } from './features/cells/NotebookCellBadges';
import { SidebarHost } from './sidebar/SidebarHost';
import { VramStatusItem } from './features/overview/VramStatusItem';
import {
  actionsFor,
  CLEANUP_ACTIONS
} from './features/cleanup/cleanupActionsPart';
import {
  allocationsFor,
  ALLOCATION_RECORDING
} from './features/allocations/allocationRecordingPart';

export { IVramMonitor } from './tokens';
export type { IKernelMemoryModel, ModelChange } from './tokens';
export { CommandIDs } from './ui/commandIds';

const PLUGIN_ID = 'jupyterlab-vram:plugin';
/** The settings' title in the Settings Editor (schema/plugin.json). */
const SETTINGS_TITLE = 'GPU Memory';

/** Name of our item of the notebook toolbar (schema `jupyter.lab.toolbars`). */
const TOOLBAR_ITEM = 'vram-memory';

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
    ITranslator,
    IToolbarWidgetRegistry,
    IConsoleTracker
  ],
  provides: IVramMonitor,
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null,
    translator: ITranslator | null,
    toolbarRegistry: IToolbarWidgetRegistry | null,
    consoles: IConsoleTracker | null
  ): IVramMonitor => {
    const trans = (translator ?? nullTranslator).load('jupyterlab_vram');
    const hasIndexedDb = typeof indexedDB !== 'undefined';
    const recordStore = hasIndexedDb ? lazyIndexedDbStore() : null;
    const timelineStore = hasIndexedDb ? lazyIndexedDbTimelineStore() : null;
    if (recordStore && timelineStore) {
      // What is kept by notebook path follows the files renamed, deleted, made.
      followNotebookFiles(app.serviceManager.contents.fileChanged, [
        recordStore,
        timelineStore
      ]);
    }
    const monitor = new MemoryMonitor({
      partKinds: [CLEANUP_ACTIONS, ALLOCATION_RECORDING],
      notebooks: tracker,
      settings: { ...DEFAULT_SETTINGS },
      recordStore,
      timelineStore,
      // Nothing is kept in the browser before the user's settings say so.
      settingsLoading: settingRegistry !== null,
      commsLeftOpen: new CommsLeftOpen(tabStorage()),
      isPageClient: client =>
        [tracker, consoles].some(
          widgets =>
            !!widgets?.find(
              widget =>
                widget.sessionContext.session?.kernel?.clientId === client
            )
        )
    });
    // A cell about to be sent to a kernel that has no helper yet (Run All
    // as a notebook opens, Restart and Run All) gets the helper ahead of it.
    NotebookActions.executionScheduled.connect((_, { notebook }) => {
      const panel = tracker.find(candidate => candidate.content === notebook);
      if (panel) {
        monitor.beforeExecution(panel);
      }
    });
    // A page that goes sends no comm_close: the next page in this tab names
    // the comms this one leaves open, so the kernel stops sending to them.
    window.addEventListener('pagehide', event => {
      if (!event.persisted) {
        monitor.pageExit();
      }
    });
    const snippets = new SnippetLibrary();

    let registrySettings: ISettingRegistry.ISettings | null = null;
    const setSetting = async <K extends keyof VramSettings>(
      key: K,
      value: VramSettings[K]
    ): Promise<void> => {
      if (registrySettings) {
        // Applied through settings.changed.
        await registrySettings.set(key, value);
      } else {
        monitor.updateSettings({ ...monitor.settings, [key]: value });
      }
    };

    if (settingRegistry) {
      settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          registrySettings = settings;
          const apply = () => {
            monitor.updateSettings(readSettings(settings.composite));
            // The schema's default: the default list, without loading its copy in JavaScript.
            void snippets.read(
              settings.composite,
              settings.default('snippets')
            );
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(async reason => {
          // The registry refused the settings whole (one value against the
          // schema): read them as written, so that the bad value alone is lost.
          const refused = await import('./settings/refusedSettings')
            .then(async module => {
              const read = await module.readRefusedSettings(
                settingRegistry,
                PLUGIN_ID,
                reason
              );
              return (
                read && {
                  read,
                  message: module.refusedSettingsMessage(
                    SETTINGS_TITLE,
                    read.problems
                  )
                }
              );
            })
            .catch(() => null);
          if (refused) {
            console.warn(`jupyterlab-vram: ${refused.message}`, reason);
            monitor.updateSettings(readSettings(refused.read.user));
            void snippets.read(refused.read.user);
            Notification.warning(refused.message, { autoClose: false });
            return;
          }
          console.warn(
            'jupyterlab-vram: could not load settings, using defaults.',
            reason
          );
          monitor.updateSettings(monitor.settings);
          void snippets.read(undefined); // the default list
        });
    } else {
      void snippets.read(undefined);
    }

    const sidebar = new SidebarHost({
      monitor,
      trans,
      cellActions: {
        revealCell: entry => revealCell(app, tracker, monitor, entry),
        exportHistory: format =>
          void app.commands.execute(CommandIDs.exportCellHistory, { format }),
        clearHistory: () =>
          void app.commands.execute(CommandIDs.clearCellHistory)
      },
      actionsFor: model => actionsFor(monitor, model),
      allocationsFor: model => allocationsFor(monitor, model),
      execute: (command, args) => app.commands.execute(command, args),
      snippets,
      kernelSessions: monitor,
      // A console's runs are labelled as such in the Cells tab.
      consoles
    });
    app.shell.add(sidebar, 'right', { rank: SIDEBAR_RANK });
    if (restorer) {
      restorer.add(sidebar, 'jupyterlab-vram-sidebar');
    }

    registerCommands({
      app,
      monitor,
      trans,
      palette,
      sidebar,
      setSetting,
      currentNotebookPath: () => tracker.currentWidget?.context.path ?? null,
      snippets,
      currentNotebook: () => tracker.currentWidget
    });

    if (toolbarRegistry) {
      toolbarRegistry.addFactory<NotebookPanel>(
        'Notebook',
        TOOLBAR_ITEM,
        panel =>
          new MemoryToolbarButton({
            commands: app.commands,
            library: snippets,
            beforeOpen: () => {
              // The commands act on the current notebook: make it this one.
              if (tracker.currentWidget !== panel) {
                app.shell.activateById(panel.id);
              }
            }
          })
      );
    }

    // Memory badges on the cells of every monitored notebook.
    const badges = new Map<IMonitoredNotebook, NotebookCellBadges>();
    // The badges' code loads with the first notebook, not with the page: they
    // show the records a notebook has when they are made, so nothing is missed.
    const addBadges = (panel: IMonitoredNotebook, model: KernelMemoryModel) => {
      void import('./features/cells/NotebookCellBadges').then(
        ({ NotebookCellBadges }) => {
          if (badges.has(panel) || panel.isDisposed) {
            return;
          }
          const notebookPanel = panel as NotebookPanel;
          badges.set(
            panel,
            new NotebookCellBadges({
              notebook: notebookPanel.content,
              model,
              settings: monitor.settings,
              alive: allocationsFor(monitor, model)
            })
          );
          panel.disposed.connect(() => {
            badges.get(panel)?.dispose();
            badges.delete(panel);
          });
        }
      );
    };
    monitor.panelTracked.connect((_, { panel, model }) =>
      addBadges(panel, model)
    );
    const first = tracker.currentWidget;
    const firstModel = first ? monitor.modelFor(first) : null;
    if (first && firstModel) {
      addBadges(first, firstModel);
    }
    monitor.settingsChanged.connect((_, settings) => {
      for (const b of badges.values()) {
        b.settings = settings;
      }
    });

    // A notification when a kernel dies without the user asking. Its code
    // loads with the first monitored notebook (a page without a kernel has
    // nothing to die); a death known by then is told when it has loaded.
    let notifierLoading = false;
    const watchDeaths = () => {
      if (notifierLoading || monitor.sessions().length === 0) {
        return;
      }
      notifierLoading = true;
      import('./features/kernelDeath/deathNotifier').then(
        ({ DeathNotifier }) => {
          monitor.sessionsChanged.disconnect(watchDeaths);
          new DeathNotifier({
            monitor,
            showDetails: () =>
              void app.commands.execute(CommandIDs.openSidebar),
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
          notifierLoading = false; // a failed fetch (the server restarting): the next change tries again
          console.warn(
            'jupyterlab-vram: could not load the kernel death notification',
            reason
          );
        }
      );
    };
    monitor.sessionsChanged.connect(watchDeaths);
    watchDeaths();

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

/**
 * Activate the record's cell in its notebook and scroll to it; false when
 * no monitored notebook of that kernel has the cell any more.
 */
async function revealCell(
  app: JupyterFrontEnd,
  tracker: INotebookTracker,
  monitor: MemoryMonitor,
  entry: CellHistoryEntry
): Promise<boolean> {
  const cellId = entry.record.cell_id;
  const model = monitor.current;
  if (cellId === null || !model) {
    return false;
  }
  const panels = monitor.panelsOf(model) as NotebookPanel[];
  const current = tracker.currentWidget;
  if (current && panels.includes(current)) {
    // Prefer the view the user works in.
    panels.splice(panels.indexOf(current), 1);
    panels.unshift(current);
  }
  for (const panel of panels) {
    const notebook = panel.content;
    const index = notebook.widgets.findIndex(c => c.model.id === cellId);
    if (index < 0) {
      continue;
    }
    app.shell.activateById(panel.id);
    notebook.activeCellIndex = index;
    notebook.deselectAll();
    await notebook.scrollToItem(index, 'center');
    return true;
  }
  return false;
}

export default plugin;
