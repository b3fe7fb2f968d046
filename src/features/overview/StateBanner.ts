/**
 * The top of the sidebar, which says where monitoring stands (and why, when
 * it is not live), whether the kernel is busy, and the visibility notes.
 */
import { describeState, MonitorState } from '../../model/MonitorState';
import { ModelChange } from '../../model/IKernelMemoryModel';
import { element, setHidden, setText } from '../../ui/dom';
import { ModelView } from '../../ui/ModelView';
import { trans } from '../../text/translation';

const RELEVANT: ReadonlySet<ModelChange> = new Set<ModelChange>([
  'state',
  'busy',
  'notes'
]);

/** The banner at the top of the sidebar that says where monitoring stands. */
export class StateBanner extends ModelView {
  constructor(settings: ConstructorParameters<typeof ModelView>[0]) {
    super(settings);
    this.addClass('jp-vram-StateBanner');
    this._state = element('div', 'jp-vram-State', { role: 'state' });
    // A change of state ("Helper failed") comes unasked: a screen reader
    // should hear it without leaving what the user is doing.
    this._state.setAttribute('role', 'status');
    this._state.setAttribute('aria-live', 'polite');
    this._busy = element('div', 'jp-vram-Busy', { role: 'kernel-busy' });
    this._busy.hidden = true;
    this._notes = element('ul', 'jp-vram-Notes');
    this.node.append(this._state, this._busy, this._notes);
  }

  protected readonly relevantChanges = RELEVANT;

  protected render(): void {
    const model = this.model;
    const state: MonitorState = model ? model.state : 'no-notebook';
    const reason = model ? model.stateReason : describeState('no-notebook');
    if (this._state.dataset.vramState !== state) {
      this._state.dataset.vramState = state;
    }
    setText(this._state, reason);
    this._state.classList.toggle(
      'jp-vram-State-problem',
      state === 'helper-failed' ||
        state === 'protocol-mismatch' ||
        state === 'disconnected'
    );

    const busy = !!model?.kernelBusy;
    setHidden(this._busy, !busy);
    if (busy) {
      setText(
        this._busy,
        state === 'live'
          ? trans.__('Kernel busy \u2014 figures are still live.')
          : model?.kernelBusyWith === 'helper'
            ? // No cell is running: the kernel is busy starting the helper that
              // this page sent it.
              trans.__(
                'Kernel busy starting the memory helper \u2014 requests wait until it is running.'
              )
            : trans.__(
                'Kernel busy \u2014 requests wait until the running cell finishes.'
              )
      );
    }

    // There are only a few notes, so rebuilding the list on every change is
    // simpler than patching it and costs nothing noticeable.
    const notes = model ? model.notes : [];
    this._notes.replaceChildren(
      ...notes.map(note => {
        const item = element(
          'li',
          `jp-vram-Note jp-vram-Note-${note.severity}`,
          { role: 'note', text: note.text }
        );
        item.dataset.vramNote = note.id;
        return item;
      })
    );
  }

  private _state: HTMLElement;
  private _busy: HTMLElement;
  private _notes: HTMLElement;
}
