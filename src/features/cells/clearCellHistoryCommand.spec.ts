/**
 * Tests for the clear-cell-history command, which asks first and names the
 * records and the notebook.
 */
import { CommandRegistry } from '@lumino/commands';

import { CommandIDs } from '../../ui/commandIds';
import { ClearHistoryRequest, clearHistoryText } from './ClearHistoryDialog';
import { makeCellRecord } from '../../testing/cellFixtures';
import { wire } from '../../testing/fixtures';
import {
  liveMonitorOnFakeKernel,
  registerTestCommands
} from '../../testing/fakeKernel';

describe('clearing the cell history', () => {
  it('asks first, naming the records and the notebook; Cancel keeps them', async () => {
    const { monitor } = await liveMonitorOnFakeKernel({});
    const model = monitor.current!;
    model.ingest(
      wire({
        type: 'cells',
        records: [
          makeCellRecord({ record_id: 1 }),
          makeCellRecord({ record_id: 2, cell_id: 'b' })
        ]
      })
    );
    const asked: ClearHistoryRequest[] = [];
    let answer = false;
    const commands = new CommandRegistry();
    registerTestCommands(commands, {
      monitor,
      sidebar: { showTab: () => undefined } as any,
      currentNotebookPath: () => 'work/train.ipynb',
      confirmClear: async request => {
        asked.push(request);
        return answer;
      }
    });
    expect(await commands.execute(CommandIDs.clearCellHistory)).toBe(false);
    expect(asked).toEqual([{ records: 2, path: 'work/train.ipynb' }]);
    expect(model.cells.length).toBe(2);
    answer = true;
    expect(await commands.execute(CommandIDs.clearCellHistory)).toBe(true);
    expect(model.cells.length).toBe(0);
    expect(clearHistoryText(asked[0])).toEqual([
      'Forget the 2 cell records of \u201cwork/train.ipynb\u201d, and their badges?',
      'They are kept in this browser across reloads; once cleared, nothing brings them back. ' +
        'Export the history first (CSV or JSON) to keep it.'
    ]);
    monitor.dispose();
  });
});
