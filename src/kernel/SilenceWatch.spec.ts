/**
 * The silence watch: a helper that stopped sending while the panel says
 * "live" is noticed after a few heartbeats of an idle kernel, and a
 * reconnect is asked for once; samples, a busy kernel or a state other than
 * live keep it quiet.
 */
import { MIN_SILENCE_S, SilenceWatch } from './SilenceWatch';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { makeHello, makeSample, wire } from '../testing/fixtures';

function setup(heartbeat = 10) {
  let now = 1000;
  const model = new KernelMemoryModel({ historyCapacity: 10 });
  const silent: number[] = [];
  const watch = new SilenceWatch({
    model,
    onSilent: () => silent.push(now),
    now: () => now,
    checkEveryMs: 3_600_000 // the test calls check() itself
  });
  const realNow = Date.now;
  // The model stamps arrivals with Date.now(): keep it on the test's clock.
  Date.now = () => now * 1000;
  model.ingest(
    wire(
      makeHello({ config: { ...makeHello().config, heartbeat_s: heartbeat } })
    )
  );
  model.ingest(wire(makeSample()));
  const restore = () => {
    Date.now = realNow;
    watch.dispose();
  };
  return { model, watch, silent, advance: (s: number) => (now += s), restore };
}

describe('SilenceWatch', () => {
  it('asks for a reconnect once after three silent heartbeats of an idle kernel', () => {
    const t = setup(10);
    t.advance(29);
    expect(t.watch.check()).toBe(false);
    t.advance(2);
    expect(t.watch.check()).toBe(true);
    expect(t.silent).toHaveLength(1);
    expect(t.model.state).toBe('disconnected');
    expect(t.model.stateReason).toContain('No message from the kernel');
    // Not live any more: no second request while the reconnect runs.
    t.advance(60);
    expect(t.watch.check()).toBe(false);
    expect(t.silent).toHaveLength(1);
    t.restore();
  });

  it('stays quiet while samples arrive, while the kernel is busy, and before the first sample', () => {
    const t = setup(10);
    for (let i = 0; i < 10; i++) {
      t.advance(10);
      t.model.ingest(wire(makeSample({ seq: i + 2 })));
      expect(t.watch.check()).toBe(false);
    }
    t.model.setKernelBusy(true);
    t.advance(120);
    expect(t.watch.check()).toBe(false);
    t.restore();
    const fresh = new KernelMemoryModel({ historyCapacity: 10 });
    fresh.ingest(wire(makeHello()));
    const watch = new SilenceWatch({
      model: fresh,
      onSilent: () => undefined,
      checkEveryMs: 3_600_000
    });
    expect(watch.check()).toBe(false);
    watch.dispose();
  });

  it('waits at least MIN_SILENCE_S with short heartbeats', () => {
    const t = setup(1);
    expect(t.watch.silenceLimit()).toBe(MIN_SILENCE_S);
    t.advance(MIN_SILENCE_S - 1);
    expect(t.watch.check()).toBe(false);
    t.advance(2);
    expect(t.watch.check()).toBe(true);
    t.restore();
  });
});
