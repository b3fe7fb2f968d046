/** Tests for the "Kernel + N processes" rows of the Host RAM and GPU cards. */
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { makeHello, makeSample, MiB, wire } from '../../testing/fixtures';
import {
  makeProcessTree,
  makeTreeProcess
} from '../../testing/processFixtures';
import { GpuDeviceList } from './GpuDeviceList';
import { HostMemoryCard } from './HostMemoryCard';
import { gpuTreeFigures, hostTreeFigures } from './processTreeRows';

function cards() {
  const model = new KernelMemoryModel({ historyCapacity: 10 });
  model.ingest(wire(makeHello()));
  const host = new HostMemoryCard(DEFAULT_SETTINGS);
  const gpus = new GpuDeviceList(DEFAULT_SETTINGS);
  for (const view of [host, gpus]) {
    Widget.attach(view, document.body);
    view.model = model;
  }
  const value = (view: Widget, role: string) =>
    view.node.querySelector<HTMLElement>(`[data-vram-role="${role}"]`)!;
  const render = () => MessageLoop.flush();
  return { model, host, gpus, value, render };
}

describe('the tree rows of the Memory tab', () => {
  afterEach(() => {
    document.body.innerHTML = '';
  });

  it('are hidden without processes: the cards look as they did', () => {
    const { model, host, gpus, value, render } = cards();
    model.ingest(wire(makeSample()));
    render();
    expect(value(host, 'host-tree').parentElement!.hidden).toBe(true);
    expect(value(gpus, 'gpu-tree').parentElement!.hidden).toBe(true);
    model.ingest(wire(makeSample({ seq: 2, processes: makeProcessTree([]) })));
    render();
    expect(value(host, 'host-tree').parentElement!.hidden).toBe(true);
  });

  it("show the kernel + N processes beside the kernel's own figure", () => {
    const { model, host, gpus, value, render } = cards();
    const tree = makeProcessTree([
      makeTreeProcess({ pid: 10 }),
      makeTreeProcess({ pid: 11, gpus: [] })
    ]);
    model.ingest(wire(makeSample({ processes: tree })));
    render();
    const hostRow = value(host, 'host-tree').parentElement!;
    expect(hostRow.hidden).toBe(false);
    expect(hostRow.textContent).toBe('Kernel + 2 processes712 MiB');
    expect(value(host, 'host-tree').dataset.vramBytes).toBe(String(712 * MiB));
    // The row comes right after the kernel's own row.
    expect(hostRow.previousElementSibling).toBe(
      value(host, 'host-rss').parentElement
    );
    const gpuRow = value(gpus, 'gpu-tree').parentElement!;
    expect(gpuRow.hidden).toBe(false);
    expect(gpuRow.textContent).toBe('Kernel + 2 processes2.99 GiB');
    expect(gpuRow.previousElementSibling).toBe(
      value(gpus, 'gpu-process-used').parentElement
    );
  });

  it("say so where the kernel's own GPU figure is unknown", () => {
    const tree = makeProcessTree([makeTreeProcess()]);
    tree.totals!.gpus[0].used_bytes = null;
    expect(gpuTreeFigures(tree, 0)).toMatchObject({
      bytes: null,
      processesBytes: 500 * MiB
    });
    expect(gpuTreeFigures(tree, 1)).toBeNull();
    expect(hostTreeFigures(null)).toBeNull();
  });
});
