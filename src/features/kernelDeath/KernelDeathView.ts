/**
 * The "The kernel died" panel, which says what the kernel's last figures
 * suggest and which cell was running, as `explainKernelDeath` words it. It
 * is shown until the user restarts or changes the kernel. Everything goes
 * into the DOM as text.
 */
import { explainKernelDeath } from '../../model/kernelDeath';
import { ModelChange } from '../../model/IKernelMemoryModel';
import { element, setHidden, setText } from '../../ui/dom';
import { ModelView } from '../../ui/ModelView';
import { trans } from '../../text/translation';

const RELEVANT: ReadonlySet<ModelChange> = new Set<ModelChange>(['death']);

/**
 * The panel that explains why the kernel died, shown until the user restarts or
 * changes the kernel.
 */
export class KernelDeathView extends ModelView {
  constructor(settings: ConstructorParameters<typeof ModelView>[0]) {
    super(settings);
    this.addClass('jp-vram-KernelDeath');
    this.node.dataset.vramRole = 'kernel-death';
    this.node.setAttribute('role', 'status');
    const title = element('div', 'jp-vram-KernelDeath-title', {
      text: trans.__('The kernel died')
    });
    this._summary = element('div', 'jp-vram-KernelDeath-summary', {
      role: 'kernel-death-summary'
    });
    this._cell = element('div', 'jp-vram-KernelDeath-cell', {
      role: 'kernel-death-cell'
    });
    this._details = element('ul', 'jp-vram-KernelDeath-details');
    this.node.append(title, this._summary, this._cell, this._details);
  }

  protected readonly relevantChanges = RELEVANT;

  protected render(): void {
    const death = this.model?.death ?? null;
    setHidden(this.node, death === null);
    if (!death) {
      delete this.node.dataset.vramVerdict;
      return;
    }
    const explanation = explainKernelDeath(death, this.settings.units);
    this.node.dataset.vramVerdict = explanation.verdict;
    setText(this._summary, explanation.summary);
    setText(this._cell, explanation.cellText);
    setHidden(this._cell, !explanation.cellText);
    const lines = explanation.details;
    while (this._details.children.length > lines.length) {
      this._details.lastElementChild!.remove();
    }
    lines.forEach((line, i) => {
      const item =
        (this._details.children[i] as HTMLElement | undefined) ??
        this._details.appendChild(element('li', ''));
      setText(item, line);
    });
  }

  private _summary: HTMLElement;
  private _cell: HTMLElement;
  private _details: HTMLElement;
}
