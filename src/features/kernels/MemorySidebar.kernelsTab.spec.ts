/**
 * Tests for the memory sidebar's Kernels tab, which shows the Kernels view and
 * hides the cleanup bar.
 */
import { MessageLoop } from '@lumino/messaging';

import { loadFullSidebar } from '../../testing/sidebarFixtures';
import { FakeMonitor } from '../../testing/fixtures';
import { FakeSource } from '../../testing/kernelsTabFixtures';

describe('MemorySidebar: Kernels tab', () => {
  it('shows the Kernels view on its tab and hides the cleanup bar', async () => {
    const source = new FakeSource();
    const sidebar = await loadFullSidebar({
      monitor: new FakeMonitor(),
      kernelSessions: source
    });
    expect(sidebar.kernels.isHidden).toBe(true);
    const tab = sidebar.node.querySelector(
      '[data-vram-role="kernels-tab"]'
    ) as HTMLButtonElement;
    expect(tab.textContent).toBe('Kernels');
    tab.click();
    expect(sidebar.tab).toBe('kernels');
    expect(tab.getAttribute('aria-selected')).toBe('true');
    expect(sidebar.kernels.isHidden).toBe(false);
    expect(sidebar.holders.isHidden).toBe(true);
    expect(sidebar.actionsBar.isHidden).toBe(true);
    source.add('kernel-a', 'a.ipynb');
    MessageLoop.flush();
    expect(
      sidebar.node.querySelectorAll('[data-vram-role="kernel-row"]')
    ).toHaveLength(1);
    sidebar.dispose();
  });
});
