/** Tests for the `notebook_names` reply: reading it, and asking a helper for it. */
import { fetchNotebookNames, parseNotebookNames } from './notebookNames';

describe('parseNotebookNames', () => {
  const full = {
    model: ['net', 'teacher'],
    optimizer: ['opt'],
    dataloader: ['loader'],
    loss: ['criterion'],
    scaler: [],
    runtime: {
      torch_imported: true,
      cuda_initialized: true,
      tensorflow_imported: false,
      tensorflow_initialized: false
    }
  };

  it('reads a well-formed result', () => {
    const parsed = parseNotebookNames(full);
    expect(parsed.names).toEqual({
      model: ['net', 'teacher'],
      optimizer: ['opt'],
      dataloader: ['loader'],
      loss: ['criterion'],
      scaler: []
    });
    expect(parsed.runtime).toEqual({
      cudaInitialized: true,
      tensorflowInitialized: false
    });
    expect(parsed.torchImported).toBe(true);
    expect(parsed.tensorflowImported).toBe(false);
  });

  it.each([
    ['null', null],
    ['a string', 'model'],
    ['an array', [1, 2]],
    ['a number', 42],
    ['an empty object', {}]
  ])('reads %s as nothing found, without throwing', (_, value) => {
    const parsed = parseNotebookNames(value);
    expect(parsed.names.model).toEqual([]);
    expect(parsed.runtime).toEqual({
      cudaInitialized: null,
      tensorflowInitialized: null
    });
  });

  it('drops malformed lists, names and flags field by field', () => {
    const parsed = parseNotebookNames({
      model: 'net',
      optimizer: ['opt', 3, null, '__class__', 'x y'],
      dataloader: null,
      runtime: { cuda_initialized: 'yes', tensorflow_initialized: true }
    });
    expect(parsed.names.model).toEqual([]);
    expect(parsed.names.optimizer).toEqual(['opt']);
    expect(parsed.names.dataloader).toEqual([]);
    expect(parsed.runtime).toEqual({
      cudaInitialized: null,
      tensorflowInitialized: true
    });
  });

  it('keeps at most 20 names per kind', () => {
    const many = Array.from({ length: 50 }, (_, i) => `m${i}`);
    expect(parseNotebookNames({ model: many }).names.model).toHaveLength(20);
  });
});

describe('fetchNotebookNames', () => {
  const live = { state: 'live', kernelBusy: false };

  it('asks a live, idle helper', async () => {
    const request = jest.fn(async () => ({ model: ['net'] }));
    const found = await fetchNotebookNames(live, request);
    expect(request).toHaveBeenCalledTimes(1);
    expect(found?.names.model).toEqual(['net']);
  });

  it('does not wait for a busy kernel or a helper that is not live', async () => {
    const request = jest.fn(async () => ({}));
    expect(
      await fetchNotebookNames({ state: 'live', kernelBusy: true }, request)
    ).toBe(null);
    expect(
      await fetchNotebookNames(
        { state: 'bootstrapping', kernelBusy: false },
        request
      )
    ).toBe(null);
    expect(await fetchNotebookNames(null, request)).toBe(null);
    expect(await fetchNotebookNames(live, null)).toBe(null);
    expect(request).not.toHaveBeenCalled();
  });

  it('reads a failed or timed-out request as nothing found', async () => {
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    const found = await fetchNotebookNames(live, async () => {
      throw new Error('timed out');
    });
    expect(found).toBe(null);
    warn.mockRestore();
  });
});
