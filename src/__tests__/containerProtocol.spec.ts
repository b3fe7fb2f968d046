import { parseKernelMessage, ParseResult } from '../protocol';
import { SampleMessage } from '../sampleProtocol';
import { GiB, makeSample, wire } from './fixtures';

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
    expect(sample.host.container).toEqual(CONTAINER);
  });

  it('reads null and absent (older helpers) as no limit', () => {
    expect(parsedSample(parseKernelMessage(sampleWith(null))).host.container).toBeNull();
    const data = wire(makeSample()) as any;
    delete data.host.container;
    expect(parsedSample(parseKernelMessage(data)).host.container).toBeNull();
  });

  it('keeps unknown usage and OOM count as null', () => {
    const sample = parsedSample(
      parseKernelMessage(sampleWith({ ...CONTAINER, usage_bytes: null, inactive_file_bytes: null, oom_kill_count: null }))
    );
    expect(sample.host.container).toEqual({
      ...CONTAINER,
      usage_bytes: null,
      inactive_file_bytes: null,
      oom_kill_count: null
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
    ['max', 'container']
  ])('rejects a malformed container %#', (container, fragment) => {
    const result = parseKernelMessage(sampleWith(container));
    expect(result.kind).toBe('malformed');
    if (result.kind === 'malformed') {
      expect(result.error).toContain(fragment);
    }
  });
});
