/**
 * The free-memory commands end to end in the frontend: command -> MemoryActions
 * -> queue -> KernelHelperConnection -> comm (fake kernel) -> reply ->
 * result text in the sidebar and a notification.
 */
import { CommandIDs } from '../../ui/commandIds';
import { makeFreeResult, snapshot } from '../../testing/cleanupFixtures';
import { GiB, makeHello, MiB, wire } from '../../testing/fixtures';
import { settle } from '../../testing/fakeKernel';
import { resultLines, setup } from '../../testing/cleanupCommandsFixtures';

/** The result sentence that the sidebar shows, or null when none is shown. */
function shownResult(t: {
  q: (selector: string) => HTMLElement | null;
}): string | null {
  const node = t.q('[data-vram-role="action-result"]');
  return node && !node.hidden ? node.textContent : null;
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
    // An hour later the result is still shown, with the time the reply came.
    now.mockReturnValue(replyAt + 3600_000);
    t.render();
    now.mockRestore();
    const result = t.q('[data-vram-role="action-result"]')!;
    expect(result.hidden).toBe(false);
    // The first line says when, and the lines under it do not repeat it.
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

  it('forgets the last result when the kernel restarts: it spoke of the old process', async () => {
    const t = await setup();
    const running = t.commands.execute(CommandIDs.collectGarbage);
    await settle();
    t.reply(
      makeFreeResult({
        actions_run: ['gc'],
        empty_cache: null,
        gc_collected: 0
      })
    );
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
    expect(
      queued.querySelector('[data-vram-role="cancel-action"]')
    ).not.toBeNull();

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
    expect(resultLines(t)[0]).toMatch(
      /^at \d\d:\d\d:\d\d \u2014 Empty the CUDA cache: /
    );
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
    expect(outcome.lines[0]).toContain(
      'The kernel went away before the request was sent'
    );
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
    // The kernel has restarted, so the helper is sent to it again.
    t.sessionContext.setStatus('idle');
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
