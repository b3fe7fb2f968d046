/**
 * Tests for restartNeeded, which tells whether a snippet needs a fresh kernel,
 * from the kernel's reply or else from the latest sample.
 */
import { restartMessage, restartNeeded, runtimeFlagsOfSample } from './snippet';
import { makeSample } from '../../testing/fixtures';

describe('restartNeeded', () => {
  const cuda = { requiresFresh: 'cuda' as const };
  const tf = { requiresFresh: 'tensorflow' as const };
  const none = { requiresFresh: null };
  const flags = (c: boolean | null, t: boolean | null) => ({
    cudaInitialized: c,
    tensorflowInitialized: t
  });

  it('never warns for snippets without requiresFresh', () => {
    expect(restartNeeded(none, flags(true, true), flags(true, true))).toBe(
      null
    );
  });

  it('warns when the framework is initialised (reply)', () => {
    expect(restartNeeded(cuda, flags(true, false))).toEqual({
      reason: 'cuda',
      message: restartMessage('cuda')
    });
    expect(restartNeeded(tf, flags(false, true))).toEqual({
      reason: 'tensorflow',
      message: restartMessage('tensorflow')
    });
    expect(restartNeeded(cuda, flags(false, true))).toBe(null);
    expect(restartNeeded(tf, flags(true, false))).toBe(null);
  });

  it('prefers the reply and falls back to the sample', () => {
    expect(restartNeeded(cuda, flags(false, null), flags(true, null))).toBe(
      null
    );
    expect(
      restartNeeded(cuda, flags(null, null), flags(true, null))?.reason
    ).toBe('cuda');
    expect(restartNeeded(cuda, null, flags(true, null))?.reason).toBe('cuda');
    expect(restartNeeded(tf, null, null)).toBe(null);
  });

  it('reads the flags of a sample', () => {
    const sample = makeSample({
      torch: { imported: true, cuda_initialized: true },
      tensorflow: { imported: true, gpus_initialized: false }
    });
    expect(runtimeFlagsOfSample(sample)).toEqual(flags(true, false));
    expect(runtimeFlagsOfSample(null)).toEqual(flags(null, null));
  });

  it('says what to do in the message', () => {
    expect(restartMessage('cuda')).toBe(
      'Restart the kernel for this to take effect: CUDA is already initialised in this kernel'
    );
  });
});
