import { ConsoleCells, MAX_CONSOLE_CELL_IDS } from './ConsoleCells';
import { FakeConsoles } from '../testing/fakeConsoles';

describe('ConsoleCells', () => {
  it('knows the cells of consoles open before it and of those opened after', () => {
    const consoles = new FakeConsoles();
    const first = consoles.open(['banner', 'a']);
    const cells = new ConsoleCells(consoles);
    expect(cells.has('a')).toBe(true);
    expect(cells.has('b')).toBe(false);
    let changes = 0;
    cells.changed.connect(() => changes++);
    first.run('b');
    expect(cells.has('b')).toBe(true);
    expect(changes).toBe(1);
    const second = consoles.open(['c']);
    expect(cells.has('c')).toBe(true);
    expect(changes).toBe(2);
    second.run('d');
    expect(cells.has('d')).toBe(true);
    expect(changes).toBe(3);
    // A cell already known changes nothing.
    first.run('a');
    expect(changes).toBe(3);
    cells.dispose();
  });

  it("keeps the ids of a cleared console: its records stay a console's", () => {
    const consoles = new FakeConsoles();
    const console = consoles.open(['a', 'b']);
    const cells = new ConsoleCells(consoles);
    console.clear();
    expect(console.cells.length).toBe(0);
    expect(cells.has('a')).toBe(true);
    expect(cells.has('b')).toBe(true);
    cells.dispose();
    expect(cells.isDisposed).toBe(true);
    expect(cells.has('a')).toBe(false);
  });

  it("lets go of a closed console's cell list, which JupyterLab leaves undisposed", () => {
    const consoles = new FakeConsoles();
    const closed = consoles.open(['a']);
    const cells = new ConsoleCells(consoles);
    const later = consoles.open(['b']);
    let changes = 0;
    cells.changed.connect(() => changes++);
    closed.dispose();
    later.dispose();
    // Still connected, the list (and every cell widget in it) would stay
    // reachable from the sidebar for the page's life, one per console closed.
    closed.run('c');
    later.run('d');
    expect(cells.has('c')).toBe(false);
    expect(cells.has('d')).toBe(false);
    expect(changes).toBe(0);
    // What they ran stays a console's.
    expect(cells.has('a')).toBe(true);
    expect(cells.has('b')).toBe(true);
    cells.dispose();
  });

  it('forgets the oldest ids beyond its bound', () => {
    const consoles = new FakeConsoles();
    const console = consoles.open();
    const cells = new ConsoleCells(consoles);
    for (let i = 0; i <= MAX_CONSOLE_CELL_IDS; i++) {
      console.run(`cell-${i}`);
    }
    expect(cells.has('cell-0')).toBe(false);
    expect(cells.has('cell-1')).toBe(true);
    expect(cells.has(`cell-${MAX_CONSOLE_CELL_IDS}`)).toBe(true);
    cells.dispose();
  });

  it('ignores cells without a usable id', () => {
    const consoles = new FakeConsoles();
    const console = consoles.open();
    const cells = new ConsoleCells(consoles);
    let changes = 0;
    cells.changed.connect(() => changes++);
    console.cells.push({ model: { id: '' } });
    console.cells.push({ model: { id: 42 as unknown as string } });
    expect(changes).toBe(0);
    expect(cells.has('')).toBe(false);
    cells.dispose();
  });
});
