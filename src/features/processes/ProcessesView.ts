/**
 * The Processes tab: every process the active notebook's kernel started
 * (DataLoader workers, pools, engines, `subprocess` commands), with its
 * memory, its age, the cell that started it and a Stop button; above them,
 * the kernel and its processes together, how the last stop went, and what
 * the kernel started through an engine with a Release button each.
 *
 * It follows the kernel's model (for the state), its ProcessTracker (the
 * list) and the tracker's EngineReleases; the Stop and Release buttons run
 * their commands, which ask first.
 */
import { formatBytes } from '../../text/format';
import type {
  IKernelMemoryModel,
  ModelChange
} from '../../model/IKernelMemoryModel';
import {
  element,
  setData,
  setHidden,
  setText,
  syncKeyedChildren
} from '../../ui/dom';
import { ModelView } from '../../ui/ModelView';
import { trans } from '../../text/translation';
import type { Releasable } from '../../protocol/release';
import type { EngineReleasesChange } from './EngineReleases';
import { ProcessRow } from './ProcessRow';
import { ReleasablesSection } from './ReleasablesSection';
import type {
  ProcessTracker,
  ProcessTrackerChange,
  TrackedProcess
} from './ProcessTracker';
import { stopLines } from './stopText';

const RELEVANT: ReadonlySet<ModelChange> = new Set<ModelChange>(['state']);

/** The list of the active kernel's processes. */
export class ProcessesView extends ModelView {
  constructor(options: ProcessesView.IOptions) {
    super(options.settings);
    this._stop = options.stop;
    this._releasables = new ReleasablesSection(options.release);
    this.addClass('jp-vram-ProcessesView');
    this.node.dataset.vramRole = 'processes-view';
    this._summary = element('div', 'jp-vram-Processes-summary', {
      role: 'processes-summary'
    });
    this._outcome = element('div', 'jp-vram-Processes-outcome', {
      role: 'process-stop-outcome'
    });
    this._outcome.setAttribute('aria-live', 'polite');
    this._message = element('div', 'jp-vram-Processes-message', {
      role: 'processes-message'
    });
    this._list = element('ul', 'jp-vram-Processes-list', {
      role: 'processes-list'
    });
    this._list.setAttribute('aria-label', trans.__("The kernel's processes"));
    this.node.append(
      this._summary,
      this._outcome,
      this._releasables.node,
      this._message,
      this._list
    );
  }

  protected readonly relevantChanges = RELEVANT;

  /** The tracker of the model's kernel; null while none (its code loads with the first kernel). */
  get tracker(): ProcessTracker | null {
    return this._tracker;
  }

  set tracker(tracker: ProcessTracker | null) {
    if (tracker === this._tracker) {
      return;
    }
    this._tracker?.changed.disconnect(this._onTrackerChanged, this);
    this._tracker?.engines.changed.disconnect(this._onEnginesChanged, this);
    this._tracker = tracker;
    tracker?.changed.connect(this._onTrackerChanged, this);
    tracker?.engines.changed.connect(this._onEnginesChanged, this);
    this.requestRender();
  }

  dispose(): void {
    this.tracker = null;
    super.dispose();
  }

  protected render(): void {
    const tracker = this._tracker;
    const message = this._messageText(this.model, tracker);
    setText(this._message, message);
    setHidden(this._message, !message);
    const processes = message ? [] : (tracker?.processes ?? []);
    this._renderSummary(tracker, processes.length);
    this._renderOutcome(tracker);
    const units = this.settings.units;
    // How the last release went stays in view when it ended every process,
    // while the list above says that none is left.
    this._releasables.show(tracker?.supported ? tracker.engines : null, units);
    const readAt = tracker?.readAt ?? 0;
    syncKeyedChildren(
      this._list,
      this._rows,
      processes,
      p => p.key,
      () => new ProcessRow(p => this._stop(p)),
      (row, p) =>
        row.show(p, {
          origin: tracker!.origin(p),
          ageS: readAt - p.seen.at,
          stopping: tracker!.isStopping(p.key),
          canStop: tracker!.canStop,
          units
        })
    );
    setData(this.node, 'vramProcessCount', String(processes.length));
  }

