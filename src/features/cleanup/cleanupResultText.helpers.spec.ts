/**
 * Tests the small helpers of the cleanup result text, which format signed
 * bytes and the names that survived.
 */
import { formatSignedBytes, stillAliveText } from './cleanupResultText';
import { MiB } from '../../testing/fixtures';

describe('small helpers', () => {
  it('formats signed bytes', () => {
    expect(formatSignedBytes(-MiB, 'binary')).toBe('\u22121 MiB');
    expect(formatSignedBytes(MiB, 'binary')).toBe('+1 MiB');
    expect(formatSignedBytes(0, 'binary')).toBe('0 B');
  });

  it('phrases survivors', () => {
    expect(stillAliveText('t', 'referenced by 2 objects')).toBe(
      't: referenced by 2 objects \u2014 its memory did not come back'
    );
  });
});
