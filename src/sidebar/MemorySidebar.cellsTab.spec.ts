/** MemorySidebar: the Cells tab, which switches between the memory figures and the cell history. */
import { Widget } from '@lumino/widgets';

import { MemorySidebar } from './MemorySidebar';
import { FakeMonitor } from '../testing/fixtures';

describe('MemorySidebar: Cells tab', () => {
  it('switches between the memory figures and the cell history', () => {
    const monitor = new FakeMonitor();
    const sidebar = new MemorySidebar({ monitor });
    Widget.attach(sidebar, document.body);
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
