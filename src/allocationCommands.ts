/**
 * The commands of allocation recording (ids in commandIds.ts): turn it on
 * or off, show live memory by line, go to a line, export. Registered by
 * registerCommands (commands.ts). What only a handler needs (going to a
 * line, the exports) loads when the handler first runs, not at start-up.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';

import { CommandIDs } from './commandIds';
import {
  AllocationRecorder,
  AllocationRecorderChange
} from './model/AllocationRecorder';
import type { MemoryMonitor } from './model/MemoryMonitor';
import { IMonitoredNotebook } from './model/monitoredSession';
import type { CellMemoryRecord } from './cellProtocol';
import type { IKernelMemoryModel, ModelChange } from './tokens';
import type { ILineTarget, IRevealNotebook } from './views/revealLine';
import { SIDEBAR_ID, SidebarHost } from './views/SidebarHost';

/** A monitored notebook panel whose notebook a line can be revealed in. */
export interface ILinePanel extends IMonitoredNotebook {
  readonly id: string;
  readonly content: IRevealNotebook;
}

export function registerAllocationCommands(options: {
  app: JupyterFrontEnd;
  trans: TranslationBundle;
  palette: ICommandPalette | null;
  category: string;
  sidebar: Pick<SidebarHost, 'showTab'>;
  /** The active kernel's model, followed for whether its helper is live. */
  monitor: Pick<MemoryMonitor, 'current' | 'currentChanged'>;
  /** The active kernel's allocation recording; null without a notebook. */
  current: () => AllocationRecorder | null;
  /** The panels of the active kernel, the active notebook first. */
  panels: () => ILinePanel[];
  /** Path of the active notebook (for export file names). */
  currentNotebookPath: () => string | null;
  /** The active kernel's cell records (they map execution counts to cells). */
  records: () => readonly Pick<CellMemoryRecord, 'execution_count' | 'cell_id'>[];
  notify: (type: 'info' | 'warning' | 'error', message: string) => void;
}): void {
  const { app, trans, palette, sidebar, current } = options;
  const showLines = () => {
    sidebar.showTab('lines');
    app.shell.activateById(SIDEBAR_ID);
  };
  const stem = () => {
    const base = (options.currentNotebookPath() ?? '').split('/').pop() ?? '';
    return base.replace(/\.ipynb$/i, '') || 'notebook';
  };

  app.commands.addCommand(CommandIDs.recordAllocations, {
    label: args =>
      args.enabled === false
        ? trans.__('Stop Recording Allocations')
        : args.enabled === true
          ? trans.__('Record Allocations')
          : trans.__('Record Allocations (Which Line Holds Memory)'),
    caption: trans.__(
      'Keep the Python stack of every live allocation in the active kernel (tracemalloc; PyTorch allocator history), to show which line holds memory'
    ),
    isToggled: () => current()?.enabled ?? false,
    isEnabled: () => current()?.available ?? false,
    execute: async args => {
      const recorder = current();
      if (!recorder) {
        return null;
      }
      const enabled =
        typeof args.enabled === 'boolean' ? args.enabled : !recorder.enabled;
      const state = await recorder.setRecording(enabled);
      if (state === null) {
        options.notify(
          'error',
          recorder.error ?? trans.__('Could not change allocation recording.')
        );
      } else if (enabled) {
        await recorder.refresh();
      }
      return state;
    }
  });

  app.commands.addCommand(CommandIDs.showAllocationSites, {
    label: trans.__('Show Which Lines Hold Memory'),
    caption: trans.__(
      'List live memory by the notebook line that allocated it (needs allocation recording)'
    ),
    isEnabled: () => current() !== null,
    execute: async () => {
      // Asked before the tab shows: the tab then waits for this answer
      // rather than asking for the recording state itself.
      const listing = current()?.refresh();
      showLines();
      return (await listing) ?? null;
    }
  });

  app.commands.addCommand(CommandIDs.goToCellLine, {
    label: trans.__('Go to Cell Line'),
    execute: async args => {
      const target: ILineTarget = {
        cellId: typeof args.cellId === 'string' ? args.cellId : null,
        executionCount:
          typeof args.executionCount === 'number' ? args.executionCount : null,
        line: typeof args.line === 'number' ? args.line : 1
      };
      const { revealLine } = await import('./views/revealLine');
      for (const panel of options.panels()) {
        app.shell.activateById(panel.id);
        if (await revealLine(panel.content, target)) {
          return true;
        }
      }
      options.notify(
        'warning',
        trans.__('That cell is no longer in the notebook.')
      );
      return false;
    }
  });

  app.commands.addCommand(CommandIDs.exportAllocationSnapshot, {
    label: trans.__('Download the GPU Allocator Snapshot'),
    caption: trans.__(
      "PyTorch's allocator snapshot (.pickle), for pytorch.org/memory_viz"
    ),
    isEnabled: () => {
      // Its own history or someone else's (allocationProtocol's gpuHistoryReadable,
      // not imported: this module loads with the page).
      const state = current()?.recording?.gpu.state;
      return state === 'recording' || state === 'shared';
    },
    execute: async () => {
      const recorder = current();
      const snapshot = await recorder?.snapshot();
      if (!snapshot) {
        options.notify('error', recorder?.error ?? trans.__('No snapshot.'));
        return null;
      }
      if (snapshot.data_base64 === null) {
        options.notify('warning', snapshot.reason ?? trans.__('No snapshot.'));
        return null;
      }
      const fileName = `${stem()}-gpu-snapshot.pickle`;
      const { downloadBase64 } = await import('./views/download');
      downloadBase64(fileName, snapshot.data_base64, 'application/octet-stream');
      return fileName;
    }
  });

  app.commands.addCommand(CommandIDs.exportAllocationSites, {
    label: trans.__('Download Host Allocation Sites (CSV)'),
    isEnabled: () => current()?.listing !== null,
    execute: async () => {
      const listing = current()?.listing;
      if (!listing) {
        return null;
      }
      const [{ cellIdsByCount, siteRows, sitesToCsv }, { downloadText }] =
        await Promise.all([
          import('./model/siteRows'),
          import('./views/download')
        ]);
      const cellIds = cellIdsByCount(options.records());
      const host = siteRows(listing, cellIds).find(d => d.device === 'host');
      if (!host) {
        return null;
      }
      const fileName = `${stem()}-host-allocation-sites.csv`;
      downloadText(fileName, sitesToCsv(host.rows), 'text/csv');
      return fileName;
    }
  });

  followRecording(app, options.monitor, current);

  if (palette) {
    for (const command of RECORDING_COMMANDS) {
      palette.addItem({ command, category: options.category });
    }
  }
}

