/** Tests for placementIndex, which says where in the notebook a snippet's cell goes. */
import { placementIndex } from './snippet';

describe('placementIndex', () => {
  it('puts "top" first', () => {
    expect(placementIndex('top', 5, 10)).toBe(0);
    expect(placementIndex('top', -1, 0)).toBe(0);
  });

  it('puts "below" under the active cell', () => {
    expect(placementIndex('below', 0, 3)).toBe(1);
    expect(placementIndex('below', 2, 3)).toBe(3);
  });

  it('puts "below" first without an active cell, and stays in range', () => {
    expect(placementIndex('below', -1, 0)).toBe(0);
    expect(placementIndex('below', -1, 4)).toBe(0);
    expect(placementIndex('below', 9, 3)).toBe(3);
    expect(placementIndex('below', NaN, 3)).toBe(0);
  });
});
