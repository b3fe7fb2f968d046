/** Tests how the panel, the timeline and the cell badge show a kernel's death. */
import { MessageLoop } from '@lumino/messaging';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { KernelDeathView } from './KernelDeathView';
import { MemoryTimeline } from '../overview/MemoryTimeline';
import { NotebookCellBadges } from '../cells/NotebookCellBadges';
import { makeHello, wire } from '../../testing/fixtures';
import { dead } from '../../testing/kernelDeathWatchFixtures';

describe('the death in the panel, the timeline, the badge and a notification', () => {
  it('the panel says why, as text, and hides without a death', () => {
    const view = new KernelDeathView(DEFAULT_SETTINGS);
    Widget.attach(view, document.body);
    const model = dead();
    view.model = model;
    MessageLoop.flush();
    expect(view.node.hidden).toBe(false);
    expect(view.node.dataset.vramVerdict).toBe('near-limit');
    const summary = view.node.querySelector(
      '[data-vram-role="kernel-death-summary"]'
    )!;
    expect(summary.textContent).toContain('container limit 4 GiB');
    expect(
      view.node.querySelector('[data-vram-role="kernel-death-cell"]')!
        .textContent
    ).toBe('Cell [12] was running.');
    model.clearKernelDeath();
    MessageLoop.flush();
    expect(view.node.hidden).toBe(true);
    view.dispose();
  });

  it('the timeline counts its death marks', () => {
    const view = new MemoryTimeline(DEFAULT_SETTINGS);
    Widget.attach(view, document.body);
    view.model = dead();
    MessageLoop.flush();
    expect(view.node.dataset.vramDeaths).toBe('1');
    view.dispose();
  });

  it("marks the running cell's badge 'kernel died' until the death is cleared", async () => {
    const cell = (id: string) => {
      const node = document.createElement('div');
      const wrapper = document.createElement('div');
      wrapper.className = 'jp-Cell-inputWrapper';
      const input = document.createElement('div');
      wrapper.appendChild(input);
      node.appendChild(wrapper);
      return {
        model: {
          id,
          type: 'code',
          getMetadata: () => undefined,
          setMetadata: () => undefined
        },
        node,
        inputArea: { node: input },
        ready: Promise.resolve(),
        isDisposed: false
      };
    };
    const a = cell('cell-a');
    const b = cell('cell-b');
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    const badges = new NotebookCellBadges({
      notebook: {
        widgets: [a, b],
        model: { cells: { changed: new Signal<any, any>({}) } },
        modelChanged: new Signal<any, void>({}),
        isDisposed: false
      },
      model,
      settings: DEFAULT_SETTINGS
    });
    const deadModel = dead();
    // The same death is recorded on the model that the badges follow.
    model.ingest(wire(makeHello()));
    model.ingest(wire(deadModel.death!.lastSample));
    model.noteKernelDeath('autorestarting', {
      cellId: 'cell-b',
      executionCount: 12,
      confirmed: true
    });
    const mark = b.node.querySelector(
      '[data-vram-role="cell-death-badge"]'
    ) as HTMLElement;
    expect(mark.textContent).toBe('kernel died'); // The mark appears at once.
    // Its explanation loads with the first death that the page sees, and
    // then fills the title.
    for (let i = 0; i < 50 && !mark.title; i++) {
      await new Promise(resolve => setTimeout(resolve, 0));
    }
    expect(mark.title).toContain('most likely the out-of-memory killer');
    expect(
      a.node.querySelector('[data-vram-role="cell-death-badge"]')
    ).toBeNull();
    model.clearKernelDeath();
    expect(
      b.node.querySelector('[data-vram-role="cell-death-badge"]')
    ).toBeNull();
    badges.dispose();
  });
});
