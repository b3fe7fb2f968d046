/**
 * Keeps a sidebar view on the monitor. Each view added to the memory panel
 * shows the active notebook's kernel and the user's settings, and stops
 * following them when it is disposed, as when a tab is removed or the page
 * is torn down.
 */
import type { ISignal } from '@lumino/signaling';

import type { IKernelMemoryModel } from '../model/IKernelMemoryModel';
import type { IVramMonitor } from '../monitor/IVramMonitor';
import type { VramSettings } from '../settings/settings';
import type { LazyView } from './LazyView';
import type { ModelView } from './ModelView';

/**
 * Calls `show` with the monitor's current model at once, whenever it
 * changes, and whenever `partsChanged` fires. The last is needed because
 * the code of the features' per-kernel parts, such as the cleanup actions,
 * loads after the kernel's model is there (see monitor/sessionParts.ts). It
 * also gives the view every new settings object, and returns the view.
 */
export function followMonitor<V extends LazyView>(
  monitor: IVramMonitor,
  view: V,
  show: (model: IKernelMemoryModel | null) => void,
  partsChanged?: ISignal<unknown, unknown>
): V {
  const onCurrent = (_: IVramMonitor, model: IKernelMemoryModel | null) =>
    show(model);
  const onParts = () => show(monitor.current);
  const onSettings = (_: IVramMonitor, settings: VramSettings) => {
    view.settings = settings;
  };
  monitor.currentChanged.connect(onCurrent);
  monitor.settingsChanged.connect(onSettings);
  partsChanged?.connect(onParts);
  view.disposed.connect(() => {
    monitor.currentChanged.disconnect(onCurrent);
    monitor.settingsChanged.disconnect(onSettings);
    partsChanged?.disconnect(onParts);
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
