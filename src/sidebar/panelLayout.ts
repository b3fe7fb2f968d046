/**
 * Where the features' tabs and sections go in the memory panel, in one
 * place: the tabs' order, and the order of the Memory tab's sections, which
 * come from several features.
 */

/**
 * The ids of the panel's tabs, which are the `tab` argument of the open-sidebar
 * command.
 */
export const TABS = {
  memory: 'memory',
  cells: 'cells',
  holders: 'holders',
  lines: 'lines',
  processes: 'processes',
  kernels: 'kernels'
} as const;

/** The tabs' ranks, which set their order in the tab bar. */
export const TAB_RANKS = {
  memory: 100,
  cells: 200,
  holders: 300,
  lines: 400,
  processes: 450,
  kernels: 500
} as const;

/** The ranks of the Memory tab's sections, top to bottom. */
export const MEMORY_TAB_RANKS = {
  banner: 10,
  cleanupBar: 20,
  kernelDeath: 30,
  oom: 40,
  gpus: 50,
  host: 60,
  timeline: 70,
  estimate: 75,
  cluster: 77,
  snippets: 80
} as const;

/**
 * The sidebar that the commands are given where the sidebar's plugin is
 * switched off, so that a command that would show a tab shows nothing.
 */
export const NO_SIDEBAR: { showTab(id: string): void } = {
  showTab: () => undefined
};
