/**
 * Tests freedBytesBetween, which works out from its two snapshots the bytes
 * that a free-memory request gave back.
 */
import { freedBytesBetween } from './cleanupResultText';
import { snapshot } from '../../testing/cleanupFixtures';

describe('freedBytesBetween', () => {
  it('sums drops only: max(allocated, reserved) per GPU plus RSS', () => {
    expect(
      freedBytesBetween(
        snapshot(100, [
          [0, 50, 80, null],
          [1, 10, 10, null]
        ]),
        snapshot(120, [
          [0, 20, 30, null],
          [1, 20, 20, null]
        ])
      )
    ).toBe(50);
  });

  it('is null when nothing is known on both sides', () => {
    expect(freedBytesBetween(snapshot(null), snapshot(5))).toBeNull();
  });
});
