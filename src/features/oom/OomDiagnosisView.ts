/**
 * The out-of-memory assistant at the top of the Memory tab. After a cell ran
 * out of memory, it says why, in words and with the figures, and offers the
 * ranked fixes, one button each. It shows the newest diagnosed cell of the
 * kernel process that is live now, until the user dismisses it, and is
 * hidden otherwise; the diagnosis of a restarted or dead kernel stays marked
 * in the Cells tab. The fixes leave out what this page has done since the
 * failure, such as holders it deleted or recording it turned on (see
 * OomProgress in oomActions.ts).
 *
 * Test hooks: `data-vram-role="oom-diagnosis"` (with `data-vram-record`),
 * `oom-headline`, `oom-cause` (with `data-vram-cause`), `oom-figures`,
 * `oom-action` (with `data-vram-action`), `oom-dismiss`, `oom-sites` and
 * its `oom-site` rows (the lines holding the most, with allocation recording on).
 */
import { CommandIDs } from '../../ui/commandIds';
import { formatBytes } from '../../text/format';
import { CellHistoryEntry } from '../../model/CellHistory';
import { cellIdsByCount, siteRow } from '../allocations/siteRows';
import { OomDiagnosis } from '../../protocol/oom';
import type {
  AllocationRecorder,
  AllocationRecorderChange
} from '../allocations/AllocationRecorder';
import type {
  MemoryActions,
  MemoryActionsChange
} from '../cleanup/MemoryActions';
import { oomActions, OomAction, OomProgress } from './oomActions';
import { explainOom, OomFigureKey } from './oomExplanation';
import { oomFiguresNow } from './oomNow';
import { VramSettings } from '../../settings/settings';
import { ModelChange } from '../../model/IKernelMemoryModel';
import {
  button,
  element,
  makeActivatable,
  setBytesData,
  setHidden,
  setText
} from '../../ui/dom';
import { ModelView } from '../../ui/ModelView';
import { follow } from '../../ui/follow';
import { trans } from '../../text/translation';

// A 'sample' change matters because the view shows the figures as they stand
// at the moment beside those at the failure.
const RELEVANT: ReadonlySet<ModelChange> = new Set<ModelChange>([
  'cells',
  'state',
  'sample'
]);

/**
 * The out-of-memory assistant, which explains why a cell ran out of memory and
 * offers the fixes as buttons.
 */
export class OomDiagnosisView extends ModelView {
  constructor(options: OomDiagnosisView.IOptions) {
    super(options.settings);
    this._run = options.run;
    this.addClass('jp-vram-OomDiagnosis');
    this.node.dataset.vramRole = 'oom-diagnosis';
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', trans.__('Out-of-memory diagnosis'));
  }

  protected readonly relevantChanges = RELEVANT;

  /**
   * The kernel's cleanup actions. A delete that they finish takes its names
   * and hidden holders out of the fixes offered, because those are gone
   * already.
   */
  get actions(): MemoryActions | null {
    return this._actions;
  }

  set actions(actions: MemoryActions | null) {
    if (actions === this._actions) {
      return;
    }
    this._actions = follow(
      this._actions,
      actions,
      this._onActionsChanged,
      this
    );
    // What the actions already did is not news, so only deletes that finish
    // after this point count.
    const result = actions?.lastOutcome?.result;
    if (result) {
      this._seen.add(result);
    }
  }

  /**
   * The kernel's allocation recording. Once it is on, "Record allocations" is
   * no longer offered.
   */
  get recorder(): AllocationRecorder | null {
    return this._recorder;
  }

  set recorder(recorder: AllocationRecorder | null) {
    if (recorder === this._recorder) {
      return;
    }
    this._recorder = follow(
      this._recorder,
      recorder,
      this._onRecorderChanged,
      this
    );
    this._progressVersion++;
    this.requestRender();
  }

  dispose(): void {
    this.actions = null;
    this.recorder = null;
    super.dispose();
  }

  protected onModelReplaced(): void {
    this._renderedKey = null;
    this._shown = undefined;
  }

  protected onModelChange(change: ModelChange): void {
    // A sample only moves the "now" figures. Which diagnosis is shown changes
    // with the records and the state, so only those make the view search the
    // records again.
    if (change !== 'sample') {
      this._shown = undefined;
    }
  }

