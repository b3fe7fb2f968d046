/**
 * Tests the memory panel's registry as another extension uses it through
 * the public IVramSidebar token: a tab of its own, sections by rank, loading
 * on first show, removal, and a load that fails and is tried again.
 */
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { IVramSidebar } from '../tokens';
import { MemorySidebar } from './MemorySidebar';
import { SidebarHost } from './SidebarHost';

function textWidget(text: string): Widget {
  const widget = new Widget();
  widget.node.textContent = text;
  return widget;
}

function tabNames(panel: MemorySidebar): string[] {
  return Array.from(panel.node.querySelectorAll('.jp-vram-Tab')).map(
    tab => tab.textContent ?? ''
  );
}

/**
 * The texts of the panel's shown widgets, top to bottom, leaving out the tab
 * bar.
 */
function shownTexts(panel: MemorySidebar): string[] {
  return panel.widgets
    .slice(1)
    .filter(widget => !widget.isHidden)
    .map(widget => widget.node.textContent ?? '');
}

describe('IVramSidebar, as another extension uses it', () => {
  let host: SidebarHost;
  let sidebar: IVramSidebar;

  beforeEach(() => {
    host = new SidebarHost();
    // The rest of the test uses only the public interface.
    sidebar = host;
  });

  afterEach(() => host.dispose());

  it('orders tabs and sections by rank, and loads a tab only when it is first shown', async () => {
    const loads: string[] = [];
    const load = (text: string) => async () => {
      loads.push(text);
      return textWidget(text);
    };
    sidebar.addTab({ id: 'b', label: 'B', rank: 20, load: load('b content') });
    sidebar.addTab({ id: 'a', label: 'A', rank: 10 });
    sidebar.addSection({ id: 's2', tabs: ['a'], rank: 2, load: load('s2') });
    sidebar.addSection({
      id: 's1',
      tabs: ['a', 'b'],
      rank: 1,
      load: load('s1')
    });
    Widget.attach(host, document.body);
    const panel = await host.load();
    await panel.whenLoaded();
    expect(tabNames(panel)).toEqual(['A', 'B']);
    // The first tab by rank is shown until one is picked.
    expect(panel.tab).toBe('a');
    expect(shownTexts(panel)).toEqual(['s1', 's2']);
    // B's own content is not loaded yet.
    expect(loads.sort()).toEqual(['s1', 's2']);

    sidebar.showTab('b');
    await panel.whenLoaded();
    // A shared section comes first, then the tab's own content.
    expect(shownTexts(panel)).toEqual(['s1', 'b content']);
    sidebar.showTab('a');
    sidebar.showTab('b');
    await panel.whenLoaded();
    expect(loads.filter(text => text === 'b content')).toHaveLength(1);
  });

  it('adds a tab to a panel already shown, and removes it with its content', async () => {
    sidebar.addTab({ id: 'memory', label: 'Memory', rank: 100 });
    Widget.attach(host, document.body);
    const panel = await host.load();
    const content = textWidget('mine');
    const added = sidebar.addTab({
      id: 'mine',
      label: 'Mine',
      rank: 1000,
      load: async () => content
    });
    expect(tabNames(panel)).toEqual(['Memory', 'Mine']);
    const tab = panel.node.querySelector<HTMLElement>(
      '[data-vram-role="mine-tab"]'
    )!;
    tab.click();
    await panel.whenLoaded();
    expect(panel.tab).toBe('mine');
    expect(content.parent).toBe(panel);
    expect(tab.getAttribute('aria-controls')).toBe(content.id);
    expect(content.node.getAttribute('aria-labelledby')).toBe(tab.id);

    added.dispose();
    expect(tabNames(panel)).toEqual(['Memory']);
    expect(content.isDisposed).toBe(true);
    expect(panel.tab).toBe('memory');
  });

  it('refuses a second tab of the same id, and ignores an unknown tab', () => {
    sidebar.addTab({ id: 'memory', label: 'Memory', rank: 100 });
    expect(() =>
      sidebar.addTab({ id: 'memory', label: 'Again', rank: 1 })
    ).toThrow(/exists/);
    sidebar.showTab('nowhere');
    expect(sidebar.tab).toBe('memory');
  });

  it('says when a part fails to load, and tries again when the tab is shown again', async () => {
    let fail = true;
    sidebar.addTab({ id: 'memory', label: 'Memory', rank: 100 });
    sidebar.addTab({
      id: 'flaky',
      label: 'Flaky',
      rank: 200,
      load: async () => {
        if (fail) {
          throw new Error('the server is restarting');
        }
        return textWidget('loaded');
      }
    });
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    Widget.attach(host, document.body);
    const panel = await host.load();
    sidebar.showTab('flaky');
    await panel.whenLoaded();
    MessageLoop.flush();
    expect(shownTexts(panel).join()).toContain('the server is restarting');
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();

    fail = false;
    sidebar.showTab('memory');
    sidebar.showTab('flaky');
    await panel.whenLoaded();
    expect(shownTexts(panel)).toEqual(['loaded']);
  });
});
