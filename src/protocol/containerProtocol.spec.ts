import { parseKernelMessage, ParseResult } from './messages';
import { SampleMessage } from './sample';
import { GiB, makeSample, wire } from '../testing/fixtures';

const CONTAINER = {
  limit_bytes: 4 * GiB,
  usage_bytes: 3 * GiB,
  inactive_file_bytes: GiB,
  oom_kill_count: 1,
  cgroup_version: 2
};

function sampleWith(container: unknown): unknown {
  const data = wire(makeSample()) as any;
  data.host.container = container;
  return data;
}

function parsedSample(result: ParseResult): SampleMessage {
  if (result.kind !== 'message' || result.message.type !== 'sample') {
    throw new Error(`expected a sample, got ${JSON.stringify(result)}`);
  }
  return result.message;
}

describe('parseKernelMessage: host.container', () => {
  it('reads the container limit, usage and OOM kills', () => {
    const sample = parsedSample(parseKernelMessage(sampleWith(CONTAINER)));
    // For a helper older than the swap fields, they read as null, meaning
    // unknown, and never as 0.
    expect(sample.host.container).toEqual({
      ...CONTAINER,
      swap_limit_bytes: null,
      swap_usage_bytes: null
    });
  });

  it("reads the container's swap limit and usage, 0 as 0", () => {
    const swap = {
      ...CONTAINER,
      swap_limit_bytes: 2 * GiB,
      swap_usage_bytes: GiB / 2
    };
    expect(
      parsedSample(parseKernelMessage(sampleWith(swap))).host.container
    ).toEqual(swap);
    const none = { ...CONTAINER, swap_limit_bytes: 0, swap_usage_bytes: 0 };
    expect(
      parsedSample(parseKernelMessage(sampleWith(none))).host.container
    ).toEqual(none);
    const unlimited = {
      ...CONTAINER,
      swap_limit_bytes: null,
      swap_usage_bytes: GiB
    };
    expect(
      parsedSample(parseKernelMessage(sampleWith(unlimited))).host.container
    ).toEqual(unlimited);
  });

  it('reads null and absent (older helpers) as no limit', () => {
    expect(
      parsedSample(parseKernelMessage(sampleWith(null))).host.container
    ).toBeNull();
    const data = wire(makeSample()) as any;
    delete data.host.container;
    expect(parsedSample(parseKernelMessage(data)).host.container).toBeNull();
  });

  it('keeps unknown usage and OOM count as null', () => {
    const sample = parsedSample(
      parseKernelMessage(
        sampleWith({
          ...CONTAINER,
          usage_bytes: null,
          inactive_file_bytes: null,
          oom_kill_count: null
        })
      )
    );
    expect(sample.host.container).toEqual({
      ...CONTAINER,
      usage_bytes: null,
      inactive_file_bytes: null,
      oom_kill_count: null,
      swap_limit_bytes: null,
      swap_usage_bytes: null
    });
  });

  it.each([
    [{ ...CONTAINER, limit_bytes: null }, 'limit_bytes'],
    [{ ...CONTAINER, limit_bytes: 0 }, 'limit_bytes'],
    [{ ...CONTAINER, limit_bytes: '4G' }, 'limit_bytes'],
    [{ ...CONTAINER, usage_bytes: -1 }, 'usage_bytes'],
    [{ ...CONTAINER, oom_kill_count: 1.5 }, 'oom_kill_count'],
    [{ ...CONTAINER, oom_kill_count: -2 }, 'oom_kill_count'],
    [{ ...CONTAINER, cgroup_version: 3 }, 'cgroup_version'],
    [{ ...CONTAINER, swap_limit_bytes: -1 }, 'swap_limit_bytes'],
    [{ ...CONTAINER, swap_usage_bytes: 'max' }, 'swap_usage_bytes'],
    ['max', 'container']
  ])('rejects a malformed container %#', (container, fragment) => {
    const result = parseKernelMessage(sampleWith(container));
    expect(result.kind).toBe('malformed');
    if (result.kind === 'malformed') {
      expect(result.error).toContain(fragment);
    }
  });
});

describe('parseKernelMessage: swap of the kernel and the machine', () => {
  it("reads the kernel's swapped-out bytes and the machine's swap", () => {
    const data = wire(makeSample()) as any;
    Object.assign(data.host, {
      swapped_bytes: 3 * GiB,
      swap_total_bytes: 8 * GiB,
      swap_free_bytes: 0
    });
    const host = parsedSample(parseKernelMessage(data)).host;
    expect(host.swapped_bytes).toBe(3 * GiB);
    expect(host.swap_total_bytes).toBe(8 * GiB);
    // A full swap reads as 0, not as unknown.
    expect(host.swap_free_bytes).toBe(0);
  });

  it('reads a sample of an older helper, without the swap fields, as unknown swap', () => {
    const data = wire(makeSample()) as any;
    for (const key of [
      'swapped_bytes',
      'swap_total_bytes',
      'swap_free_bytes'
    ]) {
      delete data.host[key];
    }
    const result = parseKernelMessage(data);
    expect(result.kind).toBe('message');
    const host = parsedSample(result).host;
    expect(host.swapped_bytes).toBeNull();
    expect(host.swap_total_bytes).toBeNull();
    expect(host.swap_free_bytes).toBeNull();
    expect(host.rss_bytes).toBe(data.host.rss_bytes);
  });

  it.each(['swapped_bytes', 'swap_total_bytes', 'swap_free_bytes'])(
    'rejects a malformed %s',
    key => {
      const data = wire(makeSample()) as any;
      data.host[key] = -4096;
      const result = parseKernelMessage(data);
      expect(result.kind).toBe('malformed');
      if (result.kind === 'malformed') {
        expect(result.error).toContain(`host.${key}`);
      }
    }
  );
});

describe("parseKernelMessage: the machine's OOM kill count", () => {
  it('reads it, 0 as 0', () => {
    const data = wire(makeSample()) as any;
    data.host.oom_kill_count = 41;
    expect(parsedSample(parseKernelMessage(data)).host.oom_kill_count).toBe(41);
    data.host.oom_kill_count = 0;
    expect(parsedSample(parseKernelMessage(data)).host.oom_kill_count).toBe(0);
  });

  it('reads it as null (unknown) from an older helper without the field, or where the helper could not read it', () => {
    const data = wire(makeSample()) as any;
    delete data.host.oom_kill_count;
    const result = parseKernelMessage(data);
    expect(result.kind).toBe('message');
    expect(parsedSample(result).host.oom_kill_count).toBeNull();
    data.host.oom_kill_count = null;
    expect(
      parsedSample(parseKernelMessage(data)).host.oom_kill_count
    ).toBeNull();
  });

  it.each([[-1], [1.5], ['41'], [true]])(
    'rejects a malformed count (%p)',
    value => {
      const data = wire(makeSample()) as any;
      data.host.oom_kill_count = value;
      const result = parseKernelMessage(data);
      expect(result.kind).toBe('malformed');
      if (result.kind === 'malformed') {
        expect(result.error).toContain('host.oom_kill_count');
      }
    }
  );
});
