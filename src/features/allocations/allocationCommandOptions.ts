/**
 * What the allocation commands act on. It is a module of its own because
 * both halves of the commands share it: the half that loads with the page
 * (allocationCommands.ts, which registers them) and the half that loads
 * when one first runs (allocationCommandsLazy.ts, which does their work).
 */
import type { MemoryMonitor } from '../../monitor/MemoryMonitor';
import type { IMonitoredNotebook } from '../../monitor/monitoredSession';
import type { CellMemoryRecord } from '../../protocol/cell';
import type { IVramSidebar } from '../../sidebar/IVramSidebar';
import type { AllocationRecorder } from './AllocationRecorder';
import type { IRevealNotebook } from './revealLine';
import type { ICommandPalette } from '@jupyterlab/apputils';
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { TranslationBundle } from '@jupyterlab/translation';

/** A monitored notebook panel whose notebook a line can be revealed in. */
export interface ILinePanel extends IMonitoredNotebook {
  readonly id: string;
  readonly content: IRevealNotebook;
}

/** What the allocation commands act on, as the feature's plugin hands it to them. */
export interface IAllocationCommandOptions {
  app: JupyterFrontEnd;
  trans: TranslationBundle;
  palette: ICommandPalette | null;
  category: string;
  sidebar: Pick<IVramSidebar, 'showTab'>;
  /** The active kernel's model, followed for whether its helper is live. */
  monitor: Pick<MemoryMonitor, 'current' | 'currentChanged' | 'partsChanged'>;
  /** The active kernel's allocation recording, or null without a notebook. */
  current: () => AllocationRecorder | null;
  /** The panels of the active kernel, the active notebook first. */
  panels: () => ILinePanel[];
  /** Returns the path of the active notebook, for export file names. */
  currentNotebookPath: () => string | null;
  /** The active kernel's cell records, which map execution counts to cells. */
  records: () => readonly Pick<
    CellMemoryRecord,
    'execution_count' | 'cell_id'
  >[];
  notify: (type: 'info' | 'warning' | 'error', message: string) => void;
}

/** The panels of the active kernel, the notebook the user works in first. */
export function activeFirst(
  monitor: MemoryMonitor,
  active: ILinePanel | null
): ILinePanel[] {
  const model = monitor.current;
  const panels = (model ? monitor.panelsOf(model) : []) as ILinePanel[];
  return active && panels.includes(active)
    ? [active, ...panels.filter(p => p !== active)]
    : panels;
}
