/**
 * The commands of allocation recording, whose ids are in ui/commandIds.ts.
 * They turn recording on or off, show live memory by line, go to a line and
 * export the recording. The feature's plugin (plugin.ts) registers them.
 * The code that goes to a line and that exports (allocationCommandsLazy.ts)
 * loads when one of those commands first runs, so that start-up does not
 * pay for it.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';

import { CommandIDs } from '../../ui/commandIds';
import {
  AllocationRecorder,
  AllocationRecorderChange
} from './AllocationRecorder';
import type { MemoryMonitor } from '../../monitor/MemoryMonitor';
import type {
  IKernelMemoryModel,
  ModelChange
} from '../../model/IKernelMemoryModel';
import { SIDEBAR_ID } from '../../sidebar/SidebarHost';
import type { IAllocationCommandOptions } from './allocationCommandOptions';

export type {
  IAllocationCommandOptions,
  ILinePanel
} from './allocationCommandOptions';

/**
 * Registers the allocation recording commands with the app and, when there is
 * one, the command palette.
 */
export function registerAllocationCommands(
  options: IAllocationCommandOptions
): void {
  const { app, trans, palette, sidebar, current } = options;
  const showLines = () => {
    sidebar.showTab('lines');
    app.shell.activateById(SIDEBAR_ID);
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
      // The kernel is asked before the tab shows, so that the tab waits for
      // this answer rather than asking for the recording state itself.
      const listing = current()?.refresh();
      showLines();
      return (await listing) ?? null;
    }
  });

  // The handlers that go to a line and that export load when they first
  // run.
  const handlers = () => import('./allocationCommandsLazy');
  app.commands.addCommand(CommandIDs.goToCellLine, {
    label: trans.__('Go to Cell Line'),
    execute: async args => (await handlers()).goToCellLine(options, args)
  });

  app.commands.addCommand(CommandIDs.exportAllocationSnapshot, {
    label: trans.__('Download the GPU Allocator Snapshot'),
    caption: trans.__(
      "PyTorch's allocator snapshot (.pickle), for pytorch.org/memory_viz"
    ),
    isEnabled: () => {
      // The snapshot can be read from the kernel's own history or from one
      // that someone else started. This is the test of gpuHistoryReadable in
      // protocol/allocation.ts, written out so that this module, which loads
      // with the page, does not pull that one in.
      const state = current()?.recording?.gpu.state;
      return state === 'recording' || state === 'shared';
    },
    execute: async () => (await handlers()).exportAllocationSnapshot(options)
  });

  app.commands.addCommand(CommandIDs.exportAllocationSites, {
    label: trans.__('Download Host Allocation Sites (CSV)'),
    isEnabled: () => current()?.listing !== null,
    execute: async () => (await handlers()).exportAllocationSites(options)
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
 * as they were when last told. So they are told whenever what those states
 * read changes, not only after a command ran: the active kernel, its helper
 * going live or away, its recorder being made once the recorder's code
 * loaded, and the recorder's state. The model is followed too, because the
 * recorder says nothing when a kernel that never recorded stops being live.
 */
function followRecording(
  app: JupyterFrontEnd,
  monitor: Pick<MemoryMonitor, 'current' | 'currentChanged' | 'partsChanged'>,
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
  monitor.partsChanged.connect(follow);
  follow();
}
