import { holderSummaryText, sharingNote } from './holderText';
import { MiB } from '../../testing/fixtures';

describe('the shared-storage note of a Holders row', () => {
  const entry = (
    shared_with: string[],
    shared_bytes: number,
    counted_under: string[],
    total_bytes: number
  ) => ({
    shared_with,
    shared_bytes,
    counted_under,
    total_bytes
  });

  it('says nothing for a name that shares nothing', () => {
    expect(sharingNote(entry([], 0, [], 4 * MiB), 'binary')).toBeNull();
  });

  it('says what a 0 B name keeps alive, and under which names it is counted', () => {
    expect(
      sharingNote(entry(['alias'], 64 * MiB, ['alias'], 0), 'binary')
    ).toBe('keeps 64 MiB alive that alias counts (shared storage)');
    expect(
      sharingNote(
        entry(['a', 'b', 'v'], 3 * MiB, ['a', 'b'], 1 * MiB),
        'decimal'
      )
    ).toBe(
      'keeps 3.15 MB alive that a, b count (shared storage); also shares storage with v'
    );
  });

  it('says the shared storage is counted on the row that counts it', () => {
    expect(sharingNote(entry(['t'], 0, [], 64 * MiB), 'binary')).toBe(
      'shares storage with t, counted here'
    );
  });

  it('claims nothing about a 0 B row of an older helper, which sends no shared bytes', () => {
    expect(sharingNote(entry(['a'], 0, [], 0), 'binary')).toBe(
      'shares storage with a'
    );
  });
});

describe('the summary line of a Holders row', () => {
  it('says the class name once', () => {
    expect(
      holderSummaryText({
        type_name: 'torch.nn.modules.linear.Linear',
        summary: 'Linear: 2 params, 0 buffers, 2 grads'
      })
    ).toBe('torch.nn.modules.linear.Linear: 2 params, 0 buffers, 2 grads');
    expect(
      holderSummaryText({
        type_name: 'torch.optim.adam.Adam',
        summary: 'Adam: 6 state tensors'
      })
    ).toBe('torch.optim.adam.Adam: 6 state tensors');
    expect(
      holderSummaryText({
        type_name: 'Trainer',
        summary: 'Trainer holding 1 module'
      })
    ).toBe('Trainer: holding 1 module');
    expect(
      holderSummaryText({ type_name: 'dict', summary: 'dict of 2 tensors' })
    ).toBe('dict of 2 tensors');
    expect(
      holderSummaryText({ type_name: 'list', summary: 'list of 5 tensors' })
    ).toBe('list of 5 tensors');
    expect(
      holderSummaryText({
        type_name: 'torch.Tensor',
        summary: 'float32[1000] cpu'
      })
    ).toBe('torch.Tensor: float32[1000] cpu');
  });
});
