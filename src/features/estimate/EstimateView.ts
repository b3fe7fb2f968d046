/**
 * The "Will it fit?" section of the Memory tab: a button that asks for an
 * estimate of a training step, its progress while the kernel traces it,
 * and its answer: the verdict, the card's budget, a row per batch size, the
 * breakdown of the peak at the sample's batch size, the remedies with a
 * button that inserts each one's cell, and what the figures assume. A
 * refusal names the operation and the line, and offers real steps where
 * the user did not agree to them yet.
 *
 * Everything from the kernel (names, messages, code lines) goes in as text.
 */
import { formatBytes, formatCount } from '../../text/format';
import { button, element } from '../../ui/dom';
import { LazyView } from '../../ui/LazyView';
import { trans } from '../../text/translation';
import type { EstimateRequestFields } from '../../kernel/connectionRequests';
import {
  BREAKDOWN_ROLES,
  EstimateMemoryResult,
  EstimateRow,
  EstimateVariant
} from '../../protocol/estimate';
import type { EstimateState, MemoryEstimate } from './MemoryEstimate';
import {
  cardSentence,
  failureSentences,
  progressText,
  roleLabel,
  variantLabel,
  variantSentence,
  verdictSentence
} from './estimateText';

/** The "Will it fit?" section. */
export class EstimateView extends LazyView {
  constructor(options: EstimateView.IOptions) {
    super(options.settings);
    this._options = options;
    this.addClass('jp-vram-EstimateView');
    this.node.dataset.vramRole = 'estimate-view';
    this.node.setAttribute('aria-live', 'polite');
  }

  /** The estimate of the kernel shown; null without one. */
  get estimate(): MemoryEstimate | null {
    return this._estimate;
  }

  set estimate(estimate: MemoryEstimate | null) {
    if (estimate === this._estimate) {
      return;
    }
    this._estimate?.changed.disconnect(this.requestRender, this);
    this._estimate = estimate;
    estimate?.changed.connect(this.requestRender, this);
    this.requestRender();
  }

  dispose(): void {
    this.estimate = null;
    super.dispose();
  }

  protected render(): void {
    const state = this._estimate?.state ?? null;
    const running = state?.status === 'running';
    const heading = element('h3', 'jp-vram-Estimate-heading', {
      text: trans.__('Will it fit?')
    });
    const start = button(
      'jp-mod-styled jp-vram-Estimate-run',
      {
        role: 'estimate-run',
        text: trans.__('Estimate a training step…'),
        title: trans.__(
          "Predict a training step's peak GPU memory and the largest batch size that fits, without allocating on the GPU"
        )
      },
      () => this._options.run()
    );
    start.disabled = !this._estimate?.canEstimate || running;
    const parts: HTMLElement[] = [heading, start];
    if (!this._estimate?.canEstimate) {
      parts.push(
        this._line(
          'estimate-unavailable',
          trans.__(
            'Open a notebook with a Python kernel to estimate a training step.'
          )
        )
      );
    } else if (state) {
      parts.push(...this._stateParts(state));
    }
    this.node.replaceChildren(...parts);
  }

  private _stateParts(state: EstimateState): HTMLElement[] {
    switch (state.status) {
      case 'idle':
        return [];
      case 'running':
        // The plain step's answer shows as soon as it is known, above the
        // progress of the remedies.
        return state.progress?.partial
          ? [
              ...this._resultParts(state.request, state.progress.partial),
              ...this._progressParts(state.progress)
            ]
          : this._progressParts(state.progress);
      case 'failed':
        return [
          this._line(
            'estimate-error',
            trans.__('The estimate failed: %1', state.error)
          )
        ];
      case 'done':
        return this._resultParts(state.request, state.result);
    }
  }

  private _progressParts(
    progress: { done: number; total: number; stage: string } | null
  ): HTMLElement[] {
    const bar = element('progress', 'jp-vram-Estimate-progress', {
      role: 'estimate-progress'
    });
    if (progress) {
      bar.max = progress.total;
      bar.value = Math.min(progress.done, progress.total);
    }
    return [bar, this._line('estimate-stage', progressText(progress))];
  }

  private _resultParts(
    request: EstimateRequestFields,
    result: EstimateMemoryResult
  ): HTMLElement[] {
    const units = this.settings.units;
    const parts = [
      this._line(
        'estimate-verdict',
        verdictSentence(result, units),
        'jp-vram-Estimate-verdict'
      )
    ];
    if (result.failure) {
      parts.push(this._failure(request, result));
    }
    if (result.card) {
      parts.push(this._line('estimate-card', cardSentence(result.card, units)));
    }
    if (result.rows.length) {
      parts.push(this._rows(result));
      const row = sampleRow(result);
      if (row) {
        parts.push(this._breakdown(row));
      }
    }
    if (result.variants.length) {
      parts.push(this._variants(result));
    }
    parts.push(this._notes(result));
    return parts;
  }

  private _failure(
    request: EstimateRequestFields,
    result: EstimateMemoryResult
  ): HTMLElement {
    const box = element('div', 'jp-vram-Estimate-failure', {
      role: 'estimate-failure'
    });
    for (const sentence of failureSentences(result.failure!)) {
      box.appendChild(
        element('p', 'jp-vram-Estimate-failureLine', { text: sentence })
      );
    }
    if (result.status === 'refused' && !request.real_step) {
      box.appendChild(
        button(
          'jp-mod-styled jp-vram-Estimate-realStep',
          {
            role: 'estimate-real-step',
            text: trans.__('Measure real steps instead…'),
            title: trans.__(
              'Runs one real training step at two small batch sizes on the model’s device, puts its state back, and extrapolates (asks first)'
            )
          },
          () => this._options.measureReal(request)
        )
      );
    }
    return box;
  }

