/**
 * The timeline's title, such as "Last 5 min", in which the span is a choice
 * from 5 minutes to 24 hours, so that the user can look further back at
 * yesterday's run or at the process before a restart. The choice is the
 * `timelineWindowMinutes` setting, so that it is kept; this view only shows
 * it and reports what the user picked.
 */
import { element } from '../../ui/dom';
import { trans } from '../../text/translation';

/**
 * The spans, in minutes, that the picker offers. A span set another way,
 * such as in the settings editor, is added to them while it is chosen.
 */
export const TIMELINE_WINDOW_CHOICES: readonly number[] = [
  5, 30, 120, 720, 1440
];

/**
 * The timeline's title, which shows how much history the chart covers and,
 * where offered, lets the user choose it.
 */
export class TimelineWindowPicker {
  /**
   * `onPick` is called with the span, in minutes, that the user chose.
   * Without it, the title only shows the span and offers no choice.
   */
  constructor(onPick: ((minutes: number) => void) | null) {
    this.node = element('div', 'jp-vram-Section-title jp-vram-Timeline-title');
    this._onPick = onPick;
    if (onPick) {
      const label = element('label', 'jp-vram-Timeline-windowLabel', {
        text: trans.__('Last ')
      });
      this._select = element('select', 'jp-vram-Timeline-window', {
        role: 'timeline-window',
        title: trans.__('How much history the chart shows')
      });
      this._select.addEventListener('change', () => {
        const minutes = Number(this._select?.value);
        if (Number.isFinite(minutes) && minutes > 0) {
          this._onPick?.(minutes);
        }
      });
      label.appendChild(this._select);
      this.node.appendChild(label);
    }
  }

  readonly node: HTMLElement;

  /** Shows `minutes` as the chosen span; the options are rebuilt only when it changes. */
  show(minutes: number): void {
    const select = this._select;
    if (!select) {
      this.node.textContent = trans.__('Last %1', formatMinutes(minutes));
      return;
    }
    if (minutes === this._shown) {
      return;
    }
    this._shown = minutes;
    const choices = TIMELINE_WINDOW_CHOICES.includes(minutes)
      ? TIMELINE_WINDOW_CHOICES
      : [...TIMELINE_WINDOW_CHOICES, minutes].sort((a, b) => a - b);
    select.replaceChildren(
      ...choices.map(choice => {
        const option = document.createElement('option');
        option.value = String(choice);
        option.textContent = formatMinutes(choice);
        return option;
      })
    );
    select.value = String(minutes);
  }

  private _onPick: ((minutes: number) => void) | null;
  private _select: HTMLSelectElement | null = null;
  private _shown: number | null = null;
}

/**
 * Writes a span of minutes the way the timeline's title shows it ("30 s", "5
 * min", "2 h").
 */
export function formatMinutes(minutes: number): string {
  if (minutes < 1) {
    return `${Math.round(minutes * 60)} s`;
  }
  if (minutes >= 120 && minutes % 60 === 0) {
    return `${minutes / 60} h`;
  }
  return `${minutes} min`;
}