  protected render(): void {
    if (this._shown === undefined) {
      this._shown = this._newestDiagnosed();
    }
    const entry = this._shown;
    setHidden(this.node, entry === null);
    const container = !!this.model?.latest?.host.container;
    // Every sample renders, so the key tells, without building anything,
    // whether the card must be rebuilt.
    const key = entry
      ? `${entry.key}:${this.settings.units}:${container}:${this._progressVersion}`
      : null;
    if (key === this._renderedKey) {
      this._renderNow();
      return;
    }
    this._renderedKey = key;
    this.node.replaceChildren();
    this._nowValues.clear();
    const diagnosis = entry?.record.oom;
    this._diagnosis = diagnosis ?? null;
    if (!entry || !diagnosis) {
      return;
    }
    const units = this.settings.units;
    const text = explainOom(
      diagnosis,
      units,
      entry.record.execution_count,
      container
    );
    this.node.dataset.vramRecord = entry.key;

    const header = element('div', 'jp-vram-OomDiagnosis-header');
    const headline = element('div', 'jp-vram-OomDiagnosis-headline', {
      role: 'oom-headline',
      text: text.headline
    });
    const dismiss = button(
      'jp-vram-OomDiagnosis-dismiss',
      {
        role: 'oom-dismiss',
        text: '\u00d7',
        title: trans.__('Dismiss this diagnosis')
      },
      () => {
        this._dismissed.add(entry);
        this._shown = undefined;
        this.requestRender();
      }
    );
    dismiss.setAttribute('aria-label', trans.__('Dismiss this diagnosis'));
    header.append(headline, dismiss);

    const causes = element('ul', 'jp-vram-OomDiagnosis-causes');
    for (const cause of text.causes) {
      const item = element('li', 'jp-vram-OomDiagnosis-cause', {
        role: 'oom-cause',
        text: cause.text
      });
      item.dataset.vramCause = cause.cause;
      causes.appendChild(item);
    }

    const caption = element('div', 'jp-vram-OomDiagnosis-figuresCaption', {
      role: 'oom-figures-caption',
      text: trans.__(
        'At the failure (under a figure, its value now, where the latest sample has it):'
      )
    });
    const figures = element('dl', 'jp-vram-OomDiagnosis-figures', {
      role: 'oom-figures'
    });
    for (const figure of text.figures) {
      const now = element('span', 'jp-vram-OomDiagnosis-now', {
        role: 'oom-figure-now'
      });
      now.dataset.vramFigure = figure.key;
      this._nowValues.set(figure.key, now);
      const value = element('dd', '', { text: figure.value });
      value.appendChild(now);
      figures.append(element('dt', '', { text: figure.label }), value);
    }

    const actions = element('ol', 'jp-vram-OomDiagnosis-actions');
    for (const action of oomActions(
      diagnosis,
      units,
      this._progressOf(entry)
    )) {
      actions.appendChild(this._actionItem(action));
    }
    this.node.append(
      header,
      causes,
      this._sites(diagnosis),
      actions,
      caption,
      figures
    );
    this._renderNow();
  }

  /**
   * Shows beside each figure at the failure the same figure as it is now, so
   * that what a fix gave back shows here. Where no sample reads the figure,
   * nothing is shown.
   */
  private _renderNow(): void {
    const diagnosis = this._diagnosis;
    if (!diagnosis) {
      return;
    }
    const now = oomFiguresNow(diagnosis, this.model?.latest ?? null);
    for (const [key, node] of this._nowValues) {
      const bytes = now[key];
      setText(
        node,
        bytes === undefined
          ? ''
          : trans.__('now %1', formatBytes(bytes, this.settings.units))
      );
      setBytesData(node, bytes ?? null);
    }
  }

  /**
   * The notebook lines that held the most at the failure, known when
   * allocation recording was on.
   */
  private _sites(diagnosis: OomDiagnosis): HTMLElement {
    const box = element('div', 'jp-vram-OomDiagnosis-sites', {
      role: 'oom-sites'
    });
    const found = diagnosis.allocation_sites;
    if (!found || !found.recording || found.sites.length === 0) {
      setHidden(box, true);
      return box;
    }
    box.appendChild(
      element('div', 'jp-vram-Holders-heading', {
        text: trans.__('Lines holding the most memory at the failure')
      })
    );
    const cellIds = cellIdsByCount(
      this.model?.cells.entries.map(e => e.record) ?? []
    );
    const list = element('ul', 'jp-vram-Holders-list');
    for (const site of found.sites) {
      const row = siteRow(site, cellIds);
      const item = element('li', 'jp-vram-Sites-row', { role: 'oom-site' });
      item.dataset.vramLine = String(row.line);
      setBytesData(item, row.bytes);
      const where = row.inNotebook
        ? row.label
        : trans.__('outside the notebook: %1', row.label);
      item.append(
        element('div', 'jp-vram-Sites-rowHead', {
          text: trans.__(
            '%1 — %2',
            where,
            formatBytes(row.bytes, this.settings.units)
          )
        })
      );
      if (row.code !== null) {
        item.appendChild(
          element('code', 'jp-vram-Sites-code', { text: row.code })
        );
      }
      if (
        row.inNotebook &&
        (row.cellId !== null || row.executionCount !== null)
      ) {
        item.classList.add('jp-vram-Sites-jump');
        item.title = trans.__('Go to this line');
        makeActivatable(
          item,
          () =>
            void this._run({
              id: 'go-to-line',
              label: trans.__('Go to this line'),
              gain: '',
              steps: [
                {
                  command: CommandIDs.goToCellLine,
                  args: {
                    cellId: row.cellId,
                    executionCount: row.executionCount,
                    line: row.line
                  }
                }
              ]
            })
        );
      }
      list.appendChild(item);
    }
    box.appendChild(list);
    return box;
  }

