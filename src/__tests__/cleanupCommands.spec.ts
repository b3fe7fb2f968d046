/**
 * The cleanup commands end to end in the frontend: command -> MemoryActions
 * -> queue -> KernelHelperConnection -> comm (fake kernel) -> reply ->
 * result text in the sidebar and a notification.
 */
import { CommandRegistry } from '@lumino/commands';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { CommandIDs } from '../commands';
import { DeletePlan } from '../model/deletePlan';
import { ClearHistoryRequest, clearHistoryText } from '../views/ClearHistoryDialog';
import { MemorySidebar } from '../views/MemorySidebar';
import { SIDEBAR_ID } from '../views/SidebarHost';
import {
  makeDeleteResult,
  makeFreeResult,
  makeListing,
  snapshot
} from './cleanupFixtures';
import { makeCellRecord } from './cellFixtures';
import { GiB, makeHello, MiB, wire } from './fixtures';
import {
  liveMonitorOnFakeKernel,
  registerTestCommands,
  settle
} from './fakeKernel';


async function setup() {
  const { kernel, sessionContext, comm, monitor } = await liveMonitorOnFakeKernel({});
  expect(monitor.current?.state).toBe('live');

  const commands = new CommandRegistry();
  const sidebar = new MemorySidebar({
    monitor,
    actionsFor: model => monitor.actionsFor(model),
    execute: id => void commands.execute(id)
  });
  Widget.attach(sidebar, document.body);
  const confirmed: DeletePlan[] = [];
  let answer = true;
  const { app, notes } = registerTestCommands(commands, {
    monitor,
    sidebar,
    confirmDelete: async plan => {
      confirmed.push(plan);
      return answer;
    }
  });
  const render = () => {
    MessageLoop.flush();
  };
  const q = (selector: string) =>
    sidebar.node.querySelector(selector) as HTMLElement | null;
  /** The kernel answers the last request with `result`. */
  const reply = (result: unknown) => comm.reply(result);
  return {
    kernel,
    sessionContext,
    comm,
    monitor,
    commands,
    app,
    sidebar,
    notes,
    confirmed,
    setAnswer: (a: boolean) => (answer = a),
    render,
    q,
    reply,
    dispose: () => {
      sidebar.dispose();
      monitor.dispose();
    }
  };
}

/** The result sentence the sidebar shows; null when none is shown. */
function shownResult(t: { q: (selector: string) => HTMLElement | null }): string | null {
  const node = t.q('[data-vram-role="action-result"]');
  return node && !node.hidden ? node.textContent : null;
}

/** The lines of the result the sidebar shows, each as its text. */
function resultLines(t: { q: (selector: string) => HTMLElement | null }): string[] {
  const node = t.q('[data-vram-role="action-result"]')!;
  return Array.from(node.querySelectorAll('.jp-vram-Actions-resultLine')).map(n => n.textContent ?? '');
}

