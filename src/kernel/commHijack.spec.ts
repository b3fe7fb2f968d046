/**
 * Code in the kernel can write onto the helper's comm. Only the helper's
 * first hello on a comm says who it is; later and malformed messages are
 * counted and dropped, the panel stays live, and a fuzzed stream of 10,000
 * random and mutated messages breaks nothing.
 */
import { makeCellRecord } from '../testing/cellFixtures';
import { connectHelper, FakeKernel, settle } from '../testing/fakeKernel';
import { EVIL, makeHello, makeSample, wire } from '../testing/fixtures';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { IGNORED_WARNING_MS } from '../model/IgnoredMessages';
import { MONITOR_STATES } from '../model/MonitorState';

const CONFIG = {
  interval_s: 1,
  change_threshold_bytes: 1048576,
  heartbeat_s: 10
};

async function liveConnection() {
  const kernel = new FakeKernel();
  const { model, sessionContext } = connectHelper(kernel, {
    config: () => CONFIG
  });
  await settle();
  kernel.lastComm.receive(wire(makeHello({ pid: 4242 })));
  kernel.lastComm.receive(wire(makeSample({ seq: 1, reason: 'initial' })));
  expect(model.state).toBe('live');
  return { kernel, model, sessionContext };
}

/** A small deterministic PRNG (mulberry32): the same 10,000 messages every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ODD_VALUES: unknown[] = [
  null,
  undefined,
  true,
  false,
  0,
  -1,
  1e308,
  -1e308,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  2 ** 64,
  0.5,
  '',
  'x',
  EVIL,
  '\u0000',
  'hello',
  'sample',
  'cells',
  'reply',
  'error',
  [],
  [1, 2],
  {},
  { type: 'hello' }
];

function anyValue(next: () => number, depth = 0): unknown {
  const roll = next();
  if (depth > 3 || roll < 0.6) {
    return ODD_VALUES[Math.floor(next() * ODD_VALUES.length)];
  }
  if (roll < 0.8) {
    return Array.from({ length: Math.floor(next() * 4) }, () =>
      anyValue(next, depth + 1)
    );
  }
  const object: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 5); i > 0; i--) {
    object[
      ['type', 'seq', 'gpus', 'host', 'record', 'pid', 'x'][
        Math.floor(next() * 7)
      ]
    ] = anyValue(next, depth + 1);
  }
  return object;
}

/** A valid message with one field somewhere inside it replaced, removed or added. */
function mutated(next: () => number, valid: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(valid));
  let target: any = copy;
  for (let depth = Math.floor(next() * 4); depth > 0; depth--) {
    const keys =
      target && typeof target === 'object' ? Object.keys(target) : [];
    const inner = keys.filter(k => target[k] && typeof target[k] === 'object');
    if (!inner.length) {
      break;
    }
    target = target[inner[Math.floor(next() * inner.length)]];
  }
  const keys = Object.keys(target);
  const key = keys.length ? keys[Math.floor(next() * keys.length)] : 'extra';
  const roll = next();
  if (roll < 0.45) {
    target[key] = anyValue(next);
  } else if (roll < 0.7) {
    delete target[key];
  } else {
    target[`${key}_${Math.floor(next() * 10)}`] = anyValue(next);
  }
  return copy;
}

function fuzzMessages(count: number, seed = 20261123): unknown[] {
  const next = random(seed);
  const templates = [
    wire(makeHello()),
    wire({ ...makeHello(), protocol: 999 }),
    wire(makeSample({ seq: 7 })),
    wire({ type: 'cells', records: [makeCellRecord()] }),
    {
      type: 'reply',
      request_id: 'r-1',
      request_type: 'snapshot',
      result: { seq: 3 }
    },
    { type: 'error', request_id: null, code: 'internal', message: EVIL }
  ];
  const messages = Array.from({ length: count }, () =>
    next() < 0.3
      ? anyValue(next)
      : mutated(next, templates[Math.floor(next() * templates.length)])
  );
  // Half as built (holes, undefined, NaN: data made in the page), half as a
  // comm delivers them (through JSON).
  return messages.map((m, i) =>
    i % 2 || m === undefined ? m : JSON.parse(JSON.stringify(m))
  );
}

