/**
 * One process in the Processes tab: its role, pid and age with a Stop
 * button on the first line, its command, its memory (host, with the measure
 * named, and each GPU), and the cell that started it with a mark when it
 * outlived that cell. A plain DOM component that ProcessesView owns, keyed
 * by pid and start time so that its button survives from sample to sample.
 *
 * The command and the process name come from the kernel: text only.
 */
import type { ByteUnits } from '../../text/format';
import {
  button,
  element,
  setData,
  setHidden,
  setText,
  setTitle
} from '../../ui/dom';
import { trans } from '../../text/translation';
import type { ProcessOrigin } from './processOrigin';
import {
  ageText,
  gpuMemoryText,
  hostMemoryText,
  hostMemoryTitle,
  originText,
  originTitle,
  outlivedCell,
  outlivedText,
  outlivedTitle,
  roleText,
  roleTitle,
  rssOnly
} from './processText';
import type { TrackedProcess } from './ProcessTracker';

/** What a row shows besides its process. */
export interface ProcessRowContext {
  origin: ProcessOrigin | null;
  /** Seconds since it was first seen, by the kernel's clock. */
  ageS: number;
  stopping: boolean;
  /** Whether this page can stop it (the connection can). */
  canStop: boolean;
  units: ByteUnits;
}

/** One process of the list, with its Stop button. */
export class ProcessRow {
  /** `stop`: the Stop button was pressed for the process shown. */
  constructor(stop: (p: TrackedProcess) => void) {
    const node = (this.node = element('li', 'jp-vram-Process', {
      role: 'process-row'
    }));
    const head = element('div', 'jp-vram-Process-head');
    this._role = element('span', 'jp-vram-Process-role', {
      role: 'process-role'
    });
    this._pid = element('span', 'jp-vram-Process-pid', { role: 'process-pid' });
    this._age = element('span', 'jp-vram-Process-age', { role: 'process-age' });
    this._stop = button(
      'jp-vram-Button jp-vram-Process-stop',
      { role: 'process-stop', text: trans.__('Stop\u2026') },
      () => this._process && stop(this._process)
    );
    head.append(this._role, this._pid, this._age, this._stop);
    this._command = element('div', 'jp-vram-Process-command', {
      role: 'process-command'
    });
    const memory = element('div', 'jp-vram-Process-memory');
    this._host = element('span', 'jp-vram-Process-host', {
      role: 'process-host'
    });
    this._gpus = element('span', 'jp-vram-Process-gpus', {
      role: 'process-gpus'
    });
    memory.append(this._host, this._gpus);
    const cell = element('div', 'jp-vram-Process-cell');
    this._origin = element('span', 'jp-vram-Process-origin', {
      role: 'process-origin'
    });
    this._outlived = element('span', 'jp-vram-Process-outlived', {
      role: 'process-outlived'
    });
    cell.append(this._origin, this._outlived);
    node.append(head, this._command, memory, cell);
  }

  readonly node: HTMLElement;

  /** Show `p`; touches only what changed. */
  show(p: TrackedProcess, context: ProcessRowContext): void {
    this._process = p;
    const { process, key } = p;
    const { units, origin } = context;
    const node = this.node;
    setData(node, 'vramPid', String(process.pid));
    setData(node, 'vramStartTime', String(process.start_time));
    setData(node, 'vramKey', key);
    setData(node, 'vramProcessRole', process.role);
    node.style.setProperty(
      '--jp-vram-process-depth',
      String(process.depth - 1)
    );
    setText(
      this._role,
      roleText(process.role) + (process.role_guess ? '?' : '')
    );
    setTitle(this._role, roleTitle(process));
    setText(this._pid, trans.__('pid %1', process.pid));
    setText(this._age, ageText(context.ageS, p.seen.preexisting));
    setTitle(
      this._age,
      p.seen.preexisting
        ? trans.__('Running since before this page watched the kernel')
        : trans.__('Time since it was first seen')
    );
    setText(this._command, process.command || process.name);
    setTitle(this._command, process.command || process.name);
    this._showMemory(p, units);
    setText(this._origin, trans.__('Started by: %1', originText(origin)));
    setTitle(this._origin, originTitle(origin));
    const outlived = outlivedCell(origin, process.role);
    setHidden(this._outlived, !outlived);
    setText(this._outlived, outlived ? outlivedText(origin!) : '');
    setTitle(this._outlived, outlived ? outlivedTitle(origin!) : '');
    setData(node, 'vramOutlived', String(outlived));
    this._stop.disabled = context.stopping || !context.canStop;
    setText(
      this._stop,
      context.stopping ? trans.__('Stopping\u2026') : trans.__('Stop\u2026')
    );
    setTitle(
      this._stop,
      trans.__(
        'Stop pid %1 (asks first): SIGTERM, then SIGKILL if it has not ended',
        process.pid
      )
    );
  }

  private _showMemory(p: TrackedProcess, units: ByteUnits): void {
    const host = p.process.host;
    setText(this._host, hostMemoryText(host, units));
    setTitle(this._host, hostMemoryTitle(host, units));
    setData(
      this._host,
      'vramBytes',
      host.host_bytes === null ? null : String(host.host_bytes)
    );
    setData(this._host, 'vramMeasure', host.measure);
    this._host.classList.toggle('jp-vram-Process-rssOnly', rssOnly(host));
    const gpus = gpuMemoryText(p.process.gpus, units);
    setText(this._gpus, gpus);
    setHidden(this._gpus, !gpus);
  }

  private _process: TrackedProcess | null = null;
  private _role: HTMLElement;
  private _pid: HTMLElement;
  private _age: HTMLElement;
  private _stop: HTMLButtonElement;
  private _command: HTMLElement;
  private _host: HTMLElement;
  private _gpus: HTMLElement;
  private _origin: HTMLElement;
  private _outlived: HTMLElement;
}
