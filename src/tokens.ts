/**
 * The public interface of jupyterlab-vram, for other extensions and for our
 * browser tests and benchmarks: the memory monitor and the sidebar's tabs.
 *
 *   const monitor = await window.galata.getPlugin('jupyterlab-vram:monitor');
 *   monitor.current?.ingest({type: 'sample', ...});   // feed a sample by hand
 *   monitor.current?.ingest({type: 'cells', records});  // feed cell records
 *
 *   // Another extension's tab in the memory panel, loaded when first shown:
 *   sidebar.addTab({id: 'mine', label: 'Mine', rank: 1000, load: async () => new MyWidget()});
 */
export { IVramMonitor } from './monitor/IVramMonitor';
export { IVramSidebar } from './sidebar/IVramSidebar';
export type {
  IKernelMemoryModel,
  KernelBusyWith,
  ModelChange
} from './model/IKernelMemoryModel';
