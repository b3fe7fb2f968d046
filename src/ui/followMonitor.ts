/**
 * Keeps a sidebar view on the monitor: each view added to the memory panel
 * shows the active notebook's kernel and the user's settings, and stops
 * following them when it is disposed (a tab removed, the page torn down).
 */
import type { IKernelMemoryModel } from '../model/IKernelMemoryModel';
import type { IVramMonitor } from '../monitor/IVramMonitor';
import type { VramSettings } from '../settings/settings';
import type { LazyView } from './LazyView';
import type { ModelView } from './ModelView';

/**
 * Calls `show` with the monitor's current model now and whenever it changes,
 * gives the view every new settings object, and returns the view.
 */
export function followMonitor<V extends LazyView>(
  monitor: IVramMonitor,
  view: V,
  show: (model: IKernelMemoryModel | null) => void
): V {
  const onCurrent = (_: IVramMonitor, model: IKernelMemoryModel | null) =>
    show(model);
  const onSettings = (_: IVramMonitor, settings: VramSettings) => {
    view.settings = settings;
  };
  monitor.currentChanged.connect(onCurrent);
  monitor.settingsChanged.connect(onSettings);
  view.disposed.connect(() => {
    monitor.currentChanged.disconnect(onCurrent);
    monitor.settingsChanged.disconnect(onSettings);
  });
  view.settings = monitor.settings;
  show(monitor.current);
  return view;
}

/** Shows the monitor's current model in a model view (see followMonitor). */
export function showCurrentModel<V extends ModelView>(
  monitor: IVramMonitor,
  view: V
): V {
  return followMonitor(monitor, view, model => {
    view.model = model;
  });
}
