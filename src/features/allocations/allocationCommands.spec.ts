/**
 * Tests the allocation commands through the whole frontend. A command goes
 * through AllocationRecorder and KernelHelperConnection to the comm of a fake
 * kernel, whose reply reaches the Lines tab; a row there then jumps to a line
 * in a fake notebook.
 */
import { CommandRegistry } from '@lumino/commands';
import { MessageLoop } from '@lumino/messaging';

import { CommandIDs } from '../../ui/commandIds';
import { loadFullSidebar } from '../../testing/sidebarFixtures';
import {
  liveMonitorOnFakeKernel,
  registerTestCommands,
  settle
} from '../../testing/fakeKernel';
import { MiB } from '../../testing/fixtures';
import { actionsFor } from '../cleanup/cleanupActionsPart';
import { allocationsFor } from './allocationRecordingPart';

const ON = {
  enabled: true,
  host: { state: 'recording', frames: 16, started: 1, overhead_bytes: 2 * MiB },
  gpu: {
    state: 'waiting',
    max_entries: 100000,
    started: null,
    allocated_before_bytes: null,
    reason: 'torch is not imported'
  }
};
const OFF = {
  enabled: false,
  host: { state: 'off', frames: null, started: null, overhead_bytes: 0 },
  gpu: {
    state: 'off',
    max_entries: null,
    started: null,
    allocated_before_bytes: null,
    reason: null
  }
};
const LISTING = {
  recording: ON,
  elapsed_ms: 3,
  devices: [
    {
      device: 'host',
      index: null,
      total_bytes: 40 * MiB,
      count: 2,
      unattributed_bytes: 0,
      helper_bytes: 0,
      truncated: false,
      sites: [
        {
          device: 'host',
          cell: { execution_count: 2, cell_id: 'cell-b', line: 3 },
          frame: null,
          code: 'big = np.ones(5_000_000)',
          library_frame: null,
          bytes: 40 * MiB,
          count: 1
        }
      ]
    }
  ],
  cells: [
    {
      execution_count: 2,
      cell_id: 'cell-b',
      alive_bytes: { host: 40 * MiB },
      total_bytes: 40 * MiB,
      growing: false
    }
  ]
};

function fakeCell(id: string, count: number | null) {
  return {
    model: { id, type: 'code', executionCount: count },
    ready: Promise.resolve(),
    editor: { setCursorPosition: jest.fn(), focus: jest.fn() }
  };
}

/**
 * Reads a Blob with a FileReader, as a browser would, because jsdom's Blob has
 * no text() or arrayBuffer().
 */
function read(blob: Blob, as: 'text' | 'buffer'): Promise<any> {
  return new Promise(resolve => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    if (as === 'text') {
      reader.readAsText(blob);
    } else {
      reader.readAsArrayBuffer(blob);
    }
  });
}

async function setup() {
  const cells = [fakeCell('cell-a', 1), fakeCell('cell-b', 2)];
  const notebook = {
    widgets: cells,
    activeCellIndex: 0,
    mode: 'command',
    deselectAll: jest.fn(),
    scrollToItem: jest.fn(async () => undefined)
  };
  const { comm, monitor, panel, tracker } = await liveMonitorOnFakeKernel({
    id: 'panel-1',
    content: notebook
  });
  const commands = new CommandRegistry();
  const sidebar = await loadFullSidebar({
    monitor,
    actionsFor: model => actionsFor(monitor, model),
    allocationsFor: model => allocationsFor(monitor, model),
    execute: (id, args) => commands.execute(id, args)
  });
  const { app, notes } = registerTestCommands(commands, {
    monitor,
    sidebar,
    currentNotebook: () => panel as any
  });
  return {
    comm,
    monitor,
    commands,
    sidebar,
    notebook,
    cells,
    app,
    notes,
    tracker
  };
}