  private _rows(result: EstimateMemoryResult): HTMLElement {
    const units = this.settings.units;
    const table = element('table', 'jp-vram-Estimate-rows', {
      role: 'estimate-rows'
    });
    const head = table.createTHead().insertRow();
    for (const title of [
      trans.__('Batch'),
      trans.__('Training'),
      trans.__('Eval'),
      trans.__('Fits')
    ]) {
      head.appendChild(element('th', '', { text: title }));
    }
    const body = table.createTBody();
    for (const row of result.rows) {
      const tr = body.insertRow();
      tr.dataset.vramBatch = String(row.batch_size);
      const cells = [
        formatCount(row.batch_size) + (row.traced ? '' : ' *'),
        formatBytes(row.train_peak_bytes, units),
        formatBytes(row.eval_peak_bytes, units),
        row.fits === null
          ? '\u2014'
          : row.fits
            ? trans.__('yes')
            : trans.__('no')
      ];
      for (const text of cells) {
        tr.appendChild(element('td', '', { text }));
      }
      if (row.fits === false) {
        tr.classList.add('jp-vram-mod-over');
      }
    }
    if (result.rows.some(r => !r.traced)) {
      const caption = table.createCaption();
      caption.textContent = trans.__(
        '* interpolated between the traced batch sizes'
      );
    }
    return table;
  }

  private _breakdown(row: EstimateRow): HTMLElement {
    const units = this.settings.units;
    const list = element('dl', 'jp-vram-Estimate-breakdown', {
      role: 'estimate-breakdown'
    });
    list.appendChild(
      element('dt', 'jp-vram-Estimate-breakdownTitle', {
        text: trans.__(
          'At batch size %1, the training peak holds:',
          row.batch_size
        )
      })
    );
    for (const role of BREAKDOWN_ROLES) {
      const item = element('dd', '', {
        role: `estimate-role-${role}`,
        text: `${roleLabel(role)}: ${formatBytes(row.breakdown[role], units)}`
      });
      list.appendChild(item);
    }
    return list;
  }

  private _variants(result: EstimateMemoryResult): HTMLElement {
    const list = element('ul', 'jp-vram-Estimate-variants', {
      role: 'estimate-variants'
    });
    for (const v of result.variants) {
      list.appendChild(this._variant(result, v));
    }
    return list;
  }

  private _variant(
    result: EstimateMemoryResult,
    v: EstimateVariant
  ): HTMLElement {
    const units = this.settings.units;
    const item = element('li', 'jp-vram-Estimate-variant', {
      role: 'estimate-variant'
    });
    item.dataset.vramVariant = v.variant;
    item.append(
      element('span', 'jp-vram-Estimate-variantName', {
        text: variantLabel(v.variant)
      }),
      element('span', 'jp-vram-Estimate-variantText', {
        text: variantSentence(v, result.sample_batch_size, units)
      })
    );
    if (v.applicable && v.largest_batch_size !== null) {
      item.appendChild(
        button(
          'jp-mod-styled jp-vram-Estimate-insert',
          {
            role: 'estimate-insert',
            text: trans.__('Insert cell'),
            title: trans.__(
              'Insert a training cell for this, with the batch size filled in'
            )
          },
          () => this._options.insert(v.variant)
        )
      );
    }
    return item;
  }

  private _notes(result: EstimateMemoryResult): HTMLElement {
    const list = element('ul', 'jp-vram-Estimate-notes', {
      role: 'estimate-notes'
    });
    const notes = [...result.notes];
    if (!result.state_unchanged) {
      notes.unshift(
        trans.__(
          'Warning: the estimate found the model’s or optimizer’s state changed; this is a bug of jupyterlab-vram, please report it.'
        )
      );
    }
    notes.push(
      trans.__(
        'Took %1 s (%2).',
        (result.elapsed_ms / 1000).toFixed(1),
        methodText(result)
      )
    );
    for (const note of notes) {
      list.appendChild(element('li', '', { text: note }));
    }
    return list;
  }

  private _line(
    role: string,
    text: string,
    className = 'jp-vram-Estimate-line'
  ): HTMLElement {
    return element('p', className, { role, text });
  }

  private _options: EstimateView.IOptions;
  private _estimate: MemoryEstimate | null = null;
}

/** The row at the sample's batch size, else the largest traced one. */
export function sampleRow(result: EstimateMemoryResult): EstimateRow | null {
  const rows = result.rows;
  return (
    rows.find(r => r.batch_size === result.sample_batch_size) ??
    [...rows].reverse().find(r => r.traced) ??
    rows[rows.length - 1] ??
    null
  );
}

function methodText(result: EstimateMemoryResult): string {
  switch (result.method) {
    case 'fake_tensors':
      return trans.__(
        'fake tensors on %1, nothing allocated',
        result.traced_on ?? '?'
      );
    case 'real_steps':
      return trans.__('measured real steps, extrapolated');
    default:
      return result.method;
  }
}

/** The options of an EstimateView. */
export namespace EstimateView {
  /** What the view needs. */
  export interface IOptions {
    settings?: import('../../settings/settings').VramSettings;
    /** Runs the estimate command (it asks for the names first). */
    run: () => void;
    /** Runs it again with real steps allowed (it asks first). */
    measureReal: (request: EstimateRequestFields) => void;
    /** Inserts the cell of one remedy of the shown estimate. */
    insert: (variant: string) => void;
  }
}