  private _actionItem(action: OomAction): HTMLElement {
    const item = element('li', 'jp-vram-OomDiagnosis-action');
    const run = button(
      'jp-mod-styled jp-vram-OomAction',
      { role: 'oom-action', text: action.label, title: action.gain },
      () => void this._run(action)
    );
    run.dataset.vramAction = action.id;
    const gain = element('div', 'jp-vram-OomDiagnosis-gain', {
      text: action.gain
    });
    item.append(run, gain);
    return item;
  }

  /** What has been done since the failure of `entry`, as the actions should know it. */
  private _progressOf(entry: CellHistoryEntry | null): OomProgress {
    const done = entry ? this._done.get(entry) : undefined;
    return {
      deletedNames: done?.names ?? new Set(),
      clearedHidden: done?.hidden ?? new Set(),
      recording: this._recorder?.enabled ?? false
    };
  }

  private _onActionsChanged(_: unknown, change: MemoryActionsChange): void {
    const outcome = this._actions?.lastOutcome;
    const entry =
      this._shown === undefined ? this._newestDiagnosed() : this._shown;
    if (
      change !== 'outcome' ||
      !entry ||
      !outcome ||
      outcome.kind !== 'delete' ||
      outcome.status !== 'done'
    ) {
      return;
    }
    const result = outcome.result;
    // An outcome worded again in new units is not a new delete, so each reply
    // counts only once.
    if (!result || !('deleted' in result) || this._seen.has(result)) {
      return;
    }
    this._seen.add(result);
    let done = this._done.get(entry);
    if (!done) {
      done = { names: new Set(), hidden: new Set() };
      this._done.set(entry, done);
    }
    result.deleted.forEach(name => done!.names.add(name));
    result.cleared.forEach(holder => done!.hidden.add(holder));
    this._progressVersion++;
    this.requestRender();
  }

  private _onRecorderChanged(
    _: AllocationRecorder,
    change: AllocationRecorderChange
  ): void {
    if (change === 'recording' || change === 'available') {
      this._progressVersion++;
      this.requestRender();
    }
  }

  private _newestDiagnosed(): CellHistoryEntry | null {
    const model = this.model;
    if (!model || model.state !== 'live') {
      // The process that failed may be gone, or it is not answering.
      return null;
    }
    const entries = model.cells.entries;
    const session = model.cells.session;
    for (
      let i = entries.length - 1;
      i >= 0 && entries[i].session === session;
      i--
    ) {
      const entry = entries[i];
      if (entry.record.oom) {
        return this._dismissed.has(entry) ? null : entry;
      }
    }
    return null;
  }

  private _run: (action: OomAction) => Promise<void> | void;
  /**
   * The dismissed entries. Entries are kept rather than keys, because a key
   * is unique only within its model, and the view shows the model of
   * whichever notebook is active.
   */
  private _dismissed = new WeakSet<CellHistoryEntry>();
  private _renderedKey: string | null = null;
  /**
   * The diagnosed record shown, or null when none is. It is undefined until
   * the view looks for it again.
   */
  private _shown: CellHistoryEntry | null | undefined = undefined;
  private _diagnosis: OomDiagnosis | null = null;
  private _actions: MemoryActions | null = null;
  private _recorder: AllocationRecorder | null = null;
  /**
   * For each diagnosed entry, the names deleted and the hidden holders
   * cleared since, by this page's deletes.
   */
  private _done = new WeakMap<
    CellHistoryEntry,
    { names: Set<string>; hidden: Set<string> }
  >();
  /**
   * The cleanup replies already taken into account, or older than the moment
   * the actions were attached.
   */
  private _seen = new WeakSet<object>();
  /**
   * Goes up when what has been done since the failure may have changed. It is
   * part of the render key, so that the card is then rebuilt.
   */
  private _progressVersion = 0;
  /** The "now" part of each figure shown. */
  private _nowValues = new Map<OomFigureKey, HTMLElement>();
}

/** The types that go with OomDiagnosisView. */
export namespace OomDiagnosisView {
  /** The options a new OomDiagnosisView is constructed with. */
  export interface IOptions {
    settings: VramSettings;
    /** Run an action's steps (commands) in order. */
    run: (action: OomAction) => Promise<void> | void;
  }
}