describe('the helper comm under abuse', () => {
  it('keeps the first hello: a second one (protocol 999) is counted and dropped', async () => {
    const { kernel, model } = await liveConnection();
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    try {
      kernel.lastComm.receive({
        type: 'hello',
        protocol: 999,
        helper_version: '9.9.9'
      });
      kernel.lastComm.receive(wire(makeHello({ pid: 1, hostname: EVIL })));
      expect(model.state).toBe('live');
      expect(model.hello?.pid).toBe(4242);
      expect(model.ignoredMessageCount).toBe(2);
      expect(
        model.notes.some(n => /Ignored 2 messages.*second hello/.test(n.text))
      ).toBe(true);
      expect(warn).toHaveBeenCalledTimes(1); // rate-limited: once for the two
      // The real helper goes on: its samples and cell records still count.
      kernel.lastComm.receive(wire(makeSample({ seq: 2, time: 1732200001 })));
      expect(model.latest?.seq).toBe(2);
    } finally {
      warn.mockRestore();
    }
  });

  it('takes the hello of a new comm after a restart', async () => {
    const { kernel, model, sessionContext } = await liveConnection();
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    kernel.lastComm.receive(wire(makeHello({ pid: 1 }))); // dropped
    sessionContext.setStatus('restarting');
    sessionContext.setStatus('idle');
    await settle();
    expect(kernel.comms).toHaveLength(2);
    jest.restoreAllMocks();
    kernel.lastComm.receive(wire(makeHello({ pid: 5151 })));
    expect(model.state).toBe('live');
    expect(model.hello?.pid).toBe(5151);
  });

  it('a malformed hello first does not use up the real one', async () => {
    const kernel = new FakeKernel();
    const { model } = connectHelper(kernel, { config: () => CONFIG });
    await settle();
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    kernel.lastComm.receive({ type: 'hello', protocol: 1 });
    // Until a hello reads, samples are not taken for what they seem.
    expect(model.state).toBe('protocol-mismatch');
    expect(model.stateReason).toContain(
      'introduced itself in a form this extension cannot read'
    );
    kernel.lastComm.receive(wire(makeSample({ seq: 1 })));
    expect([model.state, model.latest]).toEqual(['protocol-mismatch', null]);
    kernel.lastComm.receive(wire(makeHello({ pid: 4242 })));
    expect(model.state).toBe('live');
    expect(model.hello?.pid).toBe(4242);
    jest.restoreAllMocks();
  });

  it('survives 10,000 random and mutated messages with its invariants', async () => {
    const { kernel, model } = await liveConnection();
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    const started = Date.now();
    try {
      const messages = fuzzMessages(10_000);
      let accepted = 0;
      for (const data of messages) {
        const before = model.sampleCount;
        expect(() => kernel.lastComm.receive(data)).not.toThrow();
        expect(MONITOR_STATES).toContain(model.state);
        expect(model.state).toBe('live'); // only the first hello could have changed that
        expect(model.hello?.pid).toBe(4242);
        const latest = model.latest;
        expect(latest).not.toBeNull();
        expect(Number.isInteger(latest!.seq)).toBe(true);
        expect(Array.isArray(latest!.gpus)).toBe(true);
        accepted += model.sampleCount - before;
        for (const note of model.notes) {
          expect(typeof note.text).toBe('string');
        }
      }
      // Some mutations stay valid samples; most messages are dropped, each counted.
      expect(accepted).toBeGreaterThan(0);
      expect(model.ignoredMessageCount).toBeGreaterThan(1000);
      // The console hears of them at most once per IGNORED_WARNING_MS, however
      // long a loaded machine takes to feed them.
      const elapsed = Date.now() - started;
      expect(warn.mock.calls.length).toBeGreaterThanOrEqual(1);
      expect(warn.mock.calls.length).toBeLessThanOrEqual(
        1 + Math.floor(elapsed / IGNORED_WARNING_MS)
      );
      kernel.lastComm.receive(wire(makeSample({ seq: 99999 })));
      expect(model.latest?.seq).toBe(99999);
    } finally {
      warn.mockRestore();
    }
  });

  it('the model alone survives the same stream', () => {
    const model = new KernelMemoryModel({ historyCapacity: 100 });
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    try {
      for (const data of fuzzMessages(10_000, 7)) {
        expect(() => model.ingest(data)).not.toThrow();
        expect(MONITOR_STATES).toContain(model.state);
      }
    } finally {
      warn.mockRestore();
    }
  });
});

describe('arrays with holes', () => {
  it('read as malformed, not as undefined entries', () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    try {
      const sample: any = wire(makeSample({ seq: 5 }));
      sample.gpus = new Array(2); // two holes
      expect(model.ingest(sample).kind).toBe('malformed');
      expect(model.latest).toBeNull();
    } finally {
      warn.mockRestore();
    }
  });
});
