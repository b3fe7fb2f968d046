/**
 * Memory badges on the cells of every monitored notebook. Their code loads
 * with the first notebook rather than with the page. When a notebook's
 * badges are made, they show the records that its model holds already, so
 * that no record that came in while the code loaded is missed.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';

import type { KernelMemoryModel } from '../../model/KernelMemoryModel';
import type { MemoryMonitor } from '../../monitor/MemoryMonitor';
import type { IMonitoredNotebook } from '../../monitor/monitoredSession';
import { allocationsFor } from '../allocations/allocationRecordingPart';
import type { NotebookCellBadges } from './NotebookCellBadges';

/**
 * Puts badges on the cells of every notebook the monitor follows, including
 * notebooks opened later.
 */
export function addCellBadges(
  monitor: MemoryMonitor,
  current: IMonitoredNotebook | null
): void {
  const badges = new Map<IMonitoredNotebook, NotebookCellBadges>();
  const add = (panel: IMonitoredNotebook, model: KernelMemoryModel) => {
    void import('./NotebookCellBadges').then(({ NotebookCellBadges }) => {
      if (badges.has(panel) || panel.isDisposed) {
        return;
      }
      badges.set(
        panel,
        new NotebookCellBadges({
          notebook: (panel as NotebookPanel).content,
          model,
          settings: monitor.settings,
          alive: allocationsFor(monitor, model)
        })
      );
      panel.disposed.connect(() => {
        badges.get(panel)?.dispose();
        badges.delete(panel);
      });
    });
  };
  monitor.panelTracked.connect((_, { panel, model }) => add(panel, model));
  const currentModel = current ? monitor.modelFor(current) : null;
  if (current && currentModel) {
    add(current, currentModel);
  }
  monitor.settingsChanged.connect((_, settings) => {
    for (const cellBadges of badges.values()) {
      cellBadges.settings = settings;
    }
  });
}