describe('free memory commands', () => {
  it.each([
    [CommandIDs.collectGarbage, ['gc']],
    [CommandIDs.emptyCache, ['empty_cache']],
    [CommandIDs.freeMemory, ['gc', 'empty_cache']]
  ])('%s sends free_memory %j', async (id, actions) => {
    const t = await setup();
    const running = t.commands.execute(id);
    await settle();
    expect(t.comm.lastRequest).toEqual({
      type: 'free_memory',
      actions,
      request_id: expect.any(String)
    });
    t.reply(makeFreeResult());
    const outcome: any = await running;
    expect(outcome.status).toBe('done');
    t.dispose();
  });

  it('shows the result sentence, the freed bytes and a notification', async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.freeMemory);
    await settle();
    const replyAt = new Date(2024, 0, 2, 22, 18, 1).getTime();
    const now = jest.spyOn(Date, 'now').mockReturnValue(replyAt);
    t.reply(
      makeFreeResult({
        gc_collected: 1234,
        before: snapshot(GiB, [[0, GiB, 4.2 * GiB, null]]),
        after: snapshot(GiB - 120 * MiB, [[0, GiB, GiB, null]])
      })
    );
    await running;
    // An hour on, it is still shown, with the time the reply came.
    now.mockReturnValue(replyAt + 3600_000);
    t.render();
    now.mockRestore();
    const result = t.q('[data-vram-role="action-result"]')!;
    expect(result.hidden).toBe(false);
    // The gist says when; the lines under it do not repeat it.
    expect(resultLines(t)).toEqual([
      'at 22:18:01 \u2014 gc collected 1,234 objects; RAM \u2212120 MiB',
      'Freed 3.2 GiB reserved on GPU 0; allocated unchanged: something still references it'
    ]);
    expect(result.dataset.vramFreedBytes).toBe(
      String(Math.round(3.2 * GiB + 120 * MiB))
    );
    expect(result.dataset.vramOutcome).toBe('done');
    expect(t.notes).toEqual([
      [
        'success',
        'gc collected 1,234 objects; RAM \u2212120 MiB. Freed 3.2 GiB reserved on GPU 0; allocated unchanged: something still references it'
      ]
    ]);
    t.dispose();
  });

  it("forgets the last result when the kernel restarts: it spoke of the old process", async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.collectGarbage);
    await settle();
    t.reply(makeFreeResult({ actions_run: ['gc'], empty_cache: null, gc_collected: 0 }));
    await running;
    t.render();
    expect(t.q('[data-vram-role="action-result"]')!.hidden).toBe(false);
    t.sessionContext.setStatus('restarting');
    await settle();
    t.render();
    const result = t.q('[data-vram-role="action-result"]');
    expect(result === null || result.hidden).toBe(true);
    t.dispose();
  });

  it('queues while the kernel is busy, shows it, sends when idle', async () => {
    const t = await setup();
    t.sessionContext.setStatus('busy');
    const sentBefore = t.comm.sent.length;
    const running = t.commands.execute(CommandIDs.collectGarbage);
    await settle();
    expect(t.comm.sent.length).toBe(sentBefore);
    expect(t.notes[0][0]).toBe('info');
    expect(t.notes[0][1]).toContain('Queued \u2014 the kernel is busy');
    t.render();
    const queued = t.q('[data-vram-role="queued-action"]')!;
    expect(queued.textContent).toContain('Queued \u2014 the kernel is busy');
    expect(queued.querySelector('[data-vram-role="cancel-action"]')).not.toBeNull();

    t.sessionContext.setStatus('idle');
    await settle();
    expect(t.comm.lastRequest.type).toBe('free_memory');
    t.render();
    expect(t.q('[data-vram-role="cancel-action"]')).toBeNull();
    t.reply(makeFreeResult({ actions_run: ['gc'], empty_cache: null }));
    expect(((await running) as any).status).toBe('done');
    t.dispose();
  });

  it('a queued request can be cancelled from the sidebar and is never sent', async () => {
    const t = await setup();
    t.sessionContext.setStatus('busy');
    const sentBefore = t.comm.sent.length;
    const running = t.commands.execute(CommandIDs.emptyCache);
    await settle();
    t.render();
    t.q('[data-vram-role="cancel-action"]')!.click();
    const outcome: any = await running;
    expect(outcome.status).toBe('cancelled');
    t.sessionContext.setStatus('idle');
    await settle();
    expect(t.comm.sent.length).toBe(sentBefore);
    t.render();
    expect(t.q('[data-vram-role="queued-action"]')).toBeNull();
    expect(t.q('[data-vram-role="action-result"]')!.dataset.vramOutcome).toBe(
      'cancelled'
    );
    // A cancel, too, says when it happened.
    expect(resultLines(t)[0]).toMatch(/^at \d\d:\d\d:\d\d \u2014 Empty the CUDA cache: /);
    t.dispose();
  });

  it('fails clearly when the kernel dies while the request is pending', async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.freeMemory);
    await settle();
    t.sessionContext.setStatus('dead');
    const outcome: any = await running;
    expect(outcome.status).toBe('failed');
    expect(outcome.lines[0]).toBe(
      'Free memory (gc + empty_cache) failed: The kernel died.'
    );
    expect(t.notes.pop()?.[0]).toBe('error');
    t.dispose();
  });

  it('drops a queued request when the kernel restarts before it was sent', async () => {
    const t = await setup();
    t.sessionContext.setStatus('busy');
    const sentBefore = t.comm.sent.length;
    const running = t.commands.execute(CommandIDs.collectGarbage);
    await settle();
    t.sessionContext.setStatus('restarting');
    const outcome: any = await running;
    expect(outcome.status).toBe('cancelled');
    expect(outcome.lines[0]).toContain('The kernel went away before the request was sent');
    expect(t.comm.sent.length).toBe(sentBefore);
    t.dispose();
  });

  it('forgets what it said of the kernel that went away once the next one is live', async () => {
    const t = await setup();
    t.sessionContext.setStatus('busy');
    const running = t.commands.execute(CommandIDs.collectGarbage);
    await settle();
    t.sessionContext.setStatus('restarting');
    await running;
    t.render();
    expect(shownResult(t)).toContain('went away');
    t.sessionContext.setStatus('idle'); // the restarted kernel: the helper is sent again
    await settle();
    t.kernel.lastComm.receive(wire(makeHello({ pid: 4242 })));
    t.render();
    expect(t.monitor.current!.state).toBe('live');
    expect(shownResult(t)).toBeNull();
    t.dispose();
  });

  it("does not show the last result under a new request's Queued", async () => {
    const t = await setup();
    const first = t.commands.execute(CommandIDs.collectGarbage);
    await settle();
    t.reply(makeFreeResult());
    await first;
    t.render();
    expect(shownResult(t)).not.toBeNull();
    t.sessionContext.setStatus('busy');
    void t.commands.execute(CommandIDs.collectGarbage);
    await settle();
    t.render();
    expect(t.q('[data-vram-role="queued-action"]')).not.toBeNull();
    expect(shownResult(t)).toBeNull();
    t.dispose();
  });

  it('reports a malformed reply as a failure, never a throw', async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.collectGarbage);
    await settle();
    t.reply({ actions_run: ['gc'] });
    const outcome: any = await running;
    expect(outcome.status).toBe('failed');
    expect(outcome.lines[0]).toContain(
      "The kernel helper sent a malformed 'free_memory' reply: free_memory.before: expected an object"
    );
    t.dispose();
  });

  it('reports an error answer with its message', async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.collectGarbage);
    await settle();
    t.comm.replyError('internal', 'gc exploded');
    const outcome: any = await running;
    expect(outcome.lines).toEqual(['Collect garbage failed: gc exploded']);
    t.dispose();
  });

  it('fails at once when the helper is not live', async () => {
    const t = await setup();
    t.monitor.current!.setState('helper-failed', 'ImportError: boom');
    const sentBefore = t.comm.sent.length;
    const outcome: any = await t.commands.execute(CommandIDs.collectGarbage);
    expect(outcome.status).toBe('failed');
    expect(outcome.lines[0]).toBe(
      'The memory helper is not running in this kernel: ImportError: boom'
    );
    expect(t.comm.sent.length).toBe(sentBefore);
    t.dispose();
  });
});

