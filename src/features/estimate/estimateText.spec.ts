/** The sentences of "Will it fit?" and the cells it inserts, with their figures. */
import {
  makeEstimateResult,
  makeRefusal,
  makeVariant
} from '../../testing/estimateFixtures';
import { estimateCell, snippetNames } from './estimateSnippets';
import {
  batchSizeText,
  cardSentence,
  failureSentences,
  progressText,
  variantLabel,
  variantSentence,
  verdictSentence
} from './estimateText';
import { parseBatchSizes, requestOfForm } from './EstimateDialog';

const result = makeEstimateResult();

describe('estimateText', () => {
  it('names the largest batch size, its peak and the budget', () => {
    expect(verdictSentence(result, 'binary')).toBe(
      'The largest batch size that fits: 7,000 (predicted peak 111 GiB of the 124 GiB left for the step).'
    );
    expect(cardSentence(result.card!, 'binary')).toBe(
      'NVIDIA H200 (cuda:0) has 140 GiB: 1 GiB allocated besides the model, 600 MiB for the CUDA context, caches and other processes (measured), a margin of 14 GiB, so 124 GiB for the step.'
    );
    expect(
      cardSentence({ ...result.card!, overhead_measured: false }, 'binary')
    ).toContain('estimated: CUDA is not initialised in this kernel');
    const planned = {
      ...result.card!,
      index: null,
      planned: true,
      name: null,
      total_bytes: 24 * 2 ** 30,
      other_allocated_bytes: 0,
      overhead_bytes: 512 * 2 ** 20,
      overhead_measured: false,
      margin_bytes: 2 * 2 ** 30,
      free_for_step_bytes: 21.5 * 2 ** 30
    };
    expect(cardSentence(planned, 'binary')).toBe(
      'A planned card of 24 GiB: 512 MiB for an estimated CUDA context, a margin of 2 GiB, so 21.5 GiB for the step.'
    );
    expect(
      estimateCell(
        { ...result, card: planned },
        result.variants[0],
        snippetNames(result, null),
        'binary'
      )!.split('\n')[0]
    ).toBe(
      '# Will it fit? The step as it is fits a batch of 7000 on a card of 24 GiB:'
    );
  });

  it('says what it cannot fit, and where no card is visible', () => {
    expect(
      verdictSentence(
        makeEstimateResult({ largest_batch_size: null }),
        'binary'
      )
    ).toBe(
      'Not even a batch of 1 fits the 124 GiB this card leaves for the step.'
    );
    expect(
      verdictSentence(makeEstimateResult({ card: null }), 'binary')
    ).toContain('No CUDA device is visible');
    expect(verdictSentence(makeRefusal(), 'binary')).toContain(
      'fake tensors could not run the step'
    );
  });

  it('says when the largest batch size is the most the kernel names', () => {
    expect(batchSizeText(1048576)).toBe('1,048,576 or more');
    expect(batchSizeText(512)).toBe('512');
  });

  it('tells each remedy, accumulation with its steps', () => {
    const [plain, amp, checkpointing, accumulation] = result.variants;
    expect(variantLabel(amp.variant)).toBe('bfloat16 autocast (AMP)');
    expect(variantLabel('future_remedy')).toBe('future_remedy');
    expect(variantSentence(plain, 64, 'binary')).toBe(
      'Fits a batch of 7,000 (peak 111 GiB).'
    );
    expect(variantSentence(checkpointing, 64, 'binary')).toBe(
      'no nn.ModuleList or nn.Sequential of blocks to checkpoint'
    );
    expect(
      variantSentence(
        {
          ...checkpointing,
          applicable: true,
          largest_batch_size: 90,
          peak_at_largest_bytes: 111 * 2 ** 30,
          reason: 'checkpointed the 6 blocks of layers'
        },
        64,
        'binary'
      )
    ).toBe(
      'Fits a batch of 90 (peak 111 GiB). Checkpointed the 6 blocks of layers.'
    );
    expect(variantSentence(accumulation, 64, 'binary')).toBe(
      'Fits a batch of 16 (peak 111 GiB). 4 micro-batches of 16 make the batch of 64.'
    );
  });

  it('names the operation and the user line of a refusal', () => {
    expect(failureSentences(makeRefusal().failure!)).toEqual([
      'The forward stopped at aten.nonzero.default, which has no fake implementation or depends on the data.',
      'At <ipython-input-3>, line 7: idx = x.nonzero()',
      'DynamicOutputShapeException: aten.nonzero.default'
    ]);
  });

  it('shows progress, or that the kernel is busy', () => {
    expect(progressText(null)).toContain('once the running cell ends');
    expect(
      progressText({ stage: 'tracing batch size 8', done: 7, total: 5 })
    ).toBe('tracing batch size 8 (5 of 5)');
  });
});