/** The commands whose label, toggle or enabled state read the recorder. */
const RECORDING_COMMANDS = [
  CommandIDs.recordAllocations,
  CommandIDs.showAllocationSites,
  CommandIDs.exportAllocationSnapshot,
  CommandIDs.exportAllocationSites
];

/** What the recording commands' isEnabled and isToggled read of a recorder. */
const RECORDING_CHANGES: ReadonlySet<AllocationRecorderChange> = new Set([
  'recording',
  'listing',
  'available'
] as const);

/**
 * Menus and the palette show the recording commands as enabled and toggled
 * when last told: tell them whenever what those read changes (the active
 * kernel, its helper going live or away, the recorder's state), not only
 * after a command ran. The recorder says nothing when a kernel that never
 * recorded stops being live: its model does.
 */
function followRecording(
  app: JupyterFrontEnd,
  monitor: Pick<MemoryMonitor, 'current' | 'currentChanged'>,
  current: () => AllocationRecorder | null
): void {
  const notify = () => {
    for (const id of RECORDING_COMMANDS) {
      app.commands.notifyCommandChanged(id);
    }
  };
  const onRecorderChanged = (
    _: AllocationRecorder,
    change: AllocationRecorderChange
  ) => {
    if (RECORDING_CHANGES.has(change)) {
      notify();
    }
  };
  const onModelChanged = (_: IKernelMemoryModel, change: ModelChange) => {
    if (change === 'state') {
      notify();
    }
  };
  let model: IKernelMemoryModel | null = null;
  let recorder: AllocationRecorder | null = null;
  const follow = () => {
    model?.changed.disconnect(onModelChanged);
    recorder?.changed.disconnect(onRecorderChanged);
    model = monitor.current;
    recorder = current();
    model?.changed.connect(onModelChanged);
    recorder?.changed.connect(onRecorderChanged);
    notify();
  };
  monitor.currentChanged.connect(follow);
  follow();
}