  /** Why there is no list, or '' when there is one. */
  private _messageText(
    model: IKernelMemoryModel | null,
    tracker: ProcessTracker | null
  ): string {
    if (!model) {
      return trans.__("Open a notebook to see its kernel's processes.");
    }
    if (!tracker || tracker.supported === null) {
      // No figures yet: a kernel without the helper (another language, a
      // failed start) says why in its state's sentence.
      return model.state === 'live' || !model.stateReason
        ? trans.__("Waiting for the kernel's first figures\u2026")
        : model.stateReason;
    }
    if (!tracker.supported) {
      return trans.__(
        'The helper of this kernel does not report processes (an older helper, or a system without /proc).'
      );
    }
    if (!tracker.processes.length) {
      return trans.__(
        'The kernel has no process of its own running: none that a cell started (a DataLoader worker, a pool, a subprocess) is alive.'
      );
    }
    return '';
  }

  private _renderSummary(tracker: ProcessTracker | null, count: number): void {
    const totals = tracker?.totals ?? null;
    setHidden(this._summary, !totals || count === 0);
    if (!totals || count === 0) {
      return;
    }
    const units = this.settings.units;
    const parts = [
      trans._n(
        'Kernel + %1 process: %2 RAM',
        'Kernel + %1 processes: %2 RAM',
        count,
        formatBytes(totals.host_bytes, units)
      )
    ];
    for (const gpu of totals.gpus) {
      if (gpu.processes_used_bytes) {
        parts.push(
          trans.__('GPU %1: %2', gpu.index, formatBytes(gpu.used_bytes, units))
        );
      }
    }
    setText(this._summary, parts.join('; '));
    this._summary.title = trans.__(
      "The kernel's RSS plus each process's USS (its RSS where only that is known): a page shared with the kernel is counted once."
    );
  }

  private _renderOutcome(tracker: ProcessTracker | null): void {
    const stop = tracker?.lastStop ?? null;
    setHidden(this._outcome, !stop);
    this._outcome.replaceChildren();
    if (!stop) {
      return;
    }
    setData(this._outcome, 'vramStatus', stop.status);
    setData(
      this._outcome,
      'vramOutcome',
      stop.status === 'done' ? stop.result.outcome : null
    );
    for (const line of stopLines(stop, this.settings.units)) {
      this._outcome.append(
        element('div', 'jp-vram-Processes-outcomeLine', { text: line })
      );
    }
    // The helper's own sentence (kernel text) stays available, untranslated.
    this._outcome.title =
      stop.status === 'done' ? (stop.result.reason ?? '') : '';
  }

  private _onTrackerChanged(
    _: ProcessTracker,
    change: ProcessTrackerChange
  ): void {
    void change;
    this.requestRender();
  }

  private _onEnginesChanged(_: unknown, change: EngineReleasesChange): void {
    void change;
    this.requestRender();
  }

  private _stop: (p: TrackedProcess) => void;
  private _releasables: ReleasablesSection;
  private _tracker: ProcessTracker | null = null;
  private _rows = new Map<string, ProcessRow>();
  private _summary: HTMLElement;
  private _outcome: HTMLElement;
  private _message: HTMLElement;
  private _list: HTMLElement;
}

/** The types of the ProcessesView class. */
export namespace ProcessesView {
  /** What a ProcessesView is made with. */
  export interface IOptions {
    settings: ConstructorParameters<typeof ModelView>[0];
    /** The Stop button of a row was pressed (runs the stop command, which asks first). */
    stop: (p: TrackedProcess) => void;
    /** The Release button of an engine was pressed (runs the release command, which asks first). */
    release: (r: Releasable) => void;
  }
}
