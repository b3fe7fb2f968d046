/** The "Will it fit?" section: its button, progress, answer, refusal and buttons; kernel text as text. */
import { Signal } from '@lumino/signaling';

import {
  makeEstimateResult,
  makeRefusal
} from '../../testing/estimateFixtures';
import type { EstimateState, MemoryEstimate } from './MemoryEstimate';
import { EstimateView, sampleRow } from './EstimateView';

function fakeEstimate(state: EstimateState, canEstimate = true) {
  const changed = new Signal<object, EstimateState>({});
  const fake = { state, canEstimate, changed };
  return {
    estimate: fake as unknown as MemoryEstimate,
    set: (next: EstimateState) => {
      fake.state = next;
      changed.emit(next);
    }
  };
}

function setup(state: EstimateState, canEstimate = true) {
  const run = jest.fn();
  const measureReal = jest.fn();
  const insert = jest.fn();
  const view = new EstimateView({ run, measureReal, insert });
  const fake = fakeEstimate(state, canEstimate);
  view.estimate = fake.estimate;
  view.renderNow();
  const q = (role: string) =>
    view.node.querySelector<HTMLElement>(`[data-vram-role="${role}"]`);
  const all = (role: string) =>
    Array.from(
      view.node.querySelectorAll<HTMLElement>(`[data-vram-role="${role}"]`)
    );
  return { view, run, measureReal, insert, q, all, ...fake };
}

const REQUEST = { model: 'net', batch: 'batch' };

describe('EstimateView', () => {
  it('offers the estimate, and runs the command', () => {
    const { q, run } = setup({ status: 'idle' });
    const start = q('estimate-run') as HTMLButtonElement;
    expect(start.disabled).toBe(false);
    start.click();
    expect(run).toHaveBeenCalled();
  });

  it('says what is missing without a Python kernel', () => {
    const { q } = setup({ status: 'idle' }, false);
    expect((q('estimate-run') as HTMLButtonElement).disabled).toBe(true);
    expect(q('estimate-unavailable')!.textContent).toContain('Python kernel');
  });

  it('shows the progress while it runs', () => {
    const { q, view, set } = setup({
      status: 'running',
      request: REQUEST,
      progress: null
    });
    expect(q('estimate-stage')!.textContent).toContain(
      'once the running cell ends'
    );
    expect((q('estimate-run') as HTMLButtonElement).disabled).toBe(true);
    set({
      status: 'running',
      request: REQUEST,
      progress: { stage: 'tracing batch size 64', done: 2, total: 5 }
    });
    view.renderNow();
    const bar = q('estimate-progress') as HTMLProgressElement;
    expect([bar.value, bar.max]).toEqual([2, 5]);
    expect(q('estimate-stage')!.textContent).toBe(
      'tracing batch size 64 (2 of 5)'
    );
  });

  it('shows the plain answer while the remedies are traced', () => {
    const { q, all } = setup({
      status: 'running',
      request: REQUEST,
      progress: {
        stage: 'tracing the amp_bf16 step at batch size 64',
        done: 4,
        total: 6,
        partial: makeEstimateResult({
          variants: [makeEstimateResult().variants[0]]
        })
      }
    });
    expect(q('estimate-verdict')!.textContent).toContain(
      'The largest batch size that fits: 7,000'
    );
    expect(all('estimate-variant')).toHaveLength(1);
    expect(q('estimate-stage')!.textContent).toBe(
      'tracing the amp_bf16 step at batch size 64 (4 of 6)'
    );
  });

  it('shows the answer: verdict, card, rows, breakdown, remedies and notes', () => {
    const { q, all, insert } = setup({
      status: 'done',
      request: REQUEST,
      result: makeEstimateResult()
    });
    expect(q('estimate-verdict')!.textContent).toContain(
      'The largest batch size that fits: 7,000'
    );
    expect(q('estimate-card')!.textContent).toContain('124 GiB for the step');
    const rows = Array.from(
      q('estimate-rows')!.querySelectorAll('tbody tr')
    ).map(r => Array.from(r.querySelectorAll('td')).map(td => td.textContent));
    expect(rows).toEqual([
      ['32', '2.5 GiB', '1 GiB', 'yes'],
      ['64', '3 GiB', '1 GiB', 'yes'],
      ['128 *', '4 GiB', '1 GiB', 'yes']
    ]);
    expect(q('estimate-rows')!.querySelector('caption')!.textContent).toContain(
      'interpolated'
    );
    expect(q('estimate-breakdown')!.textContent).toContain('At batch size 64');
    expect(q('estimate-role-optimizer_state')!.textContent).toBe(
      'Optimizer state: 1 GiB'
    );
    const variants = all('estimate-variant');
    expect(variants.map(v => v.dataset.vramVariant)).toEqual([
      'plain',
      'amp_bf16',
      'checkpointing',
      'grad_accumulation'
    ]);
    // A remedy that is not applicable has no cell to insert.
    expect(
      variants[2].querySelector('[data-vram-role="estimate-insert"]')
    ).toBeNull();
    (
      variants[1].querySelector(
        '[data-vram-role="estimate-insert"]'
      ) as HTMLElement
    ).click();
    expect(insert).toHaveBeenCalledWith('amp_bf16');
    expect(q('estimate-notes')!.textContent).toContain(
      'fake tensors on cuda, nothing allocated'
    );
  });

  it('names the operation and line of a refusal and offers real steps', () => {
    const { q, measureReal } = setup({
      status: 'done',
      request: REQUEST,
      result: makeRefusal({
        failure: {
          phase: 'forward',
          op: 'aten.nonzero.default',
          filename: '<cell>',
          lineno: 3,
          line: '<b>not bold</b>',
          message: 'raised'
        }
      })
    });
    const failure = q('estimate-failure')!;
    expect(failure.textContent).toContain('aten.nonzero.default');
    // Kernel text is text: the markup shows as written.
    expect(failure.querySelector('b')).toBeNull();
    expect(failure.textContent).toContain('<b>not bold</b>');
    (q('estimate-real-step') as HTMLElement).click();
    expect(measureReal).toHaveBeenCalledWith(REQUEST);
    expect(q('estimate-rows')).toBeNull();
  });

  it('does not offer real steps again once the user agreed, and warns of a changed state', () => {
    const { q } = setup({
      status: 'done',
      request: { ...REQUEST, real_step: true },
      result: makeRefusal({ state_unchanged: false })
    });
    expect(q('estimate-real-step')).toBeNull();
    expect(q('estimate-notes')!.textContent).toContain(
      'this is a bug of jupyterlab-vram'
    );
  });

  it('shows a failed request', () => {
    const { q } = setup({
      status: 'failed',
      request: REQUEST,
      error: 'timed out'
    });
    expect(q('estimate-error')!.textContent).toBe(
      'The estimate failed: timed out'
    );
  });

  it('takes the row at the sample batch size for the breakdown', () => {
    const result = makeEstimateResult();
    expect(sampleRow(result)!.batch_size).toBe(64);
    expect(sampleRow({ ...result, sample_batch_size: 7 })!.batch_size).toBe(64);
    expect(sampleRow({ ...result, rows: [] })).toBeNull();
  });
});