describe('inspect and delete commands', () => {
  async function inspected() {
    const t = await setup();
    const listing = t.commands.execute(CommandIDs.inspectMemory);
    await settle();
    expect(t.sidebar.tab).toBe('holders');
    expect(t.app.shell.activateById).toHaveBeenCalledWith(SIDEBAR_ID);
    expect(t.comm.lastRequest).toEqual({
      type: 'inspect',
      request_id: expect.any(String)
    });
    t.reply(makeListing());
    await listing;
    t.render();
    return t;
  }

  it('lists holders in the Holders tab', async () => {
    const t = await inspected();
    const names = Array.from(
      t.sidebar.node.querySelectorAll('[data-vram-role="holder-entry"]')
    ).map(n => (n as HTMLElement).dataset.vramName);
    expect(names).toEqual(['model', 'a', 'np_arr', 'torch', 'b']);
    t.dispose();
  });

  it('tick, confirm, delete: sends the request, shows the freed bytes, lists again', async () => {
    const t = await inspected();
    const box = t.q(
      '[data-vram-role="holder-entry"][data-vram-name="np_arr"] input[type=checkbox]'
    ) as HTMLInputElement;
    box.checked = true;
    box.dispatchEvent(new Event('change'));
    const hidden = t.q(
      '[data-vram-role="hidden-holder"][data-vram-holder="last_traceback"] input[type=checkbox]'
    ) as HTMLInputElement;
    hidden.checked = true;
    hidden.dispatchEvent(new Event('change'));
    t.render();
    const del = t.q('[data-vram-role="delete-selected"]') as HTMLButtonElement;
    expect(del.disabled).toBe(false);
    del.click();
    await settle();

    expect(t.confirmed).toHaveLength(1);
    expect(t.confirmed[0].entries.map(e => e.name)).toEqual(['np_arr']);
    expect(t.comm.lastRequest).toEqual({
      type: 'delete',
      request_id: expect.any(String),
      listing_id: 'L1',
      names: ['np_arr'],
      hidden: ['last_traceback'],
      free: ['gc', 'empty_cache']
    });
    const now = jest.spyOn(Date, 'now').mockReturnValue(new Date(2024, 0, 2, 22, 18, 1).getTime());
    t.reply(makeDeleteResult({ cleared: ['last_traceback'] }));
    await settle();
    now.mockRestore();
    // Lists again after the delete.
    expect(t.comm.lastRequest.type).toBe('inspect');
    const after = makeListing();
    after.listing_id = 'L2';
    after.entries = after.entries.filter(e => e.name !== 'np_arr');
    t.reply(after);
    await settle();
    t.render();
    expect(
      t.q('[data-vram-role="holder-entry"][data-vram-name="np_arr"]')
    ).toBeNull();
    const result = t.q('[data-vram-role="action-result"]')!;
    expect(resultLines(t)).toEqual([
      'at 22:18:01 \u2014 Deleted np_arr; cleared the last traceback: 8 MiB freed'
    ]);
    expect(result.dataset.vramFreedBytes).toBe(String(8 * MiB));
    expect(result.dataset.vramAction).toBe('delete');
    expect(t.notes.pop()).toEqual([
      'success',
      'Deleted np_arr; cleared the last traceback: 8 MiB freed'
    ]);
    t.dispose();
  });

  it('says so when what the out-of-memory diagnosis named is gone since', async () => {
    const t = await inspected();
    const running = t.commands.execute(CommandIDs.deleteVariables, {
      names: [],
      hidden: ['last_traceback'],
      fresh: true
    });
    await settle();
    t.reply(makeListing({ hidden: [] })); // the fresh listing: the traceback was cleared
    expect(await running).toBeNull();
    expect(t.confirmed).toHaveLength(0);
    expect(t.notes.pop()).toEqual([
      'info',
      'Nothing left to delete: the last traceback no longer holds memory in the kernel (deleted or cleared since). The Holders tab shows what does now.'
    ]);
    t.dispose();
  });

  it('deletes nothing when the new listing an out-of-memory delete asks for fails', async () => {
    const t = await inspected(); // L1 on screen
    const running = t.commands.execute(CommandIDs.deleteVariables, {
      names: ['model'],
      hidden: ['last_traceback'],
      fresh: true
    });
    await settle();
    expect(t.comm.lastRequest.type).toBe('inspect');
    t.comm.replyError('internal', 'walk failed');
    expect(await running).toBeNull();
    expect(t.confirmed).toHaveLength(0); // no question about the old listing
    expect(t.comm.sent.filter(m => m.type === 'delete')).toHaveLength(0);
    expect(t.notes.pop()).toEqual([
      'error',
      'Could not list what holds memory: walk failed. Nothing was deleted.'
    ]);
    t.dispose();
  });

  it('lists again before asking when cells ran since the listing', async () => {
    const t = await inspected();
    t.monitor.currentActions!.setNameSelected('np_arr', true);
    t.monitor.currentActions!.setHiddenSelected('last_traceback', true);
    // Two cells run after the listing on screen.
    for (let i = 0; i < 2; i++) {
      t.sessionContext.setStatus('busy');
      t.sessionContext.setStatus('idle');
    }
    await settle();
    expect(t.monitor.currentActions!.listingStale).toBe(true);
    const running = t.commands.execute(CommandIDs.deleteVariables);
    await settle();
    expect(t.comm.lastRequest.type).toBe('inspect');
    expect(t.confirmed).toHaveLength(0); // not before the new listing
    const fresh = makeListing({ listing_id: 'L2' });
    t.reply(fresh);
    await settle();
    expect(t.confirmed).toHaveLength(1);
    expect(t.confirmed[0].listingId).toBe('L2');
    expect(t.comm.lastRequest).toMatchObject({ type: 'delete', listing_id: 'L2' });
    t.reply(makeDeleteResult());
    await settle();
    t.reply(makeListing({ listing_id: 'L3' })); // listed again after the delete
    await running;
    t.dispose();
  });

  it('sends no delete whose listing cells ran after while it waited in the queue', async () => {
    const t = await inspected();
    t.monitor.currentActions!.setHiddenSelected('output_cache', true);
    t.sessionContext.setStatus('busy'); // the user started a cell meanwhile
    await settle();
    // The question came before the cell: its answer queues behind it.
    const actions = t.monitor.currentActions!;
    const plan = (await actions.planSelection())!;
    const outcome = actions.deleteHolders(plan);
    t.sessionContext.setStatus('idle');
    await settle();
    expect(t.comm.sent.filter(m => m.type === 'delete')).toHaveLength(0);
    expect(t.comm.lastRequest.type).toBe('inspect'); // it lists again instead
    t.reply(makeListing({ listing_id: 'L2' }));
    const done = await outcome;
    expect(done.status).toBe('failed');
    expect(done.lines.join(' ')).toContain('cells ran since the listing, so nothing was deleted');
    t.dispose();
  });

  it('a second click while a delete is under way asks nothing and deletes once', async () => {
    const t = await inspected();
    t.monitor.currentActions!.setNameSelected('np_arr', true);
    t.render();
    const del = t.q('[data-vram-role="delete-selected"]') as HTMLButtonElement;
    t.sessionContext.setStatus('busy'); // a cell runs: the delete waits for it
    await settle();
    const first = t.commands.execute(CommandIDs.deleteVariables);
    await settle();
    t.render();
    expect(del.disabled).toBe(true); // off while the first is under way
    expect(await t.commands.execute(CommandIDs.deleteVariables)).toBeNull();
    expect(t.notes.pop()?.[1]).toContain('A delete is under way already');
    t.sessionContext.setStatus('idle');
    await settle();
    // The listing of before the cell is made again, then asked about, once.
    expect(t.comm.lastRequest.type).toBe('inspect');
    t.reply(makeListing({ listing_id: 'L2' }));
    await settle();
    expect(t.confirmed).toHaveLength(1);
    expect(t.comm.sent.filter(m => m.type === 'delete')).toHaveLength(1);
    t.reply(makeDeleteResult());
    await settle();
    t.reply(makeListing({ listing_id: 'L3' }));
    await first;
    expect(t.monitor.currentActions!.deleting).toBe(false);
    t.monitor.currentActions!.setNameSelected('model', true);
    t.render();
    expect(del.disabled).toBe(false); // the next delete may start
    expect(t.comm.sent.filter(m => m.type === 'delete')).toHaveLength(1);
    t.dispose();
  });

  it('says a hidden holder the kernel refused to clear as such', async () => {
    const { describeResult } = await import('../model/cleanupResultText');
    const { lines } = await describeResult(
      makeDeleteResult({
        refused: [
          { name: 'output_cache', reason: 'cells ran since the listing', hidden: true },
          { name: 'output_cache', reason: 'no longer defined' }
        ]
      })
    );
    expect(lines).toContain('Not cleared: the output cache \u2014 cells ran since the listing');
    expect(lines).toContain('Not deleted: output_cache \u2014 no longer defined'); // a variable of that name
  });

  it('does nothing when the dialog is cancelled', async () => {
    const t = await inspected();
    t.setAnswer(false);
    t.monitor.currentActions!.setNameSelected('model', true);
    const sent = t.comm.sent.length;
    expect(await t.commands.execute(CommandIDs.deleteVariables)).toBeNull();
    expect(t.comm.sent.length).toBe(sent);
    t.dispose();
  });

  it('takes names from args, and explains when nothing is chosen', async () => {
    const t = await inspected();
    expect(await t.commands.execute(CommandIDs.deleteVariables)).toBeNull();
    expect(t.notes.pop()?.[1]).toContain('Nothing to delete');
    const running = t.commands.execute(CommandIDs.deleteVariables, {
      names: ['model', 'torch'],
      hidden: []
    });
    await settle();
    expect(t.confirmed.pop()?.entries.map(e => e.name)).toEqual(['model']);
    expect(t.comm.lastRequest).toMatchObject({ type: 'delete', names: ['model'] });
    t.reply(
      makeDeleteResult({
        deleted: ['model'],
        still_alive: [{ name: 'model', reason: 'still referenced by a list' }],
        before: snapshot(GiB, [[0, GiB, GiB, null]]),
        after: snapshot(GiB, [[0, GiB, GiB, null]])
      })
    );
    await settle();
    t.reply(makeListing({ listing_id: 'L3' }));
    const outcome: any = await running;
    expect(outcome.lines).toContain(
      'model is still referenced by a list \u2014 its memory did not come back'
    );
    t.dispose();
  });

  it('shows a stale listing error as the listing error', async () => {
    const t = await setup();
    const listing = t.commands.execute(CommandIDs.inspectMemory);
    await settle();
    t.comm.replyError('internal', 'inspect failed');
    expect(await listing).toBeNull();
    t.render();
    expect(t.q('[data-vram-role="holders-status"]')!.textContent).toBe(
      'Could not list what holds memory: inspect failed'
    );
    t.dispose();
  });
});

describe('clearing the cell history', () => {
  it('asks first, naming the records and the notebook; Cancel keeps them', async () => {
    const { monitor } = await liveMonitorOnFakeKernel({});
    const model = monitor.current!;
    model.ingest(wire({ type: 'cells', records: [makeCellRecord({ record_id: 1 }), makeCellRecord({ record_id: 2, cell_id: 'b' })] }));
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
