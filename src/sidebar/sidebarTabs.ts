/** The tabs of the memory panel, in their order. */
export const SIDEBAR_TABS = [
  'memory',
  'cells',
  'holders',
  'lines',
  'kernels'
] as const;

/** The name of one tab of the memory panel. */
export type SidebarTab = (typeof SIDEBAR_TABS)[number];
