/**
 * Tests the Cells tab of MemorySidebar, which switches between the memory
 * figures and the cell history.
 */

import { loadFullSidebar } from '../testing/sidebarFixtures';
import { FakeMonitor } from '../testing/fixtures';

describe('MemorySidebar: Cells tab', () => {
  it('switches between the memory figures and the cell history', async () => {
    const monitor = new FakeMonitor();
    const sidebar = await loadFullSidebar({ monitor });
    const cellsTab = sidebar.node.querySelector<HTMLElement>(
      '[data-vram-role="cells-tab"]'
    )!;
    const history = sidebar.node.querySelector<HTMLElement>(
      '[data-vram-role="cell-history"]'
    )!;
    expect(sidebar.cells.isHidden).toBe(true);
    cellsTab.click();
    expect(sidebar.tab).toBe('cells');
    expect(sidebar.cells.isHidden).toBe(false);
    expect(sidebar.timeline.isHidden).toBe(true);
    expect(cellsTab.getAttribute('aria-selected')).toBe('true');
    expect(history).toBe(sidebar.cells.node);
    sidebar.dispose();
  });
});
