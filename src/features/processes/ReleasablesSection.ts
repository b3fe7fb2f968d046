/**
 * The part of the Processes tab that lists what the kernel started through
 * an engine and can release (a Dask cluster, a Ray runtime, a pool, a
 * DataLoader iterator's workers, a vLLM engine), each with what it holds
 * and a Release button, and under them how the last release went. A plain
 * DOM component that ProcessesView owns; rows are keyed by kind and name so
 * that their buttons survive a new list.
 *
 * The label and the name come from the kernel: text only.
 */
import type { ByteUnits } from '../../text/format';
import type { Releasable } from '../../protocol/release';
import {
  button,
  element,
  setData,
  setHidden,
  setText,
  setTitle,
  syncKeyedChildren
} from '../../ui/dom';
import { trans } from '../../text/translation';
import { EngineReleases, releasableKey } from './EngineReleases';
import {
  releasableHoldsText,
  releasableName,
  releaseLines,
  releaseStepsText
} from './releaseText';

/** One releasable, with its Release button. */
class ReleasableRow {
  constructor(release: (r: Releasable) => void) {
    this.node = element('li', 'jp-vram-Releasable', { role: 'releasable-row' });
    const head = element('div', 'jp-vram-Releasable-head');
    this._name = element('span', 'jp-vram-Releasable-name', {
      role: 'releasable-name'
    });
    this._button = button(
      'jp-vram-Button jp-vram-Releasable-release',
      { role: 'releasable-release', text: trans.__('Release\u2026') },
      () => this._releasable && release(this._releasable)
    );
    head.append(this._name, this._button);
    this._label = element('div', 'jp-vram-Releasable-label', {
      role: 'releasable-label'
    });
    this._holds = element('div', 'jp-vram-Releasable-holds', {
      role: 'releasable-holds'
    });
    this.node.append(head, this._label, this._holds);
  }

  readonly node: HTMLElement;

  /** Shows `r`; `busy` while a release is on its way. */
  show(r: Releasable, busy: boolean, units: ByteUnits): void {
    this._releasable = r;
    setData(this.node, 'vramKind', r.kind);
    setData(this.node, 'vramName', r.name);
    setText(this._name, releasableName(r));
    setText(this._label, r.label);
    setText(this._holds, releasableHoldsText(r, units));
    setData(
      this._holds,
      'vramBytes',
      r.host_bytes === null ? null : String(r.host_bytes)
    );
    this._button.disabled = busy;
    setTitle(this._button, releaseStepsText(r.kind));
  }

  private _releasable: Releasable | null = null;
  private _name: HTMLElement;
  private _label: HTMLElement;
  private _holds: HTMLElement;
  private _button: HTMLButtonElement;
}

/** The releasables of the active kernel and the outcome of the last release. */
export class ReleasablesSection {
  /** `release`: a Release button was pressed (runs the release command, which asks first). */
  constructor(release: (r: Releasable) => void) {
    this._release = release;
    this.node = element('section', 'jp-vram-Releasables', {
      role: 'releasables'
    });
    const heading = element('div', 'jp-vram-Releasables-heading', {
      text: trans.__('Started through an engine')
    });
    heading.title = trans.__(
      'Deleting a name in the notebook does not end these processes; Release ends them the way each engine documents.'
    );
    this._list = element('ul', 'jp-vram-Releasables-list', {
      role: 'releasables-list'
    });
    this._list.setAttribute('aria-label', trans.__('What can be released'));
    this._error = element('div', 'jp-vram-Releasables-error', {
      role: 'releasables-error'
    });
    this._outcome = element('div', 'jp-vram-Releasables-outcome', {
      role: 'release-outcome'
    });
    this._outcome.setAttribute('aria-live', 'polite');
    this.node.append(heading, this._list, this._error, this._outcome);
  }

  readonly node: HTMLElement;

  /** Shows the kernel's releasables; null without a kernel. */
  show(engines: EngineReleases | null, units: ByteUnits): void {
    const list = engines?.canRelease ? engines.releasables : [];
    const busy = engines?.isReleasing ?? false;
    syncKeyedChildren(
      this._list,
      this._rows,
      list,
      releasableKey,
      () => new ReleasableRow(this._release),
      (row, r) => row.show(r, busy, units)
    );
    const error = engines?.listError ?? null;
    setText(
      this._error,
      error
        ? trans.__('The kernel did not say what it can release: %1', error)
        : ''
    );
    setHidden(this._error, !error);
    this._showOutcome(engines, units);
    setData(this.node, 'vramReleasableCount', String(list.length));
    setHidden(this.node, !list.length && !error && !engines?.lastRelease);
  }

  private _showOutcome(engines: EngineReleases | null, units: ByteUnits): void {
    const state = engines?.lastRelease ?? null;
    this._outcome.replaceChildren();
    setHidden(this._outcome, !state);
    setData(this._outcome, 'vramStatus', state?.status ?? null);
    setData(
      this._outcome,
      'vramOutcome',
      state?.status === 'done' ? state.outcome.outcome : null
    );
    if (!state) {
      return;
    }
    for (const line of releaseLines(state, units)) {
      this._outcome.append(
        element('div', 'jp-vram-Releasables-outcomeLine', { text: line })
      );
    }
  }

  private _release: (r: Releasable) => void;
  private _rows = new Map<string, ReleasableRow>();
  private _list: HTMLElement;
  private _error: HTMLElement;
  private _outcome: HTMLElement;
}
