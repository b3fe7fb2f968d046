/**
 * The timeline's switches for the GPU load lines: SM utilisation (percent,
 * on a right-hand axis) and power draw (watts, on another). They are off by
 * default, so that the memory lines keep the chart to themselves until a
 * user asks. The choice is kept by the view rather than in the settings, so
 * a reload forgets it.
 */
import { element } from '../../ui/dom';
import { trans } from '../../text/translation';

/** A load line the timeline can show per GPU. */
export type LoadLine = 'sm' | 'power';

/** Two checkboxes under the chart, one per load line. */
export class TimelineLoadToggles {
  /** Creates the checkboxes; `onChange` runs when the user switches a line on or off. */
  constructor(onChange: () => void) {
    this.node = element('div', 'jp-vram-Timeline-loadToggles', {
      role: 'timeline-load-toggles'
    });
    const labels: Record<LoadLine, [string, string]> = {
      sm: [
        trans.__('GPU utilisation'),
        trans.__(
          "Show each GPU's SM utilisation (percent, right-hand axis), from the samples this page received"
        )
      ],
      power: [
        trans.__('Power'),
        trans.__(
          "Show each GPU's power draw (watts, right-hand axis), from the samples this page received"
        )
      ]
    };
    for (const line of ['sm', 'power'] as const) {
      const [text, title] = labels[line];
      const label = element('label', 'jp-vram-Timeline-loadToggle', { title });
      const box = element('input', 'jp-vram-Timeline-loadCheckbox', {
        role: `timeline-load-${line}`
      });
      box.type = 'checkbox';
      box.addEventListener('change', () => {
        if (box.checked) {
          this._shown.add(line);
        } else {
          this._shown.delete(line);
        }
        onChange();
      });
      label.append(box, document.createTextNode(text));
      this.node.appendChild(label);
    }
  }

  readonly node: HTMLElement;

  /** The load lines switched on. */
  get shown(): ReadonlySet<LoadLine> {
    return this._shown;
  }

  private _shown = new Set<LoadLine>();
}