describe('estimateCell', () => {
  const names = snippetNames(result, 'loader');

  it('fills in the batch size, the names and the prediction', () => {
    const code = estimateCell(result, result.variants[1], names, 'binary')!;
    expect(code).toContain('BATCH_SIZE = 12000');
    expect(code).toContain(
      'with torch.autocast(device_type=device, dtype=torch.bfloat16):'
    );
    expect(code).toContain('batch_loss = criterion(net(inputs), targets)');
    expect(code).toContain('opt.step()');
    expect(code).toContain('for inputs, targets in loader:');
    expect(code.split('\n')[0]).toBe(
      '# Will it fit? bfloat16 autocast fits a batch of 12000 on NVIDIA H200 (cuda:0):'
    );
  });

  it('writes the accumulation steps and the checkpointed blocks', () => {
    const accumulation = estimateCell(
      result,
      result.variants[3],
      names,
      'binary'
    )!;
    expect(accumulation).toContain('accumulation_steps = 4');
    expect(accumulation).toContain('BATCH_SIZE = 16');
    const checkpointing = estimateCell(
      result,
      makeVariant({ variant: 'checkpointing', largest_batch_size: 9000 }),
      names,
      'binary'
    )!;
    expect(checkpointing).toContain(
      'block.forward = functools.partial(checkpoint, block.forward, use_reentrant=False)'
    );
  });

  it('has nothing to insert without a batch size, and placeholders without names', () => {
    expect(
      estimateCell(result, result.variants[2], names, 'binary')
    ).toBeNull();
    const bare = snippetNames(
      makeEstimateResult({
        names: { model: 'net', batch: 'x', optimizer: null, loss: null }
      }),
      null
    );
    expect(bare).toEqual({
      model: 'net',
      optimizer: 'optimizer',
      loss: 'criterion',
      loader: 'train_loader'
    });
  });
});

describe('the dialog form', () => {
  const values = {
    model: ' net ',
    optimizer: '',
    loss: 'criterion',
    batch: 'batch',
    batchSizes: '64, 16 32,16',
    marginPercent: '15',
    cardGiB: '',
    realStep: false
  };

  it('reads batch sizes', () => {
    expect(parseBatchSizes('')).toEqual([]);
    expect(parseBatchSizes('8; 4 ,2')).toEqual([2, 4, 8]);
    expect(parseBatchSizes('8 x')).toBeNull();
    expect(parseBatchSizes('0')).toBeNull();
    expect(parseBatchSizes('1.5')).toBeNull();
  });

  it('makes the request, or names the field that is wrong', () => {
    expect(requestOfForm(values)).toEqual({
      model: 'net',
      batch: 'batch',
      optimizer: null,
      loss: 'criterion',
      batch_sizes: [16, 32, 64],
      margin: 0.15,
      real_step: false
    });
    expect(requestOfForm({ ...values, model: ' ' })).toEqual({
      error: 'Name the model to estimate.'
    });
    expect(requestOfForm({ ...values, batch: '' })).toHaveProperty('error');
    expect(requestOfForm({ ...values, marginPercent: '60' })).toEqual({
      error: 'The margin is a percentage from 0 to 50.'
    });
    expect(requestOfForm({ ...values, batchSizes: 'many' })).toHaveProperty(
      'error'
    );
  });

  it('plans for a card of the size given, in GiB', () => {
    expect(requestOfForm({ ...values, cardGiB: '24' })).toMatchObject({
      card_bytes: 24 * 2 ** 30
    });
    expect(requestOfForm({ ...values, cardGiB: '0.5' })).toHaveProperty(
      'error'
    );
    expect(requestOfForm({ ...values, cardGiB: 'big' })).toHaveProperty(
      'error'
    );
  });
});
