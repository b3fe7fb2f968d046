/**
 * The inspect and delete commands end to end in the frontend: the listing in
 * the Holders tab, the confirmed delete, its result and the listing again.
 */
import { CommandIDs } from '../../ui/commandIds';
import { SIDEBAR_ID } from '../../sidebar/SidebarHost';
import {
  makeDeleteResult,
  makeListing,
  snapshot
} from '../../testing/cleanupFixtures';
import { GiB, MiB } from '../../testing/fixtures';
import { settle } from '../../testing/fakeKernel';
import { resultLines, setup } from '../../testing/cleanupCommandsFixtures';
import { currentActions } from './cleanupActionsPart';

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
    const now = jest
      .spyOn(Date, 'now')
      .mockReturnValue(new Date(2024, 0, 2, 22, 18, 1).getTime());
    t.reply(makeDeleteResult({ cleared: ['last_traceback'] }));
    await settle();
    now.mockRestore();
    // The command asks for a new listing after the delete.
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
    // The fresh listing no longer has the traceback, which was cleared.
    t.reply(makeListing({ hidden: [] }));
    expect(await running).toBeNull();
    expect(t.confirmed).toHaveLength(0);
    expect(t.notes.pop()).toEqual([
      'info',
      'Nothing left to delete: the last traceback no longer holds memory in the kernel (deleted or cleared since). The Holders tab shows what does now.'
    ]);
    t.dispose();
  });

  it('deletes nothing when the new listing an out-of-memory delete asks for fails', async () => {
    // The listing L1 is on screen.
    const t = await inspected();
    const running = t.commands.execute(CommandIDs.deleteVariables, {
      names: ['model'],
      hidden: ['last_traceback'],
      fresh: true
    });
    await settle();
    expect(t.comm.lastRequest.type).toBe('inspect');
    t.comm.replyError('internal', 'walk failed');
    expect(await running).toBeNull();
    // The user is not asked about the old listing.
    expect(t.confirmed).toHaveLength(0);
    expect(t.comm.sent.filter(m => m.type === 'delete')).toHaveLength(0);
    expect(t.notes.pop()).toEqual([
      'error',
      'Could not list what holds memory: walk failed. Nothing was deleted.'
    ]);
    t.dispose();
  });

  it('lists again before asking when cells ran since the listing', async () => {
    const t = await inspected();
    currentActions(t.monitor)!.setNameSelected('np_arr', true);
    currentActions(t.monitor)!.setHiddenSelected('last_traceback', true);
    // Two cells run after the listing on screen.
    for (let i = 0; i < 2; i++) {
      t.sessionContext.setStatus('busy');
      t.sessionContext.setStatus('idle');
    }
    await settle();
    expect(currentActions(t.monitor)!.listingStale).toBe(true);
    const running = t.commands.execute(CommandIDs.deleteVariables);
    await settle();
    expect(t.comm.lastRequest.type).toBe('inspect');
    // The user is not asked before the new listing comes.
    expect(t.confirmed).toHaveLength(0);
    const fresh = makeListing({ listing_id: 'L2' });
    t.reply(fresh);
    await settle();
    expect(t.confirmed).toHaveLength(1);
    expect(t.confirmed[0].listingId).toBe('L2');
    expect(t.comm.lastRequest).toMatchObject({
      type: 'delete',
      listing_id: 'L2'
    });
    t.reply(makeDeleteResult());
    await settle();
    // This is the new listing that follows the delete.
    t.reply(makeListing({ listing_id: 'L3' }));
    await running;
    t.dispose();
  });

  it('sends no delete whose listing cells ran after while it waited in the queue', async () => {
    const t = await inspected();
    currentActions(t.monitor)!.setHiddenSelected('output_cache', true);
    // The user started a cell in the meantime.
    t.sessionContext.setStatus('busy');
    await settle();
    // The delete is asked for while the cell runs, so it waits in the queue
    // behind the cell.
    const actions = currentActions(t.monitor)!;
    const plan = (await actions.planSelection())!;
    const outcome = actions.deleteHolders(plan);
    t.sessionContext.setStatus('idle');
    await settle();
    expect(t.comm.sent.filter(m => m.type === 'delete')).toHaveLength(0);
    // Instead of deleting, it asks for a new listing.
    expect(t.comm.lastRequest.type).toBe('inspect');
    t.reply(makeListing({ listing_id: 'L2' }));
    const done = await outcome;
    expect(done.status).toBe('failed');
    expect(done.lines.join(' ')).toContain(
      'cells ran since the listing, so nothing was deleted'
    );
    t.dispose();
  });

  it('a second click while a delete is under way asks nothing and deletes once', async () => {
    const t = await inspected();
    currentActions(t.monitor)!.setNameSelected('np_arr', true);
    t.render();
    const del = t.q('[data-vram-role="delete-selected"]') as HTMLButtonElement;
    // A cell runs, so the delete waits for it.
    t.sessionContext.setStatus('busy');
    await settle();
    const first = t.commands.execute(CommandIDs.deleteVariables);
    await settle();
    t.render();
    // The button is off while the first delete is under way.
    expect(del.disabled).toBe(true);
    expect(await t.commands.execute(CommandIDs.deleteVariables)).toBeNull();
    expect(t.notes.pop()?.[1]).toContain('A delete is under way already');
    t.sessionContext.setStatus('idle');
    await settle();
    // The listing made before the cell is made again, and the user is then
    // asked once.
    expect(t.comm.lastRequest.type).toBe('inspect');
    t.reply(makeListing({ listing_id: 'L2' }));
    await settle();
    expect(t.confirmed).toHaveLength(1);
    expect(t.comm.sent.filter(m => m.type === 'delete')).toHaveLength(1);
    t.reply(makeDeleteResult());
    await settle();
    t.reply(makeListing({ listing_id: 'L3' }));
    await first;
    expect(currentActions(t.monitor)!.deleting).toBe(false);
    currentActions(t.monitor)!.setNameSelected('model', true);
    t.render();
    // The next delete may start.
    expect(del.disabled).toBe(false);
    expect(t.comm.sent.filter(m => m.type === 'delete')).toHaveLength(1);
    t.dispose();
  });

  it('says a hidden holder the kernel refused to clear as such', async () => {
    const { describeResult } = await import('./cleanupResultText');
    const { lines } = await describeResult(
      makeDeleteResult({
        refused: [
          {
            name: 'output_cache',
            reason: 'cells ran since the listing',
            hidden: true
          },
          { name: 'output_cache', reason: 'no longer defined' }
        ]
      })
    );
    expect(lines).toContain(
      'Not cleared: the output cache \u2014 cells ran since the listing'
    );
    expect(lines).toContain(
      'Not deleted: output_cache \u2014 no longer defined'
    ); // This line is about a variable of that name.
  });

  it('does nothing when the dialog is cancelled', async () => {
    const t = await inspected();
    t.setAnswer(false);
    currentActions(t.monitor)!.setNameSelected('model', true);
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
    expect(t.comm.lastRequest).toMatchObject({
      type: 'delete',
      names: ['model']
    });
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
