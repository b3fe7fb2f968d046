/**
 * One worker of a cluster in the Cluster section: its name and address,
 * pid, host and threads, its status, its host memory against the engine's
 * limit as a bar, managed and spilled memory, its GPUs with their scope,
 * and its allocator where the user asked for a reading. A plain DOM
 * component that ClusterBlock owns, keyed by the worker's id, so that each
 * reading updates the same nodes in place and touches only what changed.
 *
 * Everything from the kernel (names, addresses, hosts, the status word)
 * goes in as text.
 */
import type {
  ClusterAllocatorReading,
  ClusterWorker
} from '../../protocol/cluster';
import type { ByteUnits } from '../../text/format';
import {
  element,
  setBytesData,
  setData,
  setHidden,
  setSegment,
  setText,
  setTitle
} from '../../ui/dom';
import {
  allocatorText,
  gpusText,
  managedText,
  memoryShare,
  memorySourceText,
  workerMemoryText,
  workerName,
  workerWhere
} from './clusterText';

/** The share of its limit from which a worker's bar shows the warning colour. */
const WARNING_SHARE = 0.8;

/** One worker's row, updated in place. */
export class ClusterWorkerRow {
  constructor() {
    const node = (this.node = element('li', 'jp-vram-ClusterWorker', {
      role: 'cluster-worker'
    }));
    const head = element('div', 'jp-vram-ClusterWorker-head');
    this._name = element('span', 'jp-vram-ClusterWorker-name', {
      role: 'cluster-worker-name'
    });
    this._status = element('span', 'jp-vram-ClusterWorker-status', {
      role: 'cluster-worker-status'
    });
    head.append(this._name, this._status);
    this._where = element('div', 'jp-vram-ClusterWorker-where', {
      role: 'cluster-worker-where'
    });
    this._bar = element('div', 'jp-vram-Bar jp-vram-ClusterWorker-bar');
    this._used = element('div', 'jp-vram-Bar-segment jp-vram-Bar-rss');
    this._bar.append(this._used);
    this._memory = element('div', 'jp-vram-ClusterWorker-memory', {
      role: 'cluster-worker-memory'
    });
    this._managed = element('div', 'jp-vram-ClusterWorker-managed', {
      role: 'cluster-worker-managed'
    });
    this._gpus = element('div', 'jp-vram-ClusterWorker-gpus', {
      role: 'cluster-worker-gpus'
    });
    this._allocator = element('div', 'jp-vram-ClusterWorker-allocator', {
      role: 'cluster-worker-allocator'
    });
    node.append(
      head,
      this._where,
      this._bar,
      this._memory,
      this._managed,
      this._gpus,
      this._allocator
    );
  }

  readonly node: HTMLElement;

  /** Shows `w`, with its latest allocator reading; touches only what changed. */
  show(
    w: ClusterWorker,
    allocator: ClusterAllocatorReading | null,
    units: ByteUnits
  ): void {
    setData(this.node, 'vramWorkerId', w.id);
    setData(this.node, 'vramWorkerStatus', w.status);
    setText(this._name, workerName(w));
    setTitle(this._name, w.id);
    setText(this._status, w.status);
    this._status.classList.toggle(
      'jp-vram-warning',
      w.status !== 'running' && w.status !== 'ALIVE'
    );
    setText(this._where, workerWhere(w));
    setSegment(this._used, w.memory_bytes, w.memory_limit_bytes);
    setHidden(this._bar, w.memory_limit_bytes === null);
    const share = memoryShare(w);
    this._bar.classList.toggle(
      'jp-vram-warning',
      share !== null && share >= WARNING_SHARE
    );
    setText(this._memory, workerMemoryText(w, units));
    setTitle(this._memory, memorySourceText(w));
    setBytesData(this._memory, w.memory_bytes);
    const managed = managedText(w, units);
    setText(this._managed, managed);
    setHidden(this._managed, !managed);
    const gpus = gpusText(w, units);
    setText(this._gpus, gpus);
    setHidden(this._gpus, !gpus);
    const reading = allocatorText(allocator, units);
    setText(this._allocator, reading);
    setHidden(this._allocator, !reading);
  }

  private _name: HTMLElement;
  private _status: HTMLElement;
  private _where: HTMLElement;
  private _bar: HTMLElement;
  private _used: HTMLElement;
  private _memory: HTMLElement;
  private _managed: HTMLElement;
  private _gpus: HTMLElement;
  private _allocator: HTMLElement;
}