describe('allocation commands', () => {
  it('turn recording on with the settings, list the lines, jump to one, and turn it off', async () => {
    const { comm, commands, sidebar, notebook, cells, app } = await setup();
    const recording = commands.execute(CommandIDs.recordAllocations, {
      enabled: true
    });
    await settle();
    expect(comm.lastRequest).toMatchObject({
      type: 'record_allocations',
      enabled: true,
      host_frames: 16,
      gpu_max_entries: 100000
    });
    comm.reply(ON);
    await settle();
    // Turning it on lists the lines at once.
    expect(comm.lastRequest.type).toBe('allocation_sites');
    comm.reply(LISTING);
    await recording;
    expect(commands.isToggled(CommandIDs.recordAllocations)).toBe(true);

    sidebar.showTab('lines');
    MessageLoop.flush();
    const row = sidebar.node.querySelector<HTMLElement>(
      '[data-vram-role="site-row"]'
    )!;
    expect(row.dataset.vramCellId).toBe('cell-b');
    row.click();
    await settle();
    expect(app.shell.activateById).toHaveBeenCalledWith('panel-1');
    expect(notebook.activeCellIndex).toBe(1);
    expect(cells[1].editor.setCursorPosition).toHaveBeenCalledWith({
      line: 2,
      column: 0
    });

    const off = commands.execute(CommandIDs.recordAllocations, {
      enabled: false
    });
    await settle();
    expect(comm.lastRequest).toMatchObject({
      type: 'record_allocations',
      enabled: false
    });
    comm.reply(OFF);
    await off;
    MessageLoop.flush();
    expect(
      sidebar.node.querySelectorAll('[data-vram-role="site-row"]')
    ).toHaveLength(0);
    expect(
      sidebar.node.querySelector('[data-vram-role="recording-status"]')!
        .textContent
    ).toBe(
      'Recording is off: it costs nothing. Tick "Record allocations" to see which lines hold memory.'
    );
    sidebar.dispose();
  });

  it('tell menus when recording, the helper or the active kernel changes, not only after a run', async () => {
    const { comm, commands, monitor, sidebar, tracker } = await setup();
    const changed: string[] = [];
    commands.commandChanged.connect((_, args) => {
      if (args.id === CommandIDs.recordAllocations) {
        changed.push(
          `${commands.isEnabled(args.id!)}/${commands.isToggled(args.id!)}`
        );
      }
    });
    // The helper goes away before anything was recorded, so nothing can be
    // recorded, and the command is disabled.
    monitor.current!.setState('disconnected', 'gone');
    expect(changed.pop()).toBe('false/false');
    monitor.current!.setState('live');
    expect(changed.pop()).toBe('true/false');
    // Another page turned recording on, and the command must show it as on.
    comm.receive({ type: 'allocation_recording', recording: ON });
    await settle();
    expect(changed.pop()).toBe('true/true');
    // When no notebook is active any more, there is no kernel to record in.
    changed.length = 0;
    tracker.currentWidget = null;
    tracker.currentChanged.emit(null);
    expect(monitor.current).toBeNull();
    expect(changed).toEqual(['false/false']);
    sidebar.dispose();
  });

  it('download the host sites as CSV and say why there is no GPU snapshot', async () => {
    const { comm, commands, notes } = await setup();
    const created: Blob[] = [];
    (URL as any).createObjectURL = jest.fn((blob: Blob) => {
      created.push(blob);
      return 'blob:x';
    });
    (URL as any).revokeObjectURL = jest.fn();
    // jsdom cannot navigate to a download, so the click is recorded instead.
    const downloads: string[] = [];
    const click = jest
      .spyOn(HTMLAnchorElement.prototype, 'click')
      .mockImplementation(function (this: HTMLAnchorElement) {
        downloads.push(this.download);
      });
    const listed = commands.execute(CommandIDs.showAllocationSites);
    await settle();
    comm.reply(LISTING);
    await listed;
    expect(await commands.execute(CommandIDs.exportAllocationSites)).toBe(
      'notebook-host-allocation-sites.csv'
    );
    const csv: string = await read(created[0], 'text');
    expect(csv.split('\n')[1]).toBe(
      `host,2,cell-b,3,true,${40 * MiB},1,big = np.ones(5_000_000),,[2] line 3`
    );

    const snapshot = commands.execute(CommandIDs.exportAllocationSnapshot);
    await settle();
    comm.reply({
      format: 'pickle',
      data_base64: null,
      bytes: 0,
      reason: 'GPU allocations are not being recorded'
    });
    expect(await snapshot).toBeNull();
    expect(notes).toContainEqual([
      'warning',
      'GPU allocations are not being recorded'
    ]);

    const exported = commands.execute(CommandIDs.exportAllocationSnapshot);
    await settle();
    comm.reply({
      format: 'pickle',
      data_base64: btoa('\x80\x04pickle'),
      bytes: 8,
      reason: null
    });
    expect(await exported).toBe('notebook-gpu-snapshot.pickle');
    expect(new Uint8Array(await read(created[1], 'buffer'))[0]).toBe(0x80);
    expect(downloads).toEqual([
      'notebook-host-allocation-sites.csv',
      'notebook-gpu-snapshot.pickle'
    ]);
    click.mockRestore();
  });
});
