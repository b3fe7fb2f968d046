/**
 * The public interface of jupyterlab-vram, for other extensions and for our
 * browser tests and benchmarks:
 *
 *   const monitor = await window.galata.getPlugin('jupyterlab-vram:plugin');
 *   monitor.current?.ingest({type: 'sample', ...});   // feed a sample by hand
 *   monitor.current?.ingest({type: 'cells', records});  // feed cell records
 */
import { Token } from '@lumino/coreutils';

import type { IVramMonitor as IVramMonitorInterface } from './monitor/IVramMonitor';

export type {
  IKernelMemoryModel,
  KernelBusyWith,
  ModelChange
} from './model/IKernelMemoryModel';

/** The memory monitor: the active notebook's kernel model, the settings, a fresh sample. */
export type IVramMonitor = IVramMonitorInterface;

/**
 * The token under which jupyterlab-vram provides its memory monitor to other
 * extensions.
 */
export const IVramMonitor = new Token<IVramMonitor>(
  'jupyterlab-vram:IVramMonitor',
  'Live GPU and host memory of the active notebook kernel.'
);
